// Package scan discovers projects: a sliced, resumable, parallel walk of the
// discovery roots whose queue lives in the store, so a killed scanner's
// successor resumes where it stopped.
//
// Vocabulary: a pass is one complete traversal of every root; a round is
// the work done in one budget (maxDirectoriesPerRound / maxRoundMs); a slice
// is one batch (maxDirectoriesPerSlice / maxSliceMs) committed to the store
// in one write. Only the holder of the scan lease runs slices; every batch
// carries its fencing number.
//
// What a pass finds is stated exactly: a directory not entered because of
// maxDepth, an unreadable one, an offline root, a name that cannot travel
// through JSON — each is a gap, and a root's coverage is complete only when
// a pass walked it to the end with none.
//
// It owns the project records: a root keeps its id; a root seen for the
// first time gets the id this machine's mirrored GBrain card gave it before
// the catalog was lost, else a new one; its metadata is read through
// package meta. A record the walk no longer finds is re-checked directly
// and marked missing (with a pointer when its index moved to another
// folder), never deleted: only `cgcat forget` deletes. The scanner's own
// keys (its persisted walk stack) live under store.PrefixScan.
//
// Between passes, a patch (patch.go) reads again what file events named,
// with the same walk and the same direct re-checks, committed beside the
// pass.
//
// The scanner never runs a program, never opens a CodeGraph database, never
// descends into .codegraph, and never walks up from a directory to claim a
// parent. It never talks to GBrain: it only reads the mirrored cards the
// store already holds, and the store queues GBrain cards itself when a
// record changes. It never decides what is shared: every project under the
// discovery roots is recorded, and package catalog decides what is shown.
package scan

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/config"
	"github.com/cgcat/cgcat/local/lease"
	"github.com/cgcat/cgcat/local/meta"
	"github.com/cgcat/cgcat/local/nofollow"
	"github.com/cgcat/cgcat/local/pathid"
	"github.com/cgcat/cgcat/local/store"
)

// Keys of the scanner's own part of the store (store.PrefixScan).
const (
	keyQueueSeq = store.PrefixScan + "qseq"
	prefixQueue = store.PrefixScan + "q/"    // scan/q/<seq BE> → item
	prefixSeen  = store.PrefixScan + "seen/" // scan/seen/<id> → "" for records seen in this pass
	fenceName   = "scan"
)

var traceScan = os.Getenv("CGCAT_SCAN_TRACE") == "1"

// Aliases kept for callers that predate the move of these types to local.
type (
	State = local.ScanState
	Gap   = local.Gap
	Round = local.Round
)

const (
	CoverageComplete = string(local.CoverageComplete)
	CoveragePartial  = string(local.CoveragePartial)
)

// ReadState returns the persisted discovery state.
func ReadState(r interface {
	ScanState() (local.ScanState, error)
}) (State, error) {
	return r.ScanState()
}

// item is one directory waiting to be read.
type item struct {
	Path  string `json:"p"`
	Depth int    `json:"d"`
	key   string // its queue key ("" while only in memory)
	// shallow: read the directory itself, not what lies below it (a patch
	// for a directory whose own entries changed; never queued).
	shallow bool
	// inRoots: known to lie under a discovery root (a child that expand
	// made of a directory that does, with this scanner's roots), so the
	// walk does not check it again: a path check per directory was 2 % of
	// a first pass. Not queued: an item read back is checked.
	inRoots bool
}

