package scan

import (
	"context"
	"fmt"
	"github.com/cgcat/cgcat/local/store"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestPipelinedSlicesRescan walks many slices so each commit runs while the
// next slice walks and meets projects: the commit's bookkeeping (metadata
// stamps) and the walk's reads of it must not race. Meant for -race (CI runs
// this package under it): passes over an unchanged tree are where the walk
// reads the stamps earlier commits wrote. A release build crashed here with
// "concurrent map read and map write" on a re-scan of 111k directories.
func TestPipelinedSlicesRescan(t *testing.T) {
	root := canon(t, t.TempDir())
	n := 0
	for a := range 10 {
		for b := range 20 {
			for c := range 20 {
				dir := filepath.Join(root, fmt.Sprintf("a%d", a), fmt.Sprintf("b%d", b), fmt.Sprintf("c%d", c))
				if c%5 == 0 {
					mkProject(t, dir)
					n++
				} else if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	opt := testOptions(root)
	opt.SliceDirs = 500
	opt.Workers = 4
	st := newStore(t)
	for pass := range 4 {
		recs := scanAll(t, st, opt)
		if got := len(presentRoots(recs)); got != n {
			t.Fatalf("pass %d: %d projects present, want %d", pass, got, n)
		}
		for _, p := range recs {
			if p.MetaStamp == 0 {
				t.Fatalf("pass %d: %s has no metadata stamp", pass, p.Root)
			}
		}
	}
}

// TestCommitWhileWalking holds the pipelined design to its rule directly: a
// slice's commit (which records the stamps of what it found) runs while
// the next slice's walk reads those stamps, here made to overlap on purpose
// instead of by timing.
func TestCommitWhileWalking(t *testing.T) {
	root := canon(t, t.TempDir())
	var projects []string
	for i := range 30 {
		dir := filepath.Join(root, fmt.Sprintf("p%02d", i))
		mkProject(t, dir)
		projects = append(projects, dir)
	}
	opt := testOptions(root)
	opt.SliceDirs = 4
	st := newStore(t)
	ctx := context.Background()
	s, err := Start(ctx, st, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	done := make(chan error, 1)
	go func() {
		for range 6 { // passes: every commit writes stamps
			for {
				r, err := s.RunRound(ctx)
				if err != nil {
					done <- err
					return
				}
				if r.Finished {
					break
				}
			}
		}
		done <- nil
	}()
	exclude := map[string]bool{}
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			return
		default:
		}
		for _, p := range projects {
			if _, proj, _, _ := s.readDir(item{Path: p, Depth: 1}, exclude, time.Now()); proj == nil {
				t.Fatalf("%s: not read as a project", p)
			}
		}
	}
}

// TestFencedRoundsResume takes the scan over (a newer fencing epoch, as a
// successor stealing a frozen holder's lease does) at random moments, so a
// commit in flight fails while the next slice is planned: the failing commit
// must leave the in-memory stack to the planner (under -race a write from
// both was caught in the fault suite). A later scanner still finds every
// project.
func TestFencedRoundsResume(t *testing.T) {
	root := canon(t, t.TempDir())
	n := 0
	for a := range 8 {
		for b := range 15 {
			dir := filepath.Join(root, fmt.Sprintf("a%d", a), fmt.Sprintf("b%02d", b))
			if b%3 == 0 {
				mkProject(t, dir)
				n++
			} else if err := os.MkdirAll(filepath.Join(dir, "x", "y"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	opt := testOptions(root)
	opt.SliceDirs = 5
	st := newStore(t)
	ctx := context.Background()
	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewPCG(uint64(seed), 1))
	fenced := 0
	for range 12 {
		s, err := Start(ctx, st, opt)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		stolen := make(chan struct{})
		steal := time.AfterFunc(time.Duration(rng.IntN(30_000))*time.Microsecond, func() {
			_ = st.Update(ctx, func(tx *store.Tx) error { tx.BumpFence(fenceName); return nil })
			close(stolen)
		})
		for {
			r, err := s.RunRound(ctx)
			if err != nil {
				fenced++
				break
			}
			if r.Finished {
				break
			}
		}
		if !steal.Stop() {
			<-stolen // the takeover ran (or runs now): let it finish first
		}
		s.Close()
	}
	recs := scanAll(t, st, opt)
	if got := len(presentRoots(recs)); got != n {
		t.Fatalf("seed %d: %d projects present after %d taken-over scanners, want %d", seed, got, fenced, n)
	}
	if fenced == 0 {
		t.Logf("seed %d: no scanner was taken over mid-pass this time", seed)
	}
}

// TestCancelledRoundsResume cancels rounds at random moments (a serve
// shutting down, a tool call's budget running out) and then checks that
// the pass they left behind still finds every project.
func TestCancelledRoundsResume(t *testing.T) {
	root := canon(t, t.TempDir())
	n := 0
	for a := range 8 {
		for b := range 15 {
			dir := filepath.Join(root, fmt.Sprintf("a%d", a), fmt.Sprintf("b%02d", b))
			if b%3 == 0 {
				mkProject(t, dir)
				n++
			} else if err := os.MkdirAll(filepath.Join(dir, "x", "y"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	opt := testOptions(root)
	opt.SliceDirs = 5
	st := newStore(t)
	s, err := Start(context.Background(), st, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewPCG(uint64(seed), 1))
	for range 40 {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(time.Duration(rng.IntN(20_000))*time.Microsecond, cancel)
		_, _ = s.RunRound(ctx) // cancelled anywhere: an error or a truncated round
		cancel()
	}
	for {
		r, err := s.RunRound(context.Background())
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if r.Finished {
			break
		}
	}
	if got := len(presentRoots(records(t, st))); got != n {
		t.Fatalf("seed %d: %d projects present after cancelled rounds, want %d", seed, got, n)
	}
}
