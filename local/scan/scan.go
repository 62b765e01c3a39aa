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
// rows, its persisted walk stack and the records seen in the running pass,
// go through their store doors (store.ScanQueue, store.ScanSeen).
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

const fenceName = "scan"

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
	Path  string
	Depth int
	// seq is its place in the store's queue (store.ScanQueue) when queued
	// is set; an item only in memory is not queued.
	seq    uint64
	queued bool
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
	carried *slicePlan
	// lastCommit is when the last commit began (guarded by mu).
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
	coarsen      func(path string, t nofollow.Times) nofollow.Times
	onFound      func(root string) // called for each project the walk finds
	beforeCommit func()            // called as each commit begins
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
	seq, err := store.ScanQueue.Next(r)
	if err != nil {
		return err
	}
	cardIDs, err := cardIDsOfErr(r, s.st.MachineID())
	if err != nil {
		return err
	}
	if err := store.ScanQueue.Each(r, func(n uint64, q store.ScanItem, err error) bool {
		if err != nil {
			q = store.ScanItem{} // a damaged entry: consumed and dropped
		}
		stack = append(stack, item{Path: q.Path, Depth: q.Depth, seq: n, queued: true})
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