// Options are the walk settings, taken from the config.
type Options struct {
	Roots          []string
	MaxDepth       int
	ExcludeNames   []string
	FollowSymlinks bool
	SliceDirs      int
	SliceTime      time.Duration
	RoundDirs      int
	RoundTime      time.Duration
	Meta           meta.Limits
	// VisibleCarry is how long after the last commit a slice that found new
	// or changed projects may wait to be committed with the next one (zero:
	// committed at once). A first pass meets projects in every slice; each
	// commit opens the store (a journal flush, ~8 fsyncs) and publishes a
	// delta: 56 commits and 0.37 s of CPU for a first pass over 112k
	// directories with one per slice, 10 with a quarter of maxSliceMs. A
	// caller waiting on an empty catalog (R11, within maxSliceMs) still
	// sees the first projects well within its budget.
	VisibleCarry time.Duration
	// Workers read directories in parallel; zero means 4.
	Workers int
	// RecordsAt, when set, gives the records of a store revision faster
	// than the store can (a long-running process's published catalog).
	RecordsAt RecordsAt
	// Watch, when set, is told of every directory the walk opens, before
	// it is listed, and of every .codegraph met, before it is probed, so
	// that no change between the look and the watch can be missed
	// (package watch; refused watches are the watcher's to report).
	Watch Watcher
	// Fresh starts a new pass even when one is unfinished: a refresh that
	// must look at everything now (`cgcat projects --refresh`, a watcher
	// setting up its watches) does not resume a pass whose walked part
	// may be stale. The directory cache keeps it cheap.
	Fresh bool
	// Stale, when set, reports that the settings in force (a live config)
	// are no longer these: a round then stops, and the slice it just walked
	// is not committed, so nothing is discovered under a maxDepth or roots
	// no longer in force (R37, R9).
	Stale func() bool
}

// OptionsFrom maps a config to walk options.
func OptionsFrom(c *config.Config) Options {
	d := c.Discovery
	return Options{
		Roots:          d.Roots,
		MaxDepth:       d.MaxDepth,
		ExcludeNames:   d.ExcludeNames,
		FollowSymlinks: d.FollowSymlinks,
		SliceDirs:      d.MaxDirectoriesPerSlice,
		SliceTime:      time.Duration(d.MaxSliceMs) * time.Millisecond,
		VisibleCarry:   time.Duration(d.MaxSliceMs) * time.Millisecond / 4,
		RoundDirs:      d.MaxDirectoriesPerRound,
		RoundTime:      time.Duration(d.MaxRoundMs) * time.Millisecond,
		Meta:           meta.Limits{MaxBytesPerFile: c.Metadata.MaxBytesPerFile, MaxBytesPerProject: c.Metadata.MaxBytesPerProject},
	}
}

// key fingerprints the walk settings (not the roots: a root added joins the
// running pass, one removed is dropped from it).
func (o Options) key() uint64 { return local.WalkKey(o.MaxDepth, o.ExcludeNames, o.FollowSymlinks) }

// Scanner runs slices for the process that holds the scan lease.
type Scanner struct {
	st    *store.Store
	opt   Options
	lease *lease.Lease
	epoch uint64
	now   func() time.Time
	// Progress, when set, is called after every committed slice.
	Progress func(State)

	// The lease holder's copy of the persisted state and queue (nil until
	// loaded); only this process writes them while it holds the lease.
	mu    sync.Mutex // guards state against the in-flight commit
	state State
	stack []item
	seq   uint64
	// known is what the scanner knows of every record (known.go): a
	// project whose files did not change is not read again, and a re-seen
	// project whose record would not change is not read from the store
	// either. Guarded by mu: a slice's commit updates it while the next
	// slice walks.
	known *knownSet
	// stampedAt is when this scanner took each project's metadata stamp (by
	// root key; guarded by mu): a pass's end looks again only at stamps
	// older than restampAfter or taken by another scanner.
	stampedAt map[string]time.Time
	// carried is walked work not committed yet: slices that changed nothing
	// but the walk's own bookkeeping wait for the next commit (at most
	// SliceTime after the last one). Only RunRound touches it.
	carried    *slicePlan
	lastCommit time.Time
	// cache keeps directory listings between passes (dircache.go); nil
	// where the platform cannot say when a directory changed. Set before
	// the first slice and never replaced (the walk's workers read it).
	cache *dirCache
	// passNo is the number of the pass being walked.
	passNo uint64
	// listings counts directories listed (not taken from the cache).
	listings atomic.Int64
	// Tests only: coarsen makes directory times coarse, as some file
	// systems keep them; onFound hears of every project found.
	coarsen func(path string, t nofollow.Times) nofollow.Times
	onFound func(root string) // called for each project the walk finds
	// freshStarted: the pass Options.Fresh asked for has begun.
	freshStarted bool
	// patching: a scanner for patches (StartPatch); noSeen: its patch
	// runs with no pass running, so records seen are not marked seen.
	patching, noSeen bool
	// cardIDs maps the root keys of this machine's mirrored GBrain cards to
	// their project ids: a root found again after a lost catalog takes its
	// old id back instead of a new one.
	cardIDs map[string]cardClaim
}

