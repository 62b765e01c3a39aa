package scan

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/pathid"
	"github.com/cgcat/cgcat/local/store"
)

// A record forgotten while a scanner runs (`cgcat forget` from another
// process) is found again under a new id, even though the scanner read
// this machine's card for that root, naming the old id, when it started
// (the lifecycle test, seed 4242: "removed id came back").
func TestForgottenIDNeverComesBack(t *testing.T) {
	root := canon(t, t.TempDir())
	a := filepath.Join(root, "a")
	mkProject(t, a)
	st := newStore(t)
	ctx := context.Background()
	first := scanAll(t, st, testOptions(root))[a]
	slug := "catalog/codegraph/" + first.ID
	if err := st.Update(ctx, func(tx *store.Tx) error {
		return tx.PutCard(&local.Card{Slug: slug, ProjectID: first.ID, MachineID: st.MachineID(),
			RootKey: st.Identity().RootKey(pathid.Key(a))})
	}); err != nil {
		t.Fatal(err)
	}
	// A long-lived scanner (a serve's): its first pass reads the card.
	s, err := Start(ctx, st, testOptions(root))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	pass := func() {
		t.Helper()
		for {
			r, err := s.RunRound(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if r.Finished {
				return
			}
		}
	}
	pass()
	// forget, as `cgcat forget` does it: the record and its mirrored card.
	if err := st.Update(ctx, func(tx *store.Tx) error {
		tx.DeleteCard(slug)
		return tx.DeleteProject(first.ID)
	}); err != nil {
		t.Fatal(err)
	}
	pass()
	again := records(t, st)[a]
	if again == nil || again.Availability != local.Present {
		t.Fatalf("the forgotten project's root was not found again: %+v", again)
	}
	if again.ID == first.ID {
		t.Fatalf("the forgotten id %s came back for %s", first.ID, a)
	}
	if err := st.View(ctx, func(r *store.Reader) error {
		if gone, err := r.Forgotten(first.ID); err != nil || !gone {
			t.Errorf("Forgotten(%s) = %v, %v; want true", first.ID, gone, err)
		}
		if gone, err := r.Forgotten(again.ID); err != nil || gone {
			t.Errorf("Forgotten(%s) = %v, %v; want false", again.ID, gone, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
