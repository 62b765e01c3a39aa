//go:build unix

package scan

import (
	"context"
	"fmt"
	"github.com/cgcat/cgcat/local/fixture"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/nofollow/nofollowtest"
	"github.com/cgcat/cgcat/local/store"
)

// swapTree is a discovery root and a private tree beside it (outside every
// discovery root, as a deny root would be):
//
//	code/               the discovery root
//	  a/b/c/  d/e/  trap/  proj/ (a project)
//	private/
//	  secretproj/       a project whose files all say "secretword"
//	  x/b/c/            a project shaped like code/a/b/c
type swapTree struct{ code, private string }

func newSwapTree(t testing.TB) swapTree {
	t.Helper()
	f := fixture.NewSwapTree(t)
	return swapTree{code: f.Code, private: f.Private}
}

// watch starts the kernel's witness over the private tree.
func (tr swapTree) watch(t testing.TB) nofollowtest.Witness {
	return nofollowtest.Watch(t, tr.private, filepath.Join(tr.private, "secretproj", "README.md"))
}

// leaks lists every record that came from the private tree: a root under
// it, or metadata that only its files hold.
func (tr swapTree) leaks(t testing.TB, st *store.Store) []string {
	t.Helper()
	var out []string
	for root, p := range records(t, st) {
		m := p.Meta
		text := strings.Join(append([]string{root, m.Name, m.Description, m.Readme}, m.Packages...), " ")
		if strings.Contains(text, "secretword") || strings.HasPrefix(root, tr.private) {
			out = append(out, fmt.Sprintf("%s (%s)", root, m.Name))
		}
	}
	return out
}

func (tr swapTree) check(t testing.TB, st *store.Store, w nofollowtest.Witness) {
	t.Helper()
	if l := tr.leaks(t, st); len(l) > 0 {
		t.Errorf("private projects in the catalog: %q", l)
	}
	if w != nil {
		if seen := w.Seen(); len(seen) > 0 {
			t.Errorf("the private tree was read (%d events): %q", len(seen), seen[:min(len(seen), 6)])
		}
	}
}

