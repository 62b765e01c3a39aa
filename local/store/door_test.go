package store

import (
	"context"
	"errors"
	"slices"
	"testing"
)

type doorRow struct {
	N int `json:"n"`
}

// A door's rows live under its owner's space only, a batch sees its own
// writes, and a row that cannot be decoded says so (ErrUnreadable) instead
// of passing for a missing one.
func TestTableAndRowDoors(t *testing.T) {
	st := open(t)
	ctx := context.Background()
	states := ProjectionStates[doorRow]()
	last := ProjectionMeta[doorRow](MetaLastSync)
	err := st.Update(ctx, func(tx *Tx) error {
		for i, id := range []string{"b", "a", "c"} {
			if err := states.Put(tx, id, doorRow{N: i}); err != nil {
				return err
			}
		}
		states.Delete(tx, "c")
		if v, ok, err := states.Get(tx, "a"); err != nil || !ok || v.N != 1 {
			t.Errorf("a batch reads its own write: %+v %v %v", v, ok, err)
		}
		tx.put(prefixProjection+"bad", []byte("{"))
		return last.Put(tx, doorRow{N: 7})
	})
	if err != nil {
		t.Fatal(err)
	}
	err = st.View(ctx, func(r *Reader) error {
		var got []string
		var bad error
		if err := states.Each(r, func(id string, v doorRow, err error) bool {
			got = append(got, id)
			if err != nil {
				bad = err
			}
			return true
		}); err != nil {
			return err
		}
		if !slices.Equal(got, []string{"a", "b", "bad"}) {
			t.Errorf("rows in id order, the deleted one gone: %v", got)
		}
		if !errors.Is(bad, ErrUnreadable) {
			t.Errorf("an undecodable row says so: %v", bad)
		}
		if _, ok, err := states.Get(r, "bad"); ok || !errors.Is(err, ErrUnreadable) {
			t.Errorf("Get of an undecodable row: ok %v, err %v", ok, err)
		}
		if _, ok, err := states.Get(r, "c"); ok || err != nil {
			t.Errorf("Get of a deleted row: ok %v, err %v", ok, err)
		}
		if n := states.Len(r); n != 3 {
			t.Errorf("Len %d, want 3", n)
		}
		if v, ok, err := last.Get(r); !ok || err != nil || v.N != 7 {
			t.Errorf("the single row: %+v %v %v", v, ok, err)
		}
		if n := Outbox.Len(r); n != 0 {
			t.Errorf("another owner's door sees %d rows of projection's", n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
