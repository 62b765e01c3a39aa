//go:build unix

package scan

import (
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cgcat/cgcat/local/marker"
)

// TestFirstPassCarriesFoundProjects: slices that found new projects wait up
// to VisibleCarry for the next commit, at most maxCarriedSlices of them, so
// a first pass of many slices opens the store to write once per
// maxCarriedSlices slices (here the whole pass fits in VisibleCarry) and
// records exactly what a pass committing every slice records.
func TestFirstPassCarriesFoundProjects(t *testing.T) {
	root := cacheTree(t)
	for i := range 30 {
		mkProject(t, filepath.Join(root, "many", fmt.Sprintf("q%02d", i)))
	}
	opt := testOptions(root)
	opt.SliceDirs = 4
	opt.SliceTime, opt.VisibleCarry = time.Hour, time.Hour
	each := opt
	each.VisibleCarry = 0
	want := runPass(t, newStore(t), each, nil)
	// At least one commit per slice that found new projects: 30/SliceDirs
	// (the other directories fall into slices in the walk's order).
	if least := (30 + opt.SliceDirs - 1) / opt.SliceDirs; want.commits < least {
		t.Fatalf("fixture: committing every slice took %d commits, want at least %d", want.commits, least)
	}
	got := runPass(t, newStore(t), opt, nil)
	per := maxCarriedSlices * opt.SliceDirs
	if most := (want.state.PassDirs + per - 1) / per; got.commits > most || got.commits < 1 {
		t.Fatalf("a first pass of %d directories whose slices may all wait committed %d times, want 1 to %d", want.state.PassDirs, got.commits, most)
	}
	sameFindings(t, "carried", got, want)
	if got.state.PassProjects != want.state.PassProjects || got.state.PassDirs != want.state.PassDirs {
		t.Fatalf("carried pass counted %d dirs / %d projects, committing every slice %d / %d",
			got.state.PassDirs, got.state.PassProjects, want.state.PassDirs, want.state.PassProjects)
	}
}

