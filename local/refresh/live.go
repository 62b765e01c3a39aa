package refresh

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/lease"
	"github.com/cgcat/cgcat/local/meta"
	"github.com/cgcat/cgcat/local/pathid"
	"github.com/cgcat/cgcat/local/scan"
	"github.com/cgcat/cgcat/local/watch"
)

// The catalog follows the disk (R42): one process per data dir, the holder
// of the watch lease, keeps file watches on every directory a walk reaches
// and turns their events into patches (scan.RunPatch) that it commits and
// publishes; the others see them through the published views. Events are
// an acceleration, never the truth: the watches are set up by a whole
// pass walked after each watch was in place (so nothing between the last
// pass and the first event is lost), a queue overflow or a refused watch
// walks everything again, and the periodic refresh stays the safety net.
// Where file events cannot be had (another platform, the system's watch
// limit), the refresh alone runs, at an interval sized to cost about 1 %
// of a core, and every answer says so.

// liveState is the watching side of a Refresher; only the loop's goroutine
// touches it.
type liveState struct {
	off        string // why watching is off for good in this process ("" if not)
	maxPending int
	lease      *lease.Lease
	w          *watch.Watcher
	needSync   bool
	nextTry    time.Time
	key        string            // walk settings the watches follow
	roots      map[string]string // each root's identity when last looked at ("" when absent)
	syncPass   uint64            // a setup pass left at a round limit, finished by later rounds
	syncRound  time.Time         // when the last setup round began
	carry      scan.Patch        // event work not applied yet (the scan lease was held)
	state      WatchState
	passCost   time.Duration // what the last whole pass cost this process
}

// debounce gathers the events of one burst into one patch.
const debounce = 20 * time.Millisecond

// retryWatch is how long a process waits before trying file events again
// after the system refused them.
const retryWatch = 5 * time.Minute

func newLiveState() liveState {
	ls := liveState{maxPending: 16384}
	switch v := os.Getenv("CGCAT_WATCH"); v {
	case "", "on":
	case "off":
		ls.off = "CGCAT_WATCH=off"
	default:
		ls.off = "CGCAT_WATCH=" + v + " (only on or off)"
	}
	if n, err := strconv.Atoi(os.Getenv("CGCAT_WATCH_QUEUE")); err == nil && n > 0 {
		ls.maxPending = n // tests: force an overflow with a tiny bound
	}
	return ls
}

// ready is the watcher's signal (nil while not watching).
func (r *Refresher) ready() <-chan struct{} {
	if r.live.w == nil {
		return nil
	}
	return r.live.w.Ready()
}

// keepWatching takes the watch lease when it is free, sets the watches up
// (a whole pass), and keeps them on the settings in force.
func (r *Refresher) keepWatching(ctx context.Context) {
	lv := &r.live
	if lv.lease == nil {
		if time.Now().Before(lv.nextTry) {
			return
		}
		lv.nextTry = time.Now().Add(2 * time.Second)
		l, err := lease.TryAcquire(WatchLeasePath(r.st.DataDir()))
		if err != nil {
			return
		}
		lv.lease = l
		lv.state = WatchState{Mode: ModeRefresh}
		lv.nextTry = time.Time{}
	}
	if lv.lease.Lost() {
		r.stopWatching() // stolen while this process was stopped
		return
	}
	if lv.w == nil && time.Now().After(lv.nextTry) {
		r.startWatcher()
	}
	if lv.w == nil {
		return
	}
	if key := walkSettings(r.opt()); key != lv.key {
		for _, root := range lv.state.Roots {
			if !slices.ContainsFunc(r.opt().Roots, func(p string) bool { return pathid.Key(p) == root }) {
				lv.w.Forget(root)
			}
		}
		lv.needSync = true
	}
	if lv.syncPass != 0 {
		// The setup pass stopped at a round limit. If another process
		// walked on in it, or began another, the watches do not cover what
		// it walked: set up again. Else it goes on after a pause: each
		// round within the configured bounds, but not an interval apart
		// (until it ends, changes in the part not walked yet are missed).
		switch st := r.cat.State(); {
		case st.Pass != lv.syncPass || st.PassRunning && st.Scanner != os.Getpid() && !Scanning(r.st.DataDir()):
			lv.syncPass, lv.needSync = 0, true
		case !st.PassRunning:
			r.passEnded(st.Pass)
		case time.Since(lv.syncRound) >= retryAfter:
			r.syncWatches(ctx, false)
		}
	}
	if lv.needSync {
		r.syncWatches(ctx, true)
	}
}

// passEnded is told of a pass this process finished with the watcher on:
// a setup pass that spanned several rounds is done.
func (r *Refresher) passEnded(pass uint64) {
	lv := &r.live
	if lv.w == nil || lv.syncPass == 0 || pass != lv.syncPass {
		return
	}
	lv.syncPass = 0
	r.markLive()
}

