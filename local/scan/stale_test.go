package scan

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
)

// A round whose settings stop being in force (the config file changed
// under a serve: maxDepth lowered, a root removed) stops before committing
// anything walked after the change. Lifecycle test seed 390298571, step
// 757: a serve's round begun under maxDepth 5 went on after maxDepth 2 was
// in force, and discovered a project at depth 5 that had been moved there
// after the change (R37, R9).
func TestRoundStopsWhenItsSettingsAreNoLongerInForce(t *testing.T) {
	root := t.TempDir()
	near := filepath.Join(root, "near")
	deep := filepath.Join(root, "a", "b", "c", "deep")
	mkProject(t, near)
	mkProject(t, deep)
	st := newStore(t)
	opt := testOptions(root)
	opt.SliceDirs = 1
	var checks atomic.Int32
	opt.Stale = func() bool { return checks.Add(1) > 2 } // changes during the third slice
	s, err := Start(context.Background(), st, opt)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.RunRound(context.Background())
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	if r.Finished || r.Truncated != "settings changed" || r.Dirs != 2 {
		t.Fatalf("round: %+v", r)
	}
	if p := records(t, st)[canon(t, deep)]; p != nil {
		t.Fatalf("a round went on walking after its settings went out of force: %s found", deep)
	}
	// The slices walked before the change may have been committed (the pass
	// is then running) or carried and dropped with the rest (no pass was
	// ever recorded): which one depends on how long the slices took. Either
	// way the pass must not be finished.
	if state := readStateT(t, st); !state.LastCompleted.IsZero() || (state.Pass != 0 && !state.PassRunning) {
		t.Fatalf("the pass must stay unfinished: %+v", state)
	}
}
