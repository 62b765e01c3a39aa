package outbox

import (
	"context"
	"errors"
	"testing"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/ids"
	"github.com/cgcat/cgcat/local/store"
)

// update runs fn in one batch and fails the test on any error, fn's own
// included: an error from Done or Retry must never go unseen.
func update(t *testing.T, st *store.Store, fn func(tx *store.Tx) error) {
	t.Helper()
	if err := st.Update(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

// pending returns the rows by project id.
func pending(t *testing.T, st *store.Store) map[string]Row {
	t.Helper()
	var rows []Row
	err := st.View(context.Background(), func(r *store.Reader) error {
		var err error
		rows, err = Pending(r, 0)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]Row{}
	for _, r := range rows {
		if _, dup := out[r.ProjectID]; dup {
			t.Fatalf("two rows for %s", r.ProjectID)
		}
		out[r.ProjectID] = r
	}
	return out
}

// putRevision writes project id at rev and enqueues its card, as a scan
// does, in one batch.
func putRevision(t *testing.T, st *store.Store, id string, rev uint64) {
	t.Helper()
	update(t, st, func(tx *store.Tx) error {
		if err := tx.PutProject(&local.Project{ID: id, Root: "/code/" + id, RecordRevision: rev}); err != nil {
			return err
		}
		Enqueue(tx, id, rev)
		return nil
	})
}

func TestEnqueueCoalescesAndSurvivesReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	id := ids.NewProjectID()
	other := ids.NewProjectID()
	for rev := uint64(1); rev <= 3; rev++ {
		putRevision(t, st, id, rev)
	}
	update(t, st, func(tx *store.Tx) error { Enqueue(tx, other, 1); return nil })

	st2, err := store.Open(ctx, dir) // a restart
	if err != nil {
		t.Fatal(err)
	}
	rows := pending(t, st2)
	if len(rows) != 2 {
		t.Fatalf("want 2 coalesced rows, got %+v", rows)
	}
	mine := rows[id]
	if mine.RecordRevision != 3 || mine.Attempts != 0 {
		t.Fatalf("the newest change must win: %+v", mine)
	}
	depth := -1
	if err := st2.View(ctx, func(r *store.Reader) error { depth = Depth(r); return nil }); err != nil || depth != 2 {
		t.Fatalf("depth %d (%v), want 2", depth, err)
	}

	// A row replaced after it was read is neither removed by Done nor
	// charged by Retry.
	putRevision(t, st2, id, 4)
	update(t, st2, func(tx *store.Tx) error { return Done(tx, mine) })
	update(t, st2, func(tx *store.Tx) error { return Retry(tx, mine, errors.New("stale")) })
	rows = pending(t, st2)
	if r, ok := rows[id]; !ok || r.RecordRevision != 4 || r.Attempts != 0 || r.LastErr != "" {
		t.Fatalf("a newer row must survive Done and Retry of an older one: %+v", rows)
	}
	if len(rows) != 2 {
		t.Fatalf("rows: %+v", rows)
	}

	// The row that is still current: Retry charges it, Done removes it.
	cur := rows[id]
	update(t, st2, func(tx *store.Tx) error { return Retry(tx, cur, errors.New("gbrain timed out")) })
	update(t, st2, func(tx *store.Tx) error { return Retry(tx, cur, errors.New("gbrain timed out again")) })
	rows = pending(t, st2)
	if r := rows[id]; r.Attempts != 2 || r.LastErr != "gbrain timed out again" || r.RecordRevision != 4 {
		t.Fatalf("Retry of the current row must count the attempt and keep the cause: %+v", r)
	}
	// A retried row is still the same row: Done takes it.
	update(t, st2, func(tx *store.Tx) error { return Done(tx, rows[id]) })
	rows = pending(t, st2)
	if _, ok := rows[id]; ok || len(rows) != 1 {
		t.Fatalf("Done of the current row must remove it (and only it): %+v", rows)
	}
	if _, ok := rows[other]; !ok {
		t.Fatalf("the other project's row went too: %+v", rows)
	}
	// Done and Retry of a row that is gone: nothing to do, no error.
	update(t, st2, func(tx *store.Tx) error { return Done(tx, cur) })
	update(t, st2, func(tx *store.Tx) error { return Retry(tx, cur, errors.New("late")) })
	if rows := pending(t, st2); len(rows) != 1 {
		t.Fatalf("rows after Done/Retry of a removed row: %+v", rows)
	}
}

// A row queued again by hand (`gbrain sync --full`) in a batch that changes
// no record takes the same Seq and record revision as the row before it:
// only its Enqueued time tells the two apart. Done and Retry of the row the
// projector read must leave the newer one alone.
func TestRequeueWithTheSameSeqIsANewRow(t *testing.T) {
	st, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	id := ids.NewProjectID()
	putRevision(t, st, id, 1)
	update(t, st, func(tx *store.Tx) error { Enqueue(tx, id, 1); return nil })
	read := pending(t, st)[id]
	again := read
	for again.Enqueued.Equal(read.Enqueued) { // the clock moved on
		update(t, st, func(tx *store.Tx) error { Enqueue(tx, id, 1); return nil })
		again = pending(t, st)[id]
	}
	if again.Seq != read.Seq || again.RecordRevision != read.RecordRevision {
		t.Fatalf("the case needs two rows with one Seq and record revision: %+v, %+v", read, again)
	}
	update(t, st, func(tx *store.Tx) error { return Done(tx, read) })
	update(t, st, func(tx *store.Tx) error { return Retry(tx, read, errors.New("stale")) })
	got, ok := pending(t, st)[id]
	if !ok || !got.Enqueued.Equal(again.Enqueued) || got.Attempts != 0 || got.LastErr != "" {
		t.Fatalf("the row queued again must survive Done and Retry of the one read before it: %+v (ok %v), want %+v", got, ok, again)
	}
}
