// Package refresh is the discovery loop of a long-running process. It
// runs a round whenever one is due (a root no finished pass covered, an
// unfinished pass, or a last pass older than refreshIntervalSeconds) or
// asked for (Kick), and one short slice for a call that finds the catalog
// empty (SliceNow, R11); a process started right after a finished pass does
// not walk everything again. It ties the scanner (package scan) to the read
// model (package catalog): after each slice the catalog catches up with
// what was committed. The store it scans into is handed to [New] by the
// composition root (cmd/cgcat), never taken from the catalog; the
// answering layer sees the loop only as server.Discovery, and what every
// process of the data dir does as [Processes].
//
// It owns the timing and nothing else. Only the process holding the scan
// lease walks; the others see its work through what it publishes, and a
// Kick in any process leaves a request file that the holder's loop picks
// up. A pid file under dataDir/refreshers says a loop is alive ([Alive]):
// an answer can say who resumes an unfinished pass (a live loop within
// seconds, else the next `cgcat scan`); only a live lease holder
// ([Scanning]) makes it "running". The first round can be held back until GBrain's card mirror
// is primed (HoldFirstRound), so that a fresh store gives this machine's
// projects their old ids back.
//
// It also makes the catalog follow the disk (live.go): the process holding
// the watch lease keeps file watches (package watch) and turns their events
// into patches (scan.RunPatch), publishing in dataDir/watch.state whether
// every change has been applied (Follows), which coverage rests on.
//
// It never decides what a round or a patch finds (package scan does),
// never writes the store itself, and knows nothing of MCP or GBrain beyond
// waiting on the channel it is handed.
package refresh

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/catalog"
	"github.com/cgcat/cgcat/local/lease"
	"github.com/cgcat/cgcat/local/pathid"
	"github.com/cgcat/cgcat/local/scan"
	"github.com/cgcat/cgcat/local/store"
)

// Refresher runs discovery rounds for one process. A refresh asked of a
// process that does not hold the lease is left in a request file that the
// holder's loop picks up.
type Refresher struct {
	st       *store.Store // what scans write (the composition root's store)
	cat      *catalog.Catalog
	opt      func() scan.Options // the walk settings in force now (the config may change)
	interval time.Duration
	log      *slog.Logger
	kick     chan struct{}
	// sliceMu keeps this process's own tool-call slices from racing its loop.
	sliceMu sync.Mutex
	// gate holds the first discovery back (gate.go).
	gate gate

	errMu   sync.Mutex
	lastErr error // the last discovery failure, cleared by a success
	running bool  // this process is in a round or slice now
	// stopped: this process's last round left the pass unfinished (a round
	// limit, a failure). Such a pass waits for the next interval (R10); a
	// pass left unfinished by another process (a killed `cgcat scan`) is
	// resumed within seconds. Only the loop's goroutine (Run, round, due)
	// reads or writes it.
	stopped bool
	// live is the watching side (live.go), the loop's goroutine's alone.
	live liveState
}

// Running reports whether this process is scanning right now.
func (r *Refresher) Running() bool {
	r.errMu.Lock()
	defer r.errMu.Unlock()
	return r.running
}