// LeasePath is the scan lease file in a data dir.
func LeasePath(dataDir string) string { return filepath.Join(dataDir, "scan.lease") }

// TryStart takes the scan lease without waiting and starts a new fencing
// epoch. It returns lease.ErrHeld when another process scans.
func TryStart(ctx context.Context, st *store.Store, opt Options) (*Scanner, error) {
	l, err := lease.TryAcquire(LeasePath(st.DataDir()))
	if err != nil {
		return nil, err
	}
	return start(ctx, st, opt, l)
}

// Start waits for the scan lease (while another process scans) and starts.
func Start(ctx context.Context, st *store.Store, opt Options) (*Scanner, error) {
	l, err := lease.Acquire(ctx, LeasePath(st.DataDir()), 50*time.Millisecond)
	if err != nil {
		return nil, err
	}
	return start(ctx, st, opt, l)
}

func start(ctx context.Context, st *store.Store, opt Options, l *lease.Lease) (*Scanner, error) {
	if opt.Workers <= 0 {
		opt.Workers = 4
	}
	s := &Scanner{st: st, opt: opt, lease: l, now: time.Now}
	// A scan holds its lease only while it makes progress (package
	// lease): one stuck in a system call is taken over.
	l.RequireProgress()
	t0 := time.Now()
	s.cache = openDirCache(st.DataDir(), opt.cacheKey())
	if s.cache != nil {
		s.cache.revisits = opt.FollowSymlinks
	}
	l.Progress()
	t1 := time.Now()
	err := st.Update(ctx, func(tx *store.Tx) error {
		s.epoch = tx.BumpFence(fenceName)
		// What the first slice needs, read from the same snapshot: one
		// opening of the store fewer per round.
		return s.loadFrom(&tx.Reader)
	})
	if err != nil {
		l.Release()
		return nil, err
	}
	if traceScan {
		fmt.Fprintf(os.Stderr, "start: directory cache read %v, store %v\n", t1.Sub(t0), time.Since(t1))
	}
	return s, nil
}

// SetRoundTime bounds the next rounds' time (a caller's own budget, when
// shorter than maxRoundMs).
func (s *Scanner) SetRoundTime(d time.Duration) {
	if d > 0 && d < s.opt.RoundTime {
		s.opt.RoundTime = d
	}
}

// Close releases the lease. The queue stays for whoever scans next.
func (s *Scanner) Close() error {
	// While the lease is still ours: only its holder writes the file (a
	// scan that was stuck and taken over writes nothing).
	if !s.lease.Lost() {
		s.saveCache(false)
	}
	return s.lease.Release()
}