// TestCarriedNewProjectsLostToACrash: a scanner that dies with slices of new
// projects carried (walked, not committed) leaves the store at its last
// commit; the next scanner walks them again and records every project once.
func TestCarriedNewProjectsLostToACrash(t *testing.T) {
	root := cacheTree(t)
	for i := range 20 {
		mkProject(t, filepath.Join(root, "many", fmt.Sprintf("q%02d", i), "sub"))
	}
	opt := testOptions(root)
	opt.SliceDirs = 3
	opt.VisibleCarry = time.Hour
	clean := runPass(t, newStore(t), opt, nil)
	st := newStore(t)
	ctx := context.Background()
	s, err := Start(ctx, st, opt)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.RunSlice(ctx, 3, time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	carriedNew := 0
	for range 8 {
		pl, err := s.plan(ctx, 3, time.Now().Add(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if !s.canCarry(pl) {
			t.Fatal("a slice that found new projects was not carried within VisibleCarry")
		}
		carriedNew += len(pl.w.found)
		s.carried = s.withCarried(pl)
	}
	if carriedNew == 0 {
		t.Fatal("fixture: the carried slices found no project")
	}
	s.Close() // dies with eight slices carried
	r := runPass(t, st, opt, nil)
	if len(presentRoots(r.recs)) != len(presentRoots(clean.recs)) {
		t.Fatalf("after the crash %d projects present, a clean pass %d", len(presentRoots(r.recs)), len(presentRoots(clean.recs)))
	}
	for root := range clean.recs {
		if r.recs[root] == nil {
			t.Fatalf("%s lost with the carried slices", root)
		}
	}
}

// TestWalkSlicesReadEveryDirectoryOnce: slices of a parallel walk, each
// stopped by its directory budget at a random point and resumed from what
// it left pending, read every directory of the tree exactly once, however
// the workers shared their stacks. Seed printed on failure.
func TestWalkSlicesReadEveryDirectoryOnce(t *testing.T) {
	root := canon(t, t.TempDir())
	genTree(t, root, 5, 4, 17) // 780 directories
	want := map[string]bool{root: true}
	if err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() != marker.Dir {
			want[p] = true
		} else if d.IsDir() {
			return filepath.SkipDir
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewPCG(uint64(seed), 2))
	for _, workers := range []int{1, 2, 4, 7} {
		opt := testOptions(root)
		opt.Workers = workers
		s := &Scanner{opt: opt}
		read := map[string]int{}
		stack := []item{{Path: root}}
		for slice := 0; len(stack) > 0; slice++ {
			if slice > 10000 {
				t.Fatalf("seed %d, %d workers: the walk does not end", seed, workers)
			}
			res := s.walk(context.Background(), stack, rng.IntN(60), time.Now().Add(time.Hour))
			if res.dirs != len(res.consumed) {
				t.Fatalf("seed %d: dirs %d, consumed %d", seed, res.dirs, len(res.consumed))
			}
			for _, it := range res.consumed {
				read[it.Path]++
			}
			stack = res.pending
		}
		for p := range want {
			if read[p] != 1 {
				t.Fatalf("seed %d, %d workers: %s read %d times", seed, workers, p, read[p])
			}
		}
		if len(read) != len(want) {
			t.Fatalf("seed %d, %d workers: %d directories read, the tree has %d", seed, workers, len(read), len(want))
		}
	}
}

// TestCarriedSlicesKeepRejectedIndexes: an index file refused by the
// project rule (a codegraph.db too small to be one) in a slice that waits
// for the next commit is reported by the pass as when every slice commits.
func TestCarriedSlicesKeepRejectedIndexes(t *testing.T) {
	root := cacheTree(t)
	for i := range 12 {
		mkProject(t, filepath.Join(root, "many", fmt.Sprintf("q%02d", i)))
	}
	bad := filepath.Join(root, "many", "q05", "tiny")
	if err := os.MkdirAll(filepath.Join(bad, marker.Dir), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(bad, marker.Dir, marker.File), "not an index")
	opt := testOptions(root)
	opt.SliceDirs = 3
	opt.SliceTime, opt.VisibleCarry = time.Hour, time.Hour
	got := runPass(t, newStore(t), opt, nil)
	if got.commits >= got.state.PassDirs/3 {
		t.Fatalf("fixture: slices were not carried (%d commits for %d directories)", got.commits, got.state.PassDirs)
	}
	found := false
	for _, g := range got.state.Rejected { // the finished pass's
		found = found || strings.HasPrefix(g.Path, bad)
	}
	if !found || got.state.RejectedCount != 1 {
		t.Fatalf("the rejected index in a carried slice is not reported: %d rejected %+v", got.state.RejectedCount, got.state.Rejected)
	}
}

// TestWalkGoesOnWhileACommitIsInFlight: slices that are carried are walked
// while the last commit is still in flight; only a slice that is to be
// committed itself waits for it (commits stay in order). Here the first
// commit is held as it begins until the walk has found five more projects,
// more than the one slice of two directories that walked beside a commit
// before; without the change the walk waits for the held commit and never
// finds them (the test then fails after its guard, not by timing).
func TestWalkGoesOnWhileACommitIsInFlight(t *testing.T) {
	root := canon(t, t.TempDir())
	for i := range 60 {
		mkProject(t, filepath.Join(root, fmt.Sprintf("q%02d", i)))
	}
	opt := testOptions(root)
	opt.SliceDirs = 2
	opt.SliceTime, opt.VisibleCarry = time.Hour, time.Hour
	st := newStore(t)
	ctx := context.Background()
	s, err := Start(ctx, st, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var found, target atomic.Int32
	more := make(chan struct{})
	var once sync.Once
	s.onFound = func(string) {
		if n, want := found.Add(1), target.Load(); want > 0 && n >= want {
			once.Do(func() { close(more) })
		}
	}
	var held atomic.Bool
	s.beforeCommit = func() {
		if held.Swap(true) {
			return
		}
		target.Store(found.Load() + 5)
		select {
		case <-more:
		case <-time.After(time.Minute):
			t.Error("the walk found no more projects while a commit was in flight: it waited for it")
		}
	}
	for {
		r, err := s.RunRound(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if r.Finished {
			break
		}
	}
	if !held.Load() {
		t.Fatal("fixture: no commit")
	}
	if got := readStateT(t, st).PassProjects; got != 60 {
		t.Fatalf("the pass counted %d projects, want 60", got)
	}
	if recs := records(t, st); len(recs) != 60 {
		t.Fatalf("the catalog holds %d records, want 60", len(recs))
	}
}