func (r *Refresher) setRunning(v bool) {
	r.errMu.Lock()
	r.running = v
	r.errMu.Unlock()
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

// New prepares discovery of st, whose published catalog cat follows; opt
// gives the walk settings in force at each round.
func New(st *store.Store, cat *catalog.Catalog, opt func() scan.Options, interval time.Duration, log *slog.Logger) *Refresher {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Refresher{st: st, cat: cat, opt: opt, interval: interval, log: log, kick: make(chan struct{}, 1), live: newLiveState()}
}

func (r *Refresher) requestFile() string {
	return filepath.Join(r.st.DataDir(), "refresh.request")
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
// logged and retried later. A round runs when one is due (see due), when
// asked (Kick, or a request file left by another process), and otherwise
// never: a process that starts right after a finished pass does not walk
// everything again.
func (r *Refresher) Run(ctx context.Context) {
	defer register(r.st.DataDir())()
	defer r.stopWatching()
	poll := time.NewTicker(500 * time.Millisecond)
	defer poll.Stop()
	roots := time.NewTicker(2 * time.Second)
	defer roots.Stop()
	lastReq := modTime(r.requestFile())
	var lastRound time.Time // zero: none yet in this process
	var askedAt time.Time   // the oldest refresh request not yet answered
	ask := func(at time.Time) {
		if askedAt.IsZero() || at.Before(askedAt) {
			askedAt = at
		}
	}
	for {
		if ctx.Err() != nil {
			return // a kick or tick may win the select after cancellation
		}
		r.keepWatching(ctx)
		if !askedAt.IsZero() || r.due(lastRound) {
			r.round(ctx, askedAt, lastRound)
			askedAt = time.Time{}
			lastRound = time.Now()
		}
		select {
		case <-ctx.Done():
			return
		case <-r.kick:
			ask(time.Now())
		case <-r.ready():
			r.applyEvents(ctx)
		case <-roots.C:
			r.checkRoots(ctx)
		case <-poll.C:
			if m := modTime(r.requestFile()); m.After(lastReq) {
				lastReq = m
				ask(m)
			}
			if !r.live.carry.Empty() {
				r.applyEvents(ctx) // the scan lease was held: try again
			}
			_ = r.cat.Sync(ctx)
		}
	}
}

// due reports whether discovery has work now: a current root no finished
// pass covered under the current walk settings (a root added, maxDepth
// changed), an unfinished pass (at once when another process left it; an
// interval after this process's own round stopped short of the end), or a
// last pass older than the refresh interval. Failed or
// refused rounds (another process scans) wait a few seconds before the
// next try.
func (r *Refresher) due(lastRound time.Time) bool {
	now := time.Now()
	if !lastRound.IsZero() && now.Sub(lastRound) < retryAfter {
		return false
	}
	st := r.cat.State()
	opt := r.opt()
	walk := local.WalkKey(opt.MaxDepth, opt.ExcludeNames, opt.FollowSymlinks)
	for _, root := range opt.Roots {
		if rc, ok := st.Roots[pathid.Key(root)]; !ok || rc.Walk != walk || rc.Completed.IsZero() {
			return true
		}
	}
	interval := r.refreshInterval()
	if st.PassRunning {
		return lastRound.IsZero() || !r.stopped || now.Sub(lastRound) >= interval
	}
	return now.Sub(st.LastCompleted) >= interval
}

// scanOptions are the walk settings in force now, with Stale telling a
// round that they went out of force (the config file changed: the round
// stops, and the next one walks under the new settings, R37), and this
// process's catalog as the quick source of what the scanner knows of the
// records (it is caught up with the store just before a round starts).
func (r *Refresher) scanOptions() scan.Options {
	opt := r.opt()
	key := walkSettings(opt)
	opt.Stale = func() bool { return walkSettings(r.opt()) != key }
	opt.RecordsAt = r.cat.RecordsAt
	return opt
}

// walkSettings names what a walk depends on: roots, depth, exclusions,
// symlink following.
func walkSettings(o scan.Options) string {
	roots := make([]string, len(o.Roots))
	for i, root := range o.Roots {
		roots[i] = pathid.Key(root)
	}
	slices.Sort(roots)
	return fmt.Sprintf("%d|%q", local.WalkKey(o.MaxDepth, o.ExcludeNames, o.FollowSymlinks), roots)
}

// retryAfter spaces rounds that found nothing to do or could not start.
const retryAfter = 5 * time.Second

func modTime(p string) time.Time {
	fi, err := os.Stat(p)
	if err != nil {
		return time.Time{}
	}
	return fi.ModTime()
}

// round runs one budgeted round if this process can take the scan lease.
func (r *Refresher) round(ctx context.Context, askedAt time.Time, lastRound time.Time) {
	asked := !askedAt.IsZero()
	r.waitGate(ctx, time.Time{})
	r.sliceMu.Lock()
	defer r.sliceMu.Unlock()
	// A slice this process ran for a call (or another process) may have
	// done the work meanwhile: look again before walking everything.
	_ = r.cat.ForceSync(ctx)
	if !asked && !r.due(lastRound) {
		return
	}
	if asked && !r.due(lastRound) && r.cat.State().PassStarted.After(askedAt) {
		// A pass that began after the request sees everything the caller
		// could have meant: a burst of refresh requests (every call of a
		// busy host) is answered by one pass, not by a walk each.
		r.log.Debug("refresh already answered by a pass begun after it")
		return
	}
	opt := r.scanOptions()
	if r.live.w != nil {
		opt.Watch = r.live.w // a periodic pass also puts back any watch lost
	}
	s, err := scan.TryStart(ctx, r.st, opt)
	if errors.Is(err, lease.ErrHeld) {
		r.log.Debug("another process is scanning")
		return
	}
	if err != nil {
		r.log.Warn("discovery could not start", "err", err)
		r.setErr(err)
		r.stopped = true
		return
	}
	defer s.Close()
	r.setRunning(true)
	defer r.setRunning(false)
	s.Progress = func(scan.State) { _ = r.cat.Sync(ctx) }
	rd, err := s.RunRound(ctx)
	if err != nil && ctx.Err() == nil {
		r.log.Warn("discovery round failed", "err", err)
		r.setErr(err)
		r.stopped = true
		return
	}
	r.setErr(nil)
	r.stopped = !rd.Finished
	if rd.Finished && rd.Dirs > 0 {
		r.live.passCost = time.Duration(rd.Elapsed) // sizes the refresh interval without file events
		r.passEnded(r.cat.State().Pass)
	}
	// Only directory counts: project counts would include projects this
	// process's own view hides, and stderr ends up in the host's logs.
	r.log.Debug("discovery round", "dirs", rd.Dirs, "finished", rd.Finished, "truncated", rd.Truncated)
}

// SliceNow runs one slice within budget for a caller that has nothing to
// show yet (an empty catalog, R11). If another process or this process's
// loop holds the lease, it waits for their commits instead, up to budget.
func (r *Refresher) SliceNow(ctx context.Context, budget time.Duration) {
	until := time.Now().Add(budget)
	r.waitGate(ctx, until)
	if r.sliceMu.TryLock() {
		s, err := scan.TryStart(ctx, r.st, r.scanOptions())
		if err == nil {
			r.setRunning(true)
			_, err = s.RunSlice(ctx, r.opt().SliceDirs, until)
			r.setRunning(false)
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

// RefreshNow walks every root anew, within budget, for a caller that must
// answer from what is on disk now (`cgcat projects --refresh`, a CLI miss
// with no process following the disk). It waits for another process's
// walk within the same budget, and reports whether a whole pass ended: then
// the answer may say coverage complete without a watcher. An unfinished
// pass is left for the next scan or serve to resume.
func (r *Refresher) RefreshNow(ctx context.Context, budget time.Duration) bool {
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	r.waitGate(ctx, time.Now().Add(budget))
	r.sliceMu.Lock()
	defer r.sliceMu.Unlock()
	opt := r.scanOptions()
	opt.Fresh = true
	deadline, _ := ctx.Deadline()
	s, err := scan.Start(ctx, r.st, opt)
	if err != nil {
		return false
	}
	defer s.Close()
	r.setRunning(true)
	defer r.setRunning(false)
	for {
		s.SetRoundTime(time.Until(deadline))
		rd, err := s.RunRound(ctx)
		if err != nil {
			r.setErr(err)
			return false
		}
		if rd.Finished {
			_ = r.cat.ForceSync(ctx)
			return true
		}
		if ctx.Err() != nil || !time.Now().Before(deadline) {
			_ = r.cat.ForceSync(context.Background())
			return false
		}
	}
}