// RunRound runs slices until the pass finishes or a round budget is spent.
// A new pass starts when none is running.
func (s *Scanner) RunRound(ctx context.Context) (r Round, err error) {
	r = Round{Started: s.now()}
	deadline := r.Started.Add(s.opt.RoundTime)
	s.lastCommit = time.Now()
	// One commit may be in flight while the next slice walks: the walk
	// needs only the in-memory stack, and commits stay in order.
	var inflight chan error
	wait := func() error {
		if inflight == nil {
			return nil
		}
		err := <-inflight
		inflight = nil
		return err
	}
	defer func() {
		if err != nil {
			// The store is the truth again (the in-memory stack may be
			// ahead of it, by the carried work too); reload next time.
			s.stack, s.carried = nil, nil
		}
	}()
	for {
		budget := min(s.opt.SliceDirs, s.opt.RoundDirs-r.Dirs)
		sliceEnd := s.now().Add(s.opt.SliceTime)
		if sliceEnd.After(deadline) {
			sliceEnd = deadline
		}
		pl, err := s.plan(ctx, budget, sliceEnd)
		if err != nil {
			wait()
			return r, err
		}
		if err := wait(); err != nil {
			return r, err
		}
		if s.opt.Stale != nil && s.opt.Stale() {
			// The settings changed while this slice walked: it is dropped
			// (the queue in the store is the truth again, and so are the
			// carried slices), and the next round starts under the
			// settings in force.
			s.stack, s.carried = nil, nil
			r.Truncated = "settings changed"
			r.Elapsed = local.Millis(s.now().Sub(r.Started))
			return r, s.endRound(ctx, r)
		}
		r.Dirs += pl.w.dirs
		r.Projects += len(pl.w.found)
		r.Finished = len(pl.w.pending) == 0
		var stop bool
		switch {
		case r.Finished:
			stop = true
		case ctx.Err() != nil:
			r.Truncated, stop = "cancelled", true
		case r.Dirs >= s.opt.RoundDirs:
			r.Truncated, stop = "maxDirectoriesPerRound", true
		case !s.now().Before(deadline):
			r.Truncated, stop = "maxRoundMs", true
		}
		if !stop && s.canCarry(pl) {
			s.carried = s.withCarried(pl)
			continue
		}
		pl = s.withCarried(pl)
		if stop {
			r.Elapsed = local.Millis(s.now().Sub(r.Started))
			next, err := s.commit(ctx, pl, &r)
			if err != nil {
				return r, err
			}
			if !next.PassRunning {
				s.saveCache(true)
			}
			return r, nil
		}
		inflight = make(chan error, 1)
		go func(pl *slicePlan, done chan error) {
			_, err := s.commit(ctx, pl, nil)
			done <- err
		}(pl, inflight)
	}
}

// canCarry reports whether a walked slice may wait for the next commit. One
// that changed nothing a reader could see (every project it met is
// settled, so its commit would only move the walk's own bookkeeping) waits
// until SliceTime after the last commit; one that found new or changed
// projects waits VisibleCarry, and no more than maxCarriedSlices slices'
// worth of directories go into one commit (a smaller SliceDirs still means
// more frequent commits). A round's last slice is always committed at
// once. A scanner killed meanwhile loses at most SliceTime of walking,
// which its successor (resuming from the last committed stack) walks again.
func (s *Scanner) canCarry(pl *slicePlan) bool {
	since := time.Since(s.lastCommit)
	if since >= s.opt.SliceTime {
		return false
	}
	carried := pl.w.dirs
	if s.carried != nil {
		carried += s.carried.w.dirs
	}
	if since < s.opt.VisibleCarry && carried <= maxCarriedSlices*s.opt.SliceDirs {
		return true
	}
	for i := range pl.w.found {
		f := &pl.w.found[i]
		if k := s.lookup(pathid.Key(f.root)); k == nil || !k.settled(f) {
			return false
		}
	}
	return true
}

// maxCarriedSlices bounds how many slices' worth of directories one
// commit of new or changed projects may hold (canCarry).
const maxCarriedSlices = 8

// withCarried joins pl to the carried slices: one commit for all of them.
func (s *Scanner) withCarried(pl *slicePlan) *slicePlan {
	c := s.carried
	if c == nil {
		return pl
	}
	s.carried = nil
	c.join(pl)
	return c
}

