package store

import (
	"context"
	"testing"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/ids"
	"github.com/cgcat/cgcat/local/view"
)

// A batch that only forgets a record changes the catalog as much as one
// that writes a record: catalogRevision grows by one, in the store, in
// what the batch says it commits, and in the published pointer every other
// process compares with what it has (a follower that sees the same
// revision keeps the forgotten record).
func TestDeleteOnlyBatchBumpsRevision(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	p := &local.Project{ID: ids.NewProjectID(), Root: "/code/a", RecordRevision: 1}
	if err := s.Update(ctx, func(tx *Tx) error { return tx.PutProject(p) }); err != nil {
		t.Fatal(err)
	}
	var committing uint64
	if err := s.Update(ctx, func(tx *Tx) error {
		if err := tx.DeleteProject(p.ID); err != nil {
			return err
		}
		committing = tx.CommitRevision()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if committing != 2 {
		t.Errorf("a delete-only batch says it commits revision %d, want 2", committing)
	}
	if err := s.View(ctx, func(r *Reader) error {
		if rev := r.Revision(); rev != 2 {
			t.Errorf("catalogRevision %d after a delete-only batch, want 2", rev)
		}
		if got, err := r.Project(p.ID); err != nil || got != nil {
			t.Errorf("the forgotten record is still there: %+v %v", got, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if ptr, ok := view.ReadPointer(s.DataDir()); !ok || ptr.Revision != 2 {
		t.Errorf("published pointer has revision %d (read: %v), want 2", ptr.Revision, ok)
	}
}