// startWatcher starts file events, or publishes why there are none.
func (r *Refresher) startWatcher() {
	lv := &r.live
	if lv.off != "" {
		r.fallBack(lv.off, time.Time{})
		lv.nextTry = time.Now().Add(100 * 365 * 24 * time.Hour)
		return
	}
	w, err := watch.New(watch.Options{MaxPending: lv.maxPending, Source: meta.IsSource})
	if err != nil {
		retry := time.Now().Add(retryWatch)
		if errors.Is(err, watch.ErrUnsupported) {
			retry = time.Now().Add(100 * 365 * 24 * time.Hour)
		}
		r.fallBack(err.Error(), retry)
		return
	}
	lv.w, lv.needSync = w, true
	lv.state.Mode, lv.state.Why, lv.state.Live = ModeEvents, "", false
	r.publishWatch()
}

// fallBack closes the watcher and publishes the refresh mode, with why.
func (r *Refresher) fallBack(why string, retry time.Time) {
	lv := &r.live
	if lv.w != nil {
		lv.w.Close()
		lv.w = nil
	}
	lv.nextTry, lv.carry = retry, scan.Patch{}
	lv.state.Mode, lv.state.Why, lv.state.Live, lv.state.Pending = ModeRefresh, why, false, false
	r.log.Warn("file events are off; discovery falls back to its periodic refresh", "why", why, "interval", r.interval)
	r.publishWatch()
}

// stopWatching ends watching in this process (the loop ends, or the lease
// was stolen).
func (r *Refresher) stopWatching() {
	lv := &r.live
	if lv.w != nil {
		lv.w.Close()
		lv.w = nil
	}
	if lv.lease != nil {
		lost := lv.lease.Lost()
		if s, _ := ReadWatchState(r.st.DataDir()); !lost && s.Pid == os.Getpid() {
			os.Remove(watchStatePath(r.st.DataDir()))
		}
		lv.lease.Release()
		lv.lease = nil
	}
	lv.needSync, lv.carry = false, scan.Patch{}
}

// syncWatches walks everything anew (fresh), or goes on with the setup
// pass a round limit stopped, with the watcher told of every directory
// before it is listed: from the pass's end on, the catalog follows the
// disk.
func (r *Refresher) syncWatches(ctx context.Context, fresh bool) {
	lv := &r.live
	r.waitGate(ctx, time.Time{})
	r.sliceMu.Lock()
	defer r.sliceMu.Unlock()
	lv.syncRound = time.Now()
	opt := r.scanOptions()
	opt.Watch, opt.Fresh = lv.w, fresh
	s, err := scan.TryStart(ctx, r.st, opt)
	if err != nil {
		return // another process scans: try again at the next turn
	}
	defer s.Close()
	lv.state.Live, lv.state.Why = false, "the watcher is setting up its watches"
	r.publishWatch()
	r.setRunning(true)
	defer r.setRunning(false)
	s.Progress = func(scan.State) { _ = r.cat.Sync(ctx) }
	t0 := time.Now()
	if fresh {
		lv.key, lv.roots = walkSettings(opt), r.rootIdentities(opt.Roots)
	}
	rd, err := s.RunRound(ctx)
	if err != nil {
		if ctx.Err() == nil {
			r.log.Warn("discovery round failed", "err", err)
			r.setErr(err)
		}
		return
	}
	r.setErr(nil)
	lv.needSync = false
	_ = r.cat.ForceSync(ctx)
	if !rd.Finished {
		// A round limit: the rest of this pass goes on after a pause
		// (keepWatching), walked with the watcher on; live when it ends.
		r.stopped = true
		lv.syncPass = r.cat.State().Pass
		lv.state.Why = fmt.Sprintf("the watcher's walk of every root stopped at discovery.%s and goes on in %s", rd.Truncated, retryAfter)
		r.publishWatch()
		return
	}
	if fresh {
		lv.passCost = time.Since(t0)
	}
	lv.syncPass = 0
	r.markLive()
}

// markLive publishes that the catalog follows the disk (or why it cannot:
// a watch was refused).
func (r *Refresher) markLive() {
	lv := &r.live
	opt := r.opt()
	if lv.w.Limited() {
		r.fallBack(limitWhy(lv.w.Stats().Watches), time.Now().Add(retryWatch))
		return
	}
	lv.state.Live, lv.state.Why, lv.state.Since = true, "", time.Now().UTC()
	lv.state.Walk = local.WalkKey(opt.MaxDepth, opt.ExcludeNames, opt.FollowSymlinks)
	lv.state.Roots = lv.state.Roots[:0]
	for _, root := range opt.Roots {
		lv.state.Roots = append(lv.state.Roots, pathid.Key(root))
	}
	lv.state.Pending = lv.w.Pending() || !lv.carry.Empty()
	r.publishWatch()
	r.log.Debug("watching for changes", "watches", lv.w.Stats().Watches, "setup", lv.passCost)
}