// join adds the next slice's walk to p, the slices walked before it.
func (p *slicePlan) join(next *slicePlan) {
	if p.unsaved == nil {
		p.unsaved = make(map[string]int, len(p.fresh))
		for i, it := range p.fresh {
			p.unsaved[it.key] = i
		}
		// Only what has a queue entry to delete is kept (w.dirs counts).
		p.w.consumed = slices.DeleteFunc(p.w.consumed, func(it item) bool { return it.key == "" })
	}
	for _, it := range next.w.consumed {
		if i, ok := p.unsaved[it.key]; ok {
			// Queued by an earlier slice and read before it was ever
			// written: neither written nor deleted.
			delete(p.unsaved, it.key)
			p.fresh[i].key = ""
			continue
		}
		if it.key != "" {
			p.w.consumed = append(p.w.consumed, it) // its queue entry goes
		}
	}
	p.w.dirs += next.w.dirs
	for _, it := range next.fresh {
		p.unsaved[it.key] = len(p.fresh)
		p.fresh = append(p.fresh, it)
	}
	p.newPass = p.newPass || next.newPass
	p.roots, p.seq = next.roots, next.seq
	p.w.pending = next.w.pending
	p.w.found = append(p.w.found, next.w.found...)
	p.w.gaps = append(p.w.gaps, next.w.gaps...)
	p.w.rejected = append(p.w.rejected, next.w.rejected...)
}

// RunSlice runs exactly one slice (for `cgcat scan --once` and for a tool
// call on an empty catalog that must answer within its budget).
func (s *Scanner) RunSlice(ctx context.Context, dirs int, until time.Time) (State, error) {
	pl, err := s.plan(ctx, dirs, until)
	if err != nil {
		return State{}, err
	}
	st, err := s.commit(ctx, s.withCarried(pl), nil)
	if err != nil {
		s.stack = nil // the store is the truth again; reload next time
		return st, err
	}
	if !st.PassRunning {
		s.saveCache(true)
	}
	return st, nil
}

// saveCache writes the directory cache at the end of a pass and when the
// scanner closes (best effort: a cache that cannot be written costs
// listings, nothing else).
func (s *Scanner) saveCache(passEnded bool) {
	if s.cache == nil {
		return
	}
	t0 := time.Now()
	err := s.cache.save(passEnded)
	if traceScan {
		fmt.Fprintf(os.Stderr, "directory cache saved in %v (err %v)\n", time.Since(t0), err)
	}
}

// endRound records a round that ended without a commit of its own (its
// last slice was dropped).
func (s *Scanner) endRound(ctx context.Context, r Round) error {
	return s.st.Update(ctx, func(tx *store.Tx) error {
		if err := tx.CheckFence(fenceName, s.epoch); err != nil {
			return err
		}
		st, err := tx.ScanState()
		if err != nil {
			return err
		}
		st.Rounds++
		st.LastRound = r
		return tx.PutScanState(st)
	})
}

// slicePlan is one walked slice waiting to be committed.
type slicePlan struct {
	w       walkResult
	newPass bool
	roots   []string // the pass's roots after this slice
	fresh   []item   // unread items first queued by this slice (key "": read meanwhile)
	seq     uint64   // next queue sequence number after this slice's keys
	// unsaved indexes fresh by key while slices are carried (join).
	unsaved map[string]int
}