// slices runs one-directory slices until the pass ends (or max slices).
func slices1(t testing.TB, s *Scanner, max int) State {
	t.Helper()
	var st State
	for range max {
		var err error
		st, err = s.RunSlice(context.Background(), 1, time.Now().Add(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if !st.PassRunning {
			break
		}
	}
	return st
}

func startScanner(t testing.TB, st *store.Store, opt Options) *Scanner {
	t.Helper()
	s, err := Start(context.Background(), st, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestSymlinkSwapBetweenSlices is issue 11's case: with one directory per
// slice, a queued directory replaced by a symlink into a private tree
// before the next slice must not be followed, nor any queued path below
// an ancestor that became one.
func TestSymlinkSwapBetweenSlices(t *testing.T) {
	for _, follow := range []bool{false, true} {
		t.Run(fmt.Sprintf("followSymlinks=%v", follow), func(t *testing.T) {
			tr := newSwapTree(t)
			st := newStore(t)
			opt := testOptions(tr.code)
			opt.FollowSymlinks = follow
			s := startScanner(t, st, opt)
			w := tr.watch(t)
			// Slice 1 reads code/ and queues a, d, proj, trap; slice 2
			// reads a and queues a/b.
			slices1(t, s, 2)
			if q := readStateT(t, st).Queued; q < 3 {
				t.Fatalf("want directories queued after two slices, got %d", q)
			}
			trap := filepath.Join(tr.code, "trap")
			if err := os.Remove(trap); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(tr.private, "secretproj"), trap); err != nil {
				t.Fatal(err)
			}
			// The queued code/a/b now lies behind a symlink to private/x,
			// whose b/c is a project.
			if err := os.Rename(filepath.Join(tr.code, "a"), filepath.Join(tr.code, "a.moved")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(tr.private, "x"), filepath.Join(tr.code, "a")); err != nil {
				t.Fatal(err)
			}
			if end := slices1(t, s, 100); end.PassRunning {
				t.Fatalf("pass did not end: %+v", end)
			}
			tr.check(t, st, w)
			if got := presentRoots(records(t, st)); len(got) != 1 || got[0] != filepath.Join(tr.code, "proj") {
				t.Errorf("projects %q, want only code/proj", got)
			}
			// A whole new pass sees the symlinks in the listings: never
			// followed (nor, with followSymlinks, accepted: their targets
			// lie outside every discovery root).
			s.Close()
			scanAll(t, st, opt)
			tr.check(t, st, w)
		})
	}
}

// TestDiscoveryRootSwappedForSymlink: a discovery root replaced by a
// symlink into the private tree is a gap, and nothing behind it is read.
func TestDiscoveryRootSwappedForSymlink(t *testing.T) {
	tr := newSwapTree(t)
	st := newStore(t)
	scanAll(t, st, testOptions(tr.code))
	w := tr.watch(t)
	if err := os.Rename(tr.code, tr.code+".real"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(tr.private, "x"), tr.code); err != nil {
		t.Fatal(err)
	}
	scanAll(t, st, testOptions(tr.code))
	tr.check(t, st, w)
	s := readStateT(t, st)
	if c := covOf(s); c.Coverage != CoveragePartial || c.GapCount != 1 || c.Gaps[0].Path != tr.code || !strings.Contains(c.Gaps[0].Why, "symlink") {
		t.Errorf("want one gap naming the symlinked root, got %+v", s)
	}
	// The project seen before is not present any more: a direct re-check
	// refuses the symlinked path (and must not read through it).
	if p := records(t, st)[filepath.Join(tr.code, "proj")]; p == nil || p.Availability == local.Present {
		t.Errorf("project behind a symlinked root still present: %+v", p)
	}
	tr.check(t, st, w)
}

// FuzzWalkSymlinkSwap runs slices of a walk over swapTree while the tree
// changes under it: directories swapped for symlinks into the private tree
// and back, parents renamed and replaced, between slices and during them
// (a goroutine flipping a directory while a slice runs). Whatever happens,
// nothing in the private tree is listed, probed or read (the kernel's
// witness says so) and no private project reaches the catalog.
//
// ops is read two bytes at a time: an operation and its argument.
func FuzzWalkSymlinkSwap(f *testing.F) {
	f.Add(false, []byte{0, 0, 1, 3, 0, 1, 0, 1, 0, 9})
	f.Add(true, []byte{0, 2, 3, 0, 0, 1, 0, 1, 2, 3, 0, 3})
	f.Add(false, []byte{4, 3, 0, 1, 4, 5, 0, 2, 4, 0})
	f.Add(true, []byte{1, 0, 1, 4, 1, 8, 0, 0, 0, 0, 3, 1, 0, 3, 2, 0, 0, 3})
	f.Add(false, []byte{0, 0, 4, 6, 4, 1, 2, 6, 0, 1, 3, 0, 4, 7})
	f.Fuzz(func(t *testing.T, follow bool, ops []byte) {
		if len(ops) > 64 {
			ops = ops[:64]
		}
		tr := newSwapTree(t)
		st := newStore(t)
		opt := testOptions(tr.code)
		opt.FollowSymlinks = follow
		opt.Workers = 2
		s := startScanner(t, st, opt)
		w := tr.watch(t)
		m := &mutator{tr: tr}
		slice := func(n int) {
			if _, err := s.RunSlice(context.Background(), n, time.Now().Add(time.Minute)); err != nil {
				t.Fatal(err)
			}
		}
		for i := 0; i+1 < len(ops); i += 2 {
			op, arg := ops[i]%5, int(ops[i+1])
			switch op {
			case 0:
				slice(1 + arg%4)
			case 1:
				m.swap(m.dir(arg), m.target(arg/8))
			case 2:
				m.restore(m.dir(arg))
			case 3:
				m.moveParent(arg)
			case 4:
				// A slice while a goroutine flips a directory between
				// itself and a symlink into the private tree.
				stop := m.flip(m.dir(arg), m.target(arg/8))
				slice(1 + arg%8)
				stop()
			}
		}
		for range 200 {
			st, err := s.RunSlice(context.Background(), 8, time.Now().Add(time.Minute))
			if err != nil {
				t.Fatal(err)
			}
			if !st.PassRunning {
				break
			}
		}
		tr.check(t, st, w)
	})
}

// mutator changes swapTree's code/ under a running walk.
type mutator struct {
	tr swapTree
	n  int
}

var swapDirs = []string{"trap", "a", "a/b", "a/b/c", "d", "d/e", "proj"}

func (m *mutator) dir(arg int) string { return filepath.Join(m.tr.code, swapDirs[arg%len(swapDirs)]) }

func (m *mutator) target(arg int) string {
	targets := []string{"secretproj", "x", "x/b", "x/b/c", "."}
	return filepath.Join(m.tr.private, targets[arg%len(targets)])
}

// swap moves dir aside and puts a symlink to target in its place.
func (m *mutator) swap(dir, target string) {
	m.n++
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return
	}
	if os.Rename(dir, dir+".aside") == nil {
		_ = os.Symlink(target, dir)
	}
}

// restore puts a directory moved aside back in place of its symlink.
func (m *mutator) restore(dir string) {
	if fi, err := os.Lstat(dir); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		if _, err := os.Lstat(dir + ".aside"); err == nil {
			_ = os.Remove(dir)
			_ = os.Rename(dir+".aside", dir)
		}
	}
}

// moveParent renames a directory with queued children away and puts a
// symlink into the private tree (with the same shape below) in its place.
func (m *mutator) moveParent(arg int) {
	parents := []string{"a", "a/b", "d"}
	p := filepath.Join(m.tr.code, parents[arg%len(parents)])
	m.n++
	moved := fmt.Sprintf("%s.moved%d", p, m.n)
	if os.Rename(p, moved) == nil {
		_ = os.Symlink(filepath.Join(m.tr.private, "x"), p)
	}
}

// flip swaps dir and a symlink to target back and forth until stopped.
func (m *mutator) flip(dir, target string) (stop func()) {
	m.n++
	link := fmt.Sprintf("%s.link%d", dir, m.n)
	aside := dir + ".flip"
	if os.Symlink(target, link) != nil {
		return func() {}
	}
	var done atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !done.Load() {
			if os.Rename(dir, aside) != nil {
				return
			}
			_ = os.Rename(link, dir)
			_ = os.Rename(dir, link)
			_ = os.Rename(aside, dir)
		}
	}()
	return func() { done.Store(true); wg.Wait() }
}