// limitWhy names the system's watch limit, and how to raise it.
func limitWhy(have int) string {
	limit := "fs.inotify.max_user_watches"
	if b, err := os.ReadFile("/proc/sys/fs/inotify/max_user_watches"); err == nil {
		limit += " = " + strings.TrimSpace(string(b))
	}
	return fmt.Sprintf("the system refused more file watches after %d (%s, shared by every program of this user); raise it, e.g. `sysctl fs.inotify.max_user_watches=524288`", have, limit)
}

// applyEvents turns the events read so far into one patch and commits it.
func (r *Refresher) applyEvents(ctx context.Context) {
	lv := &r.live
	if lv.w == nil {
		return
	}
	select {
	case <-ctx.Done():
		return
	case <-time.After(debounce):
	}
	c, over, why := lv.w.Take()
	if over {
		lv.needSync, lv.carry = true, scan.Patch{}
		lv.state.Live, lv.state.Why, lv.state.LastOverflow = false, "file events were lost ("+why+"); everything is being walked again", time.Now().UTC()
		r.publishWatch()
		r.log.Info("file events overflowed; walking everything again", "why", why)
		return
	}
	lv.carry.Shallow = append(lv.carry.Shallow, c.Shallow...)
	lv.carry.Deep = append(lv.carry.Deep, c.Deep...)
	lv.carry.Gone = append(lv.carry.Gone, c.Gone...)
	if lv.carry.Empty() {
		return
	}
	if !lv.state.Pending {
		lv.state.Pending = true
		r.publishWatch()
	}
	if lv.needSync {
		return // the coming whole pass covers it
	}
	r.sliceMu.Lock()
	opt := r.scanOptions()
	opt.Watch = lv.w
	s, err := scan.StartPatch(r.st, opt)
	if err != nil {
		r.sliceMu.Unlock()
		return // another process scans: the next poll tries again
	}
	r.setRunning(true)
	res, err := s.RunPatch(ctx, lv.carry, time.Now().Add(opt.RoundTime))
	s.Close()
	r.setRunning(false)
	r.sliceMu.Unlock()
	lv.carry = scan.Patch{}
	if err != nil || !res.Finished {
		if err != nil && ctx.Err() == nil {
			r.log.Warn("applying file events failed; walking everything again", "err", err)
		}
		lv.needSync = true
		return
	}
	r.log.Debug("file events applied", "dirs", res.Dirs, "projects", res.Projects, "written", res.Written)
	_ = r.cat.ForceSync(ctx)
	if lv.w.Limited() {
		r.fallBack(limitWhy(lv.w.Stats().Watches), time.Now().Add(retryWatch))
		return
	}
	if !lv.w.Pending() {
		lv.state.Pending = false
		r.publishWatch()
	}
}

// rootIdentities is each root's identity now (zero when absent).
func (r *Refresher) rootIdentities(roots []string) map[string]string {
	out := map[string]string{}
	for _, root := range roots {
		id, _ := pathid.DirID(root)
		out[root] = id
	}
	return out
}

// checkRoots notices a discovery root that went away, came back or was
// replaced (a volume unplugged, plugged in, mounted over): no event says
// so on the root itself.
func (r *Refresher) checkRoots(ctx context.Context) {
	lv := &r.live
	if lv.w == nil || lv.needSync || !lv.state.Live {
		return
	}
	changed := false
	for root, was := range lv.roots {
		now, _ := pathid.DirID(root)
		if now == was {
			continue
		}
		lv.roots[root] = now
		lv.carry.Gone = append(lv.carry.Gone, root)
		lv.carry.Deep = append(lv.carry.Deep, root)
		changed = true
	}
	if changed {
		r.applyEvents(ctx)
	}
}

// publishWatch writes what this process's watching looks like now.
func (r *Refresher) publishWatch() {
	lv := &r.live
	if lv.lease == nil {
		return
	}
	st := lv.state
	if lv.w != nil {
		ws := lv.w.Stats()
		st.Watches, st.Events, st.Overflows = ws.Watches, ws.Events, ws.Overflows
	}
	st.IntervalSeconds = int(r.refreshInterval() / time.Second)
	writeWatchState(r.st.DataDir(), st)
}

// refreshInterval is the interval between whole passes: the configured
// one, and in refresh mode (this process holds the watch lease without
// file events) one sized so the refresh costs about 1 % of a core — a
// change is found in seconds on a small tree, in a minute on a very large
// one.
func (r *Refresher) refreshInterval() time.Duration {
	lv := &r.live
	if lv.lease == nil || lv.w != nil {
		return r.interval
	}
	iv := min(max(100*lv.passCost, 10*time.Second), r.interval)
	return iv
}
