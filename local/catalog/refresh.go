package catalog

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/cgcat/cgcat/local/lease"
	"github.com/cgcat/cgcat/local/scan"
)

// Refresher keeps discovery going while a server lives (R10, R11): a round
// at start, then one every interval, or sooner when asked. Only the process
// holding the scan lease scans; the others notice its commits through Sync.
// A refresh asked of a process that does not hold the lease is left in a
// request file that the holder's loop picks up.
type Refresher struct {
	cat      *Catalog
	opt      scan.Options
	interval time.Duration
	log      *slog.Logger
	kick     chan struct{}
	// sliceMu keeps this process's own tool-call slices from racing its loop.
	sliceMu sync.Mutex

	errMu   sync.Mutex
	lastErr error // the last discovery failure, cleared by a success
}

// LastError is the last discovery failure of this process (nil once a round
// succeeds again), for tool answers and doctor to show.
func (r *Refresher) LastError() error {
	r.errMu.Lock()
	defer r.errMu.Unlock()
	return r.lastErr
}

func (r *Refresher) setErr(err error) {
	r.errMu.Lock()
	r.lastErr = err
	r.errMu.Unlock()
}

// NewRefresher prepares discovery for cat with the walk options and interval.
func NewRefresher(cat *Catalog, opt scan.Options, interval time.Duration, log *slog.Logger) *Refresher {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Refresher{cat: cat, opt: opt, interval: interval, log: log, kick: make(chan struct{}, 1)}
}

func (r *Refresher) requestFile() string {
	return filepath.Join(r.cat.st.DataDir(), "refresh.request")
}

// Kick asks for a bounded refresh soon: this process's loop is woken, and a
// request is left for whichever process holds the scan lease.
func (r *Refresher) Kick() {
	_ = os.WriteFile(r.requestFile(), []byte(time.Now().UTC().Format(time.RFC3339Nano)+"\n"), 0o644)
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// Run loops until ctx ends. It never returns an error: a failed round is
// logged and retried at the next tick.
func (r *Refresher) Run(ctx context.Context) {
	poll := time.NewTicker(500 * time.Millisecond)
	defer poll.Stop()
	next := time.Now() // a round at start
	lastReq := modTime(r.requestFile())
	for {
		if ctx.Err() != nil {
			return // a kick or tick may win the select after cancellation
		}
		if !time.Now().Before(next) {
			r.round(ctx)
			next = time.Now().Add(r.interval)
		}
		select {
		case <-ctx.Done():
			return
		case <-r.kick:
			next = time.Now()
		case <-poll.C:
			if m := modTime(r.requestFile()); m.After(lastReq) {
				lastReq = m
				next = time.Now()
			}
			_ = r.cat.Sync(ctx)
		}
	}
}

func modTime(p string) time.Time {
	fi, err := os.Stat(p)
	if err != nil {
		return time.Time{}
	}
	return fi.ModTime()
}

// round runs one budgeted round if this process can take the scan lease.
func (r *Refresher) round(ctx context.Context) {
	r.sliceMu.Lock()
	defer r.sliceMu.Unlock()
	s, err := scan.TryStart(ctx, r.cat.st, r.opt)
	if errors.Is(err, lease.ErrHeld) {
		r.log.Debug("another process is scanning")
		return
	}
	if err != nil {
		r.log.Warn("discovery could not start", "err", err)
		r.setErr(err)
		return
	}
	defer s.Close()
	s.Progress = func(scan.State) { _ = r.cat.ForceSync(ctx) }
	rd, err := s.RunRound(ctx)
	if err != nil && ctx.Err() == nil {
		r.log.Warn("discovery round failed", "err", err)
		r.setErr(err)
		return
	}
	r.setErr(nil)
	r.log.Debug("discovery round", "dirs", rd.Dirs, "projects", rd.Projects, "finished", rd.Finished, "truncated", rd.Truncated)
}

// SliceNow runs one slice within budget for a caller that has nothing to
// show yet (an empty catalog, R11). If another process or this process's
// loop holds the lease, it waits for their commits instead, up to budget.
func (r *Refresher) SliceNow(ctx context.Context, budget time.Duration) {
	until := time.Now().Add(budget)
	if r.sliceMu.TryLock() {
		s, err := scan.TryStart(ctx, r.cat.st, r.opt)
		if err == nil {
			_, err = s.RunSlice(ctx, r.opt.SliceDirs, until)
			s.Close()
			r.sliceMu.Unlock()
			if err != nil {
				r.log.Warn("discovery slice failed", "err", err)
			}
			r.setErr(err)
			_ = r.cat.ForceSync(ctx)
			return
		}
		if !errors.Is(err, lease.ErrHeld) {
			r.setErr(err)
		}
		r.sliceMu.Unlock()
	}
	for time.Now().Before(until) && r.cat.Len() == 0 {
		select {
		case <-ctx.Done():
			return
		case <-time.After(25 * time.Millisecond):
		}
		_ = r.cat.Sync(ctx)
	}
}
