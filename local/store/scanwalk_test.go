package store

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// queued is what ScanQueue.Each gives, one row per line.
type queued struct {
	seq  uint64
	item ScanItem
	bad  bool
}

func queueOf(t *testing.T, src Source) []queued {
	t.Helper()
	var got []queued
	if err := ScanQueue.Each(src, func(seq uint64, it ScanItem, err error) bool {
		if err != nil && !errors.Is(err, ErrUnreadable) {
			t.Errorf("seq %d: %v", seq, err)
		}
		got = append(got, queued{seq, it, err != nil})
		return true
	}); err != nil {
		t.Fatal(err)
	}
	return got
}

func seenOf(t *testing.T, src Source) []string {
	t.Helper()
	var got []string
	if err := ScanSeen.IDs(src, func(id string) bool { got = append(got, id); return true }); err != nil {
		t.Fatal(err)
	}
	return got
}

// The scan's doors give back what was put, the queue in sequence order
// (numbers whose decimal order is not their order among them), a batch
// sees its own writes, and Clear empties a space but keeps the next
// sequence number.
func TestScanDoorsRoundTrip(t *testing.T) {
	st := open(t)
	ctx := context.Background()
	seqs := []uint64{256, 9, 1 << 40, 0, 255, 10}
	err := st.Update(ctx, func(tx *Tx) error {
		for i, n := range seqs {
			if err := ScanQueue.Put(tx, n, ScanItem{Path: "/r/" + string(rune('a'+i)), Depth: i}); err != nil {
				return err
			}
		}
		ScanQueue.Delete(tx, 10)
		ScanQueue.SetNext(tx, 1<<40+1)
		ScanSeen.Add(tx, "p2")
		ScanSeen.Add(tx, "p1")
		if got := queueOf(t, tx); len(got) != 5 || got[0].seq != 0 || got[4].seq != 1<<40 {
			t.Errorf("a batch reads its own queue: %+v", got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []queued{
		{0, ScanItem{"/r/d", 3}, false},
		{9, ScanItem{"/r/b", 1}, false},
		{255, ScanItem{"/r/e", 4}, false},
		{256, ScanItem{"/r/a", 0}, false},
		{1 << 40, ScanItem{"/r/c", 2}, false},
	}
	err = st.View(ctx, func(r *Reader) error {
		if got := queueOf(t, r); !slices.Equal(got, want) {
			t.Errorf("queue\n got  %+v\n want %+v", got, want)
		}
		if n, err := ScanQueue.Next(r); n != 1<<40+1 || err != nil {
			t.Errorf("next %d, %v", n, err)
		}
		if got := seenOf(t, r); !slices.Equal(got, []string{"p1", "p2"}) {
			t.Errorf("seen %v", got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = st.Update(ctx, func(tx *Tx) error {
		if err := ScanQueue.Clear(tx); err != nil {
			return err
		}
		if err := ScanSeen.Clear(tx); err != nil {
			return err
		}
		if got := queueOf(t, tx); len(got) != 0 {
			t.Errorf("a batch sees its own Clear: %+v", got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = st.View(ctx, func(r *Reader) error {
		if got, seen := queueOf(t, r), seenOf(t, r); len(got) != 0 || len(seen) != 0 {
			t.Errorf("cleared: queue %+v, seen %v", got, seen)
		}
		if n, _ := ScanQueue.Next(r); n != 1<<40+1 {
			t.Errorf("Clear keeps the next sequence number: %d", n)
		}
		if st, err := r.ScanState(); err != nil || st.Pass != 0 {
			t.Errorf("the store's scan/state is not the scan's to clear: %+v %v", st, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A pass persisted by a release before the doors (package scan wrote its
// raw keys: scan/q/<seq BE> → {"p":…,"d":…}, scan/qseq → U64, scan/seen/<id>
// → "") resumes through them, and the doors write those same bytes, so a
// data dir can go back and forth mid-pass. A damaged queue row comes with
// ErrUnreadable (the scanner drops it), and a key that holds no sequence
// number is passed over.
func TestScanDoorsReadAndWriteTheOldRows(t *testing.T) {
	st := open(t)
	ctx := context.Background()
	old := map[string]string{
		"scan/q/" + string(U64(3)):   `{"p":"/code/a","d":0}`,
		"scan/q/" + string(U64(7)):   `{"p":"/code/a/b \u003c\u0026\u003e","d":2}`, // json.Marshal's escapes
		"scan/q/" + string(U64(300)): `{"p":"/code/é","d":1}`,
		"scan/q/" + string(U64(301)): `{"p":`,
		"scan/q/short":               `{"p":"/x","d":0}`,
		"scan/qseq":                  string(U64(302)),
		"scan/seen/P1":               "",
		"scan/seen/P2":               "",
	}
	err := st.Update(ctx, func(tx *Tx) error {
		for k, v := range old {
			tx.put(k, []byte(v))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []queued{
		{3, ScanItem{"/code/a", 0}, false},
		{7, ScanItem{"/code/a/b <&>", 2}, false},
		{300, ScanItem{"/code/é", 1}, false},
		{301, ScanItem{}, true},
	}
	err = st.View(ctx, func(r *Reader) error {
		if got := queueOf(t, r); !slices.Equal(got, want) {
			t.Errorf("old queue through the door\n got  %+v\n want %+v", got, want)
		}
		if n, err := ScanQueue.Next(r); n != 302 || err != nil {
			t.Errorf("old next %d, %v", n, err)
		}
		if got := seenOf(t, r); !slices.Equal(got, []string{"P1", "P2"}) {
			t.Errorf("old seen %v", got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	// Written through the doors, read as the old release read them.
	err = st.Update(ctx, func(tx *Tx) error {
		if err := ScanQueue.Clear(tx); err != nil {
			return err
		}
		if err := ScanSeen.Clear(tx); err != nil {
			return err
		}
		for _, q := range want[:3] {
			if err := ScanQueue.Put(tx, q.seq, q.item); err != nil {
				return err
			}
		}
		ScanQueue.SetNext(tx, 302)
		ScanSeen.Add(tx, "P1")
		ScanSeen.Add(tx, "P2")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	delete(old, "scan/q/"+string(U64(301)))
	delete(old, "scan/q/short")
	err = st.View(ctx, func(r *Reader) error {
		got := map[string]string{}
		if err := r.scan("scan/", func(k string, v []byte) bool { got[k] = string(v); return true }); err != nil {
			return err
		}
		for k, v := range old {
			if got[k] != v {
				t.Errorf("%q: the door wrote %q, the old release %q", k, got[k], v)
			}
		}
		if len(got) != len(old) {
			t.Errorf("rows under scan/: %q, want %q", got, old)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
