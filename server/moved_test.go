package server

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/ids"
	"github.com/cgcat/cgcat/local/store"
	"github.com/cgcat/cgcat/local/view"
)

// newestBase is the newest published base file of a data dir.
func newestBase(t *testing.T, dataDir string) string {
	t.Helper()
	bases, _ := filepath.Glob(filepath.Join(view.Dir(dataDir), "base-*"))
	if len(bases) == 0 {
		t.Fatalf("no base in %s", dataDir)
	}
	slices.Sort(bases)
	return bases[len(bases)-1]
}

// A base restored over the one the answer was read from while the answer
// was being read (after the call's sync): the answer may hold the other
// file's records, so it is read again, from a view that reloaded.
func TestAnswerReadAgainWhenTheBaseChangedMeanwhile(t *testing.T) {
	ctx := context.Background()
	fx := newFixture(t, time.Now)
	// Another data dir's base, with records of its own.
	other := t.TempDir()
	st, err := store.Open(ctx, other)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Update(ctx, func(tx *store.Tx) error {
		for _, n := range []string{"alpha-svc", "omega", "theta", "iota"} {
			p := &local.Project{ID: ids.NewProjectID(), Root: "/elsewhere/" + n, RecordRevision: 1, Meta: local.Metadata{Name: n}}
			if err := tx.PutProject(p); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	foreign, err := os.ReadFile(newestBase(t, other))
	if err != nil {
		t.Fatal(err)
	}
	ours := newestBase(t, fx.dataDir)
	args := ProjectsArgs{Query: "alpha-svc", Limit: 5}
	tries := 0
	e, err := fx.open.onSoundView(func() (*Envelope, error) {
		tries++
		e, err := fx.open.projects(ctx, args)
		if tries == 1 {
			// Restored in place (cp, rsync --inplace) while this answer
			// was read.
			if err := os.WriteFile(ours, foreign, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return e, err
	})
	if err != nil {
		t.Fatal(err)
	}
	if tries != 2 {
		t.Fatalf("answered %d times, want 2 (once more after the base changed)", tries)
	}
	if len(e.Projects) == 0 || e.Projects[0].Name != "alpha-svc" || e.Projects[0].ProjectPath == nil || *e.Projects[0].ProjectPath != filepath.Join(fx.root, "alpha") {
		t.Fatalf("the answer read again: %+v", e.Projects)
	}
	// And a call after it answers once, from the reloaded view.
	tries = 0
	if _, err := fx.open.onSoundView(func() (*Envelope, error) { tries++; return fx.open.projects(ctx, args) }); err != nil || tries != 1 {
		t.Fatalf("the next call: %d tries, %v", tries, err)
	}
}
