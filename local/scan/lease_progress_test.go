package scan

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/cgcat/cgcat/local/lease"
	"github.com/cgcat/cgcat/local/store"
)

// A scan stuck inside its walk (here: in the hook that hears of each
// project found, as a system call on a hung mount would be) keeps beating
// its lease from another goroutine, but makes no progress: it holds the
// lease no longer than StaleAfter past its last progress (issue 23, case
// 1). Another scanner takes over and finishes the pass; the stuck one,
// when it wakes, cannot commit (its fence is stale).
func TestStuckScanLosesItsLease(t *testing.T) {
	old := lease.StaleAfter
	lease.StaleAfter = 300 * time.Millisecond
	defer func() { lease.StaleAfter = old }()
	dir := canon(t, t.TempDir())
	for _, n := range []string{"a", "b", "c"} {
		mkProject(t, filepath.Join(dir, n))
	}
	st := newStore(t)
	ctx := context.Background()
	opt := testOptions(dir)

	stuck, err := Start(ctx, st, opt)
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	entered := make(chan struct{})
	stuck.onFound = func(string) {
		select {
		case <-entered:
		default:
			close(entered)
		}
		<-release
	}
	stuckErr := make(chan error, 1)
	go func() {
		_, err := stuck.RunRound(ctx)
		stuckErr <- err
	}()
	<-entered

	// Another scanner waits for the lease and gets it (a hang detector
	// bounds the wait, far past StaleAfter).
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	next, err := Start(wctx, st, opt)
	if err != nil {
		close(release)
		t.Fatalf("the lease of a scan that makes no progress was never taken over: %v", err)
	}
	for {
		r, err := next.RunRound(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if r.Finished {
			break
		}
	}
	if err := next.Close(); err != nil {
		t.Fatal(err)
	}
	if got := len(records(t, st)); got != 3 {
		t.Fatalf("the scan that took over recorded %d projects, want 3", got)
	}
	close(release)
	if err := <-stuckErr; !errors.Is(err, store.ErrFenced) {
		t.Fatalf("the stuck scan woke and its round ended with %v, want a fencing error", err)
	}
	stuck.Close()
}
