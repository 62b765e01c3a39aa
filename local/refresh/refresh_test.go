package refresh

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cgcat/cgcat/local/catalog"
	"github.com/cgcat/cgcat/local/config"
	"github.com/cgcat/cgcat/local/fixture"
	"github.com/cgcat/cgcat/local/scan"
	"github.com/cgcat/cgcat/local/store"
)

type loop struct {
	*Refresher
	cat       *catalog.Catalog
	opt       scan.Options
	roundDirs atomic.Int64 // the loop's maxDirectoriesPerRound, changed at will
	stop      func()
}

// startLoop runs a discovery loop (a serve's) over a tree of 20 projects,
// with an hour between rounds.
func startLoop(t *testing.T) *loop {
	t.Helper()
	root := fixture.TempDir(t)
	for i := range 20 {
		fixture.Project(t, filepath.Join(root, fmt.Sprintf("g%d", i%4), fmt.Sprintf("p%d", i)))
	}
	ctx, cancel := context.WithCancel(context.Background())
	st, err := store.Open(ctx, filepath.Join(fixture.TempDir(t), "data"))
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Load(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Discovery.Roots = []string{root}
	l := &loop{cat: cat, opt: scan.OptionsFrom(&cfg)}
	l.roundDirs.Store(int64(l.opt.RoundDirs))
	l.Refresher = New(st, cat, func() scan.Options {
		o := l.opt
		o.RoundDirs = int(l.roundDirs.Load())
		return o
	}, time.Hour, slog.New(slog.NewTextHandler(io.Discard, nil)))
	done := make(chan struct{})
	go func() { l.Run(ctx); close(done) }()
	l.stop = func() { cancel(); <-done }
	t.Cleanup(l.stop)
	return l
}

// waitFor polls the loop's catalog until ok holds, or fails after d.
func (l *loop) waitFor(t *testing.T, d time.Duration, what string, ok func(scan.State) bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		_ = l.cat.ForceSync(context.Background())
		if ok(l.cat.State()) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s (state %+v)", what, d, l.cat.State())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A pass another process left unfinished (a `cgcat scan` killed or
// stopped by the user) is resumed by a live serve within seconds, not at
// its next interval: coverage is whole again without anyone asking.
func TestLoopResumesAPassAnotherProcessLeft(t *testing.T) {
	l := startLoop(t)
	l.waitFor(t, 30*time.Second, "the loop's first pass", func(s scan.State) bool { return !s.LastCompleted.IsZero() && !s.PassRunning })
	first := l.cat.State().LastCompleted

	// Another process walks one directory of a new pass and goes away.
	other := l.opt
	other.SliceDirs, other.RoundDirs = 1, 1
	s, err := scan.Start(context.Background(), l.st, other)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := s.RunRound(context.Background()); err != nil || r.Finished {
		t.Fatalf("fixture: the other process's round must stop unfinished: %+v %v", r, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	l.waitFor(t, 20*time.Second, "the unfinished pass resumed and finished", func(s scan.State) bool {
		return !s.PassRunning && s.LastCompleted.After(first)
	})
}

// A round of the loop's own that stops at maxDirectoriesPerRound leaves
// the rest of the pass to the next interval (R10), not to the next poll.
func TestLoopWaitsAnIntervalAfterItsOwnRoundLimit(t *testing.T) {
	l := startLoop(t)
	l.waitFor(t, 30*time.Second, "the loop's first pass", func(s scan.State) bool { return !s.LastCompleted.IsZero() && !s.PassRunning })
	l.roundDirs.Store(3)
	l.Kick() // refresh: true
	l.waitFor(t, 20*time.Second, "the asked-for round", func(s scan.State) bool { return s.PassRunning && s.PassDirs >= 3 })
	before := l.cat.State()
	time.Sleep(retryAfter + 2*time.Second)
	_ = l.cat.ForceSync(context.Background())
	if st := l.cat.State(); st.Rounds != before.Rounds || st.PassDirs != before.PassDirs {
		t.Fatalf("the loop walked on before its interval: rounds %d → %d, directories %d → %d", before.Rounds, st.Rounds, before.PassDirs, st.PassDirs)
	}
}
