package outbox

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/store"
)

func TestEnqueueCoalescesAndSurvivesReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	id := store.NewProjectID()
	other := store.NewProjectID()
	now := time.Now()
	for rev := uint64(1); rev <= 3; rev++ {
		err := st.Update(ctx, func(tx *store.Tx) error {
			p := &local.Project{ID: id, Root: "/code/a", RecordRevision: rev}
			if err := tx.PutProject(p); err != nil {
				return err
			}
			Enqueue(tx, id, rev, now)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	_ = st.Update(ctx, func(tx *store.Tx) error { Enqueue(tx, other, 1, now); return nil })

	st2, err := store.Open(ctx, dir) // a restart
	if err != nil {
		t.Fatal(err)
	}
	var rows []Row
	_ = st2.View(ctx, func(r *store.Reader) error {
		rows, err = Pending(r, 0)
		return err
	})
	if len(rows) != 2 {
		t.Fatalf("want 2 coalesced rows, got %+v", rows)
	}
	var mine Row
	for _, r := range rows {
		if r.ProjectID == id {
			mine = r
		}
	}
	if mine.RecordRevision != 3 {
		t.Fatalf("the newest change must win: %+v", mine)
	}

	// A row replaced after it was read is not removed by Done.
	_ = st2.Update(ctx, func(tx *store.Tx) error {
		p, _ := tx.Project(id)
		p.RecordRevision = 4
		if err := tx.PutProject(p); err != nil {
			return err
		}
		Enqueue(tx, id, 4, now)
		return nil
	})
	_ = st2.Update(ctx, func(tx *store.Tx) error { return Done(tx, mine) })
	_ = st2.Update(ctx, func(tx *store.Tx) error { return Retry(tx, mine, errors.New("stale")) })
	_ = st2.View(ctx, func(r *store.Reader) error {
		rows, err = Pending(r, 0)
		return err
	})
	for _, r := range rows {
		if r.ProjectID == id && (r.RecordRevision != 4 || r.Attempts != 0) {
			t.Fatalf("a newer row must survive Done and Retry of an older one: %+v", r)
		}
	}
	if len(rows) != 2 {
		t.Fatalf("rows: %+v", rows)
	}
}