// plan walks one slice from the in-memory stack and gives the unread new
// items their queue keys, so the next slice can walk before this one is
// committed. A root added to the config since the pass began joins it.
func (s *Scanner) plan(ctx context.Context, n int, until time.Time) (*slicePlan, error) {
	if s.stack == nil {
		if err := s.load(ctx); err != nil {
			return nil, err
		}
	}
	s.mu.Lock()
	pl := &slicePlan{newPass: !s.state.PassRunning || s.state.ConfigKey != s.opt.key() || s.opt.Fresh && !s.freshStarted}
	s.freshStarted = true
	stack := s.stack
	if pl.newPass {
		// The pass has begun as far as the next plan is concerned.
		s.state.PassRunning, s.state.ConfigKey, s.state.PassRoots = true, s.opt.key(), nil
		stack = nil
	}
	var added []string
	for _, r := range s.opt.Roots {
		if !slices.ContainsFunc(s.state.PassRoots, func(p string) bool { return pathid.Same(p, r) }) {
			added = append(added, r)
		}
	}
	pl.roots = slices.DeleteFunc(slices.Clone(s.state.PassRoots), func(p string) bool { return !s.underRoots(p) })
	pl.roots = append(pl.roots, added...)
	s.state.PassRoots = pl.roots
	switch {
	case pl.newPass:
		s.passNo = s.state.Pass + 1
	case s.passNo == 0:
		s.passNo = s.state.Pass
	}
	pass := s.passNo
	s.mu.Unlock()
	if s.cache != nil {
		s.cache.startPass(pass)
	}
	// New roots go on top: the next slices start on them.
	for i := len(added) - 1; i >= 0; i-- {
		stack = append(stack, item{Path: added[i]})
	}
	t0 := time.Now()
	pl.w = s.walk(ctx, stack, n, until)
	if traceScan {
		fmt.Fprintf(os.Stderr, "walk %d dirs %v\n", pl.w.dirs, time.Since(t0))
	}
	// Unread items keep their keys; new ones get higher sequence numbers in
	// stack order, so a reload rebuilds the same stack.
	for i := range pl.w.pending {
		if pl.w.pending[i].key == "" {
			pl.w.pending[i].key = prefixQueue + string(store.U64(s.seq))
			pl.fresh = append(pl.fresh, pl.w.pending[i])
			s.seq++
		}
	}
	pl.seq = s.seq
	s.stack = pl.w.pending
	if s.stack == nil {
		s.stack = []item{}
	}
	return pl, nil
}

// commit writes one planned slice in one batch: consumed queue entries
// removed, new unread ones queued, projects upserted, the pass finished
// when nothing is left, and the round (if given) recorded.
func (s *Scanner) commit(ctx context.Context, pl *slicePlan, round *Round) (State, error) {
	w := pl.w
	var (
		next    State
		written []*local.Project
		rev     uint64
	)
	t0 := time.Now()
	s.lastCommit = t0
	defer func() {
		if traceScan {
			fmt.Fprintf(os.Stderr, "commit %d dirs %d fresh %v (%d directories listed by this scanner so far)\n", w.dirs, len(pl.fresh), time.Since(t0), s.listings.Load())
		}
	}()
	s.lease.Progress()
	defer s.lease.Progress()
	err := s.st.Update(ctx, func(tx *store.Tx) error {
		if err := tx.CheckFence(fenceName, s.epoch); err != nil {
			return err
		}
		if err := s.ensureKnown(tx); err != nil {
			return err
		}
		cur, err := tx.ScanState()
		if err != nil {
			return err
		}
		if pl.newPass {
			if err := clearPrefix(tx, prefixQueue); err != nil {
				return err
			}
			if err := clearPrefix(tx, prefixSeen); err != nil {
				return err
			}
			if cur.ConfigKey != s.opt.key() {
				// Other walk settings: what earlier passes covered says
				// nothing any more (going back to settings used long ago
				// must not bring an old pass's claim back).
				cur.Roots = nil
			}
			cur.Pass++
			cur.PassRunning = true
			cur.PassStarted = s.now()
			cur.PassDirs, cur.PassProjects, cur.PassGaps, cur.PassGapCount = 0, 0, nil, 0
			cur.PassRejected, cur.PassRejectedCount = nil, 0
			cur.ConfigKey = s.opt.key()
		}
		cur.PassRoots = pl.roots
		cur.Scanner = os.Getpid()
		for _, it := range w.consumed {
			if it.key != "" {
				tx.Delete(it.key)
			}
		}
		for _, it := range pl.fresh {
			if it.key == "" {
				continue
			}
			v, _ := json.Marshal(it)
			tx.Put(it.key, v)
		}
		if pl.seq > readSeq(tx) {
			tx.Put(keyQueueSeq, store.U64(pl.seq))
		}
		for i := range w.found {
			f := &w.found[i]
			if k := s.lookup(pathid.Key(f.root)); k != nil && k.settled(f) {
				tx.Put(prefixSeen+k.id, nil) // seen, and its record stays as it is
				continue
			}
			if err := s.upsert(tx, *f); err != nil {
				return err
			}
		}
		cur.PassDirs += w.dirs
		cur.PassProjects += len(w.found)
		for _, g := range w.gaps {
			cur.PassGapCount++
			if len(cur.PassGaps) < local.MaxGaps {
				cur.PassGaps = append(cur.PassGaps, g)
			}
		}
		for _, g := range w.rejected {
			cur.PassRejectedCount++
			if len(cur.PassRejected) < local.MaxGaps {
				cur.PassRejected = append(cur.PassRejected, g)
			}
		}
		cur.Queued = len(w.pending)
		if len(w.pending) == 0 {
			if err := s.finishPass(tx, &cur); err != nil {
				return err
			}
		}
		if round != nil {
			cur.Rounds++
			cur.LastRound = *round
		}
		next = cur
		written, rev = tx.Written(), tx.CommitRevision()
		return tx.PutScanState(cur)
	})
	if err != nil {
		// The caller drops its in-memory stack (the store is the truth
		// again): this may run beside the next slice's plan, which owns it.
		return State{}, err
	}
	// The next slice's walk reads what is known while this commit finishes.
	s.noteWritten(written, rev)
	s.mu.Lock()
	s.state = next
	if !next.PassRunning {
		s.stampedAt = map[string]time.Time{}
	}
	s.mu.Unlock()
	if s.Progress != nil {
		s.Progress(next)
	}
	return next, nil
}

// load reads the persisted state and queue (a stack: highest key on top),
// and what is known of the records.
func (s *Scanner) load(ctx context.Context) error {
	return s.st.View(ctx, s.loadFrom)
}

func (s *Scanner) loadFrom(r *store.Reader) error {
	st, err := r.ScanState()
	if err != nil {
		return err
	}
	ks, err := readKnown(r, s.opt.RecordsAt)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.state, s.known, s.stampedAt = st, ks, map[string]time.Time{}
	s.mu.Unlock()
	stack := []item{}
	seq := uint64(0)
	if v, ok, _ := r.Get(keyQueueSeq); ok && len(v) == 8 {
		seq = store.ReadU64(v)
	}
	cardIDs, err := cardIDsOfErr(r, s.st.MachineID())
	if err != nil {
		return err
	}
	if err := r.Scan(prefixQueue, func(k string, v []byte) bool {
		var it item
		if json.Unmarshal(v, &it) != nil {
			it = item{} // a damaged entry: consumed and dropped
		}
		it.key = k
		stack = append(stack, it)
		return true
	}); err != nil {
		return err
	}
	s.stack, s.seq, s.cardIDs = stack, seq, cardIDs
	return nil
}

func (s *Scanner) underRoots(p string) bool {
	return slices.ContainsFunc(s.opt.Roots, func(r string) bool { return pathid.Within(r, p) })
}

// rootOf returns the discovery root that holds p ("" if none).
func (s *Scanner) rootOf(p string) string {
	for _, r := range s.opt.Roots {
		if pathid.Within(r, p) {
			return r
		}
	}
	return ""
}

func readSeq(tx *store.Tx) uint64 {
	v, ok, _ := tx.Get(keyQueueSeq)
	if !ok {
		return 0
	}
	return store.ReadU64(v)
}

func clearPrefix(tx *store.Tx, prefix string) error {
	var keys []string
	if err := tx.Scan(prefix, func(k string, _ []byte) bool { keys = append(keys, k); return true }); err != nil {
		return err
	}
	for _, k := range keys {
		tx.Delete(k)
	}
	return nil
}
