// Package scan discovers projects (R8–R11): a sliced, resumable, parallel
// walk of the discovery roots whose queue lives in the store, so a killed
// scanner's successor resumes where it stopped.
//
// Vocabulary: a pass is one complete traversal of every root; a round is
// the work done in one budget (maxDirectoriesPerRound / maxRoundMs); a slice
// is one batch (maxDirectoriesPerSlice / maxSliceMs) committed to the store
// in one write. Only the holder of the scan lease runs slices; every batch
// carries its fencing number.
//
// The scanner never runs a program, never opens a CodeGraph database, never
// descends into .codegraph, and never walks up from a directory to claim a
// parent.
package scan

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/config"
	"github.com/cgcat/cgcat/local/lease"
	"github.com/cgcat/cgcat/local/meta"
	"github.com/cgcat/cgcat/local/nofollow"
	"github.com/cgcat/cgcat/local/pathid"
	"github.com/cgcat/cgcat/local/store"
	"github.com/cgcat/cgcat/outbox"
	"github.com/zeebo/xxh3"
)

const (
	keyState    = "scan/state"
	keyQueueSeq = "scan/qseq"
	prefixQueue = "scan/q/"    // scan/q/<seq BE> → item
	prefixSeen  = "scan/seen/" // scan/seen/<id> → "" for records seen in this pass
	fenceName   = "scan"
	// maxGaps bounds how many uncovered places are listed by path.
	maxGaps = 50
)

var traceScan = os.Getenv("CGCAT_SCAN_TRACE") == "1"

// Coverage values.
const (
	CoverageComplete = "complete"
	CoveragePartial  = "partial"
)

// Gap is a place the scan could not cover, and why.
type Gap struct {
	Path string `json:"path"`
	Why  string `json:"why"`
}

// State is the persisted progress of discovery.
type State struct {
	Pass          uint64    `json:"pass"`          // number of the current (or last) pass
	PassRunning   bool      `json:"passRunning"`   // a pass has begun and not finished
	PassStarted   time.Time `json:"passStarted"`   //
	PassDirs      int       `json:"passDirs"`      // directories read in this pass
	PassProjects  int       `json:"passProjects"`  // projects seen in this pass
	PassGaps      []Gap     `json:"passGaps"`      // gaps found so far in this pass
	PassGapCount  int       `json:"passGapCount"`  //
	ConfigKey     uint64    `json:"configKey"`     // hash of the walk settings the queue was built with
	Queued        int       `json:"queued"`        // directories waiting in the queue
	LastCompleted time.Time `json:"lastCompleted"` // when the last pass finished
	// Coverage of the last finished pass: complete when it read every
	// directory under every root, partial otherwise.
	Coverage  string `json:"coverage"`
	Gaps      []Gap  `json:"gaps"` // gaps of the last finished pass
	GapCount  int    `json:"gapCount"`
	Rounds    uint64 `json:"rounds"`
	LastRound Round  `json:"lastRound"`
}

// Round summarises one budgeted round.
type Round struct {
	Started   time.Time `json:"started"`
	Dirs      int       `json:"dirs"`
	Projects  int       `json:"projects"`
	Elapsed   Duration  `json:"elapsed"`
	Truncated string    `json:"truncated,omitempty"` // which budget ended it early
	Finished  bool      `json:"finished"`            // the pass finished in this round
}

// Duration marshals as milliseconds.
type Duration time.Duration

func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).Milliseconds()) }
func (d *Duration) UnmarshalJSON(b []byte) error {
	var ms int64
	err := json.Unmarshal(b, &ms)
	*d = Duration(time.Duration(ms) * time.Millisecond)
	return err
}

// item is one directory waiting to be read.
type item struct {
	Path  string `json:"p"`
	Depth int    `json:"d"`
	key   string // its queue key ("" while only in memory)
}

// ReadState returns the persisted discovery state.
func ReadState(r interface {
	Get(string) ([]byte, bool, error)
}) (State, error) {
	var st State
	v, ok, err := r.Get(keyState)
	if err != nil || !ok {
		return st, err
	}
	if err := json.Unmarshal(v, &st); err != nil {
		return State{}, fmt.Errorf("scan state is unreadable: %w", err)
	}
	return st, nil
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
	// Workers read directories in parallel; zero means 4.
	Workers int
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
		RoundDirs:      d.MaxDirectoriesPerRound,
		RoundTime:      time.Duration(d.MaxRoundMs) * time.Millisecond,
		Meta:           meta.Limits{MaxBytesPerFile: c.Metadata.MaxBytesPerFile, MaxBytesPerProject: c.Metadata.MaxBytesPerProject},
	}
}

func (o Options) key() uint64 {
	h := xxh3.New()
	fmt.Fprintf(h, "%d|%v|%q|", o.MaxDepth, o.FollowSymlinks, o.ExcludeNames)
	for _, r := range o.Roots {
		fmt.Fprintf(h, "%q|", pathid.Key(r))
	}
	return h.Sum64()
}

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
	err := st.Update(ctx, func(tx *store.Tx) error {
		s.epoch = tx.BumpFence(fenceName)
		return nil
	})
	if err != nil {
		l.Release()
		return nil, err
	}
	return s, nil
}

// Close releases the lease. The queue stays for whoever scans next.
func (s *Scanner) Close() error { return s.lease.Release() }

// RunRound runs slices until the pass finishes or a round budget is spent.
// A new pass starts when none is running.
func (s *Scanner) RunRound(ctx context.Context) (Round, error) {
	r := Round{Started: s.now()}
	deadline := r.Started.Add(s.opt.RoundTime)
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
	for {
		budget := min(s.opt.SliceDirs, s.opt.RoundDirs-r.Dirs)
		sliceEnd := s.now().Add(s.opt.SliceTime)
		if sliceEnd.After(deadline) {
			sliceEnd = deadline
		}
		pl, err := s.plan(ctx, budget, sliceEnd)
		if err != nil {
			_ = wait()
			return r, err
		}
		if err := wait(); err != nil {
			s.stack = nil // the store is the truth again; reload next time
			return r, err
		}
		r.Dirs += len(pl.w.consumed)
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
		if stop {
			if _, err := s.commit(ctx, pl); err != nil {
				return r, err
			}
			r.Elapsed = Duration(s.now().Sub(r.Started))
			return r, s.endRound(ctx, r)
		}
		inflight = make(chan error, 1)
		go func(pl *slicePlan, done chan error) {
			_, err := s.commit(ctx, pl)
			done <- err
		}(pl, inflight)
	}
}

// RunSlice runs exactly one slice (for `cgcat scan --once` and for a tool
// call on an empty catalog that must answer within its budget).
func (s *Scanner) RunSlice(ctx context.Context, dirs int, until time.Time) (State, error) {
	res, err := s.slice(ctx, dirs, until)
	return res.state, err
}

func (s *Scanner) endRound(ctx context.Context, r Round) error {
	return s.st.Update(ctx, func(tx *store.Tx) error {
		if err := tx.CheckFence(fenceName, s.epoch); err != nil {
			return err
		}
		st, err := ReadState(tx)
		if err != nil {
			return err
		}
		st.Rounds++
		st.LastRound = r
		return putState(tx, st)
	})
}

type sliceResult struct {
	dirs, projects int
	state          State
}

// found is a project seen in this slice, with metadata read outside the store.
type found struct {
	root string
	meta local.Metadata
}

// slice reads up to n directories from the queue (and their children, depth
// first, in memory) until the deadline, then commits in one batch: consumed
// queue entries removed, unread ones queued, projects upserted.
//
// The queue is a stack: depth-first keeps it to about depth × fan-out
// entries instead of a whole tree level, so a slice writes little. The
// holder of the lease keeps it in memory between slices and reads the store
// only when it starts (or after a failed commit).
func (s *Scanner) slice(ctx context.Context, n int, until time.Time) (sliceResult, error) {
	pl, err := s.plan(ctx, n, until)
	if err != nil {
		return sliceResult{}, err
	}
	return s.commit(ctx, pl)
}

// slicePlan is one walked slice waiting to be committed.
type slicePlan struct {
	w       walkResult
	newPass bool
	fresh   []item // unread items first queued by this slice
	seq     uint64 // next queue sequence number after this slice's keys
}

// plan walks one slice from the in-memory stack and gives the unread new
// items their queue keys, so the next slice can walk before this one is
// committed.
func (s *Scanner) plan(ctx context.Context, n int, until time.Time) (*slicePlan, error) {
	if s.stack == nil {
		if err := s.load(ctx); err != nil {
			return nil, err
		}
	}
	s.mu.Lock()
	pl := &slicePlan{newPass: !s.state.PassRunning || s.state.ConfigKey != s.opt.key()}
	if pl.newPass {
		// The pass has begun as far as the next plan is concerned.
		s.state.PassRunning, s.state.ConfigKey = true, s.opt.key()
	}
	s.mu.Unlock()
	stack := s.stack
	if pl.newPass {
		stack = nil
		for i := len(s.opt.Roots) - 1; i >= 0; i-- {
			stack = append(stack, item{Path: s.opt.Roots[i]})
		}
	}
	t0 := time.Now()
	pl.w = s.walk(ctx, stack, n, until)
	if traceScan {
		fmt.Fprintf(os.Stderr, "walk %d dirs %v\n", len(pl.w.consumed), time.Since(t0))
	}
	// Unread items keep their keys; new ones get higher sequence numbers in
	// stack order, so a reload rebuilds the same stack.
	for i := range pl.w.pending {
		if pl.w.pending[i].key == "" {
			pl.w.pending[i].key = prefixQueue + string(be64(s.seq))
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
// removed, new unread ones queued, projects upserted, and the pass finished
// when nothing is left.
func (s *Scanner) commit(ctx context.Context, pl *slicePlan) (sliceResult, error) {
	var res sliceResult
	w := pl.w
	var next State
	t0 := time.Now()
	defer func() {
		if traceScan {
			fmt.Fprintf(os.Stderr, "commit %d dirs %d fresh %v\n", len(w.consumed), len(pl.fresh), time.Since(t0))
		}
	}()
	err := s.st.Update(ctx, func(tx *store.Tx) error {
		if err := tx.CheckFence(fenceName, s.epoch); err != nil {
			return err
		}
		cur, err := ReadState(tx)
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
			cur.Pass++
			cur.PassRunning = true
			cur.PassStarted = s.now()
			cur.PassDirs, cur.PassProjects, cur.PassGaps, cur.PassGapCount = 0, 0, nil, 0
			cur.ConfigKey = s.opt.key()
		}
		for _, it := range w.consumed {
			if it.key != "" {
				tx.Delete(it.key)
			}
		}
		for _, it := range pl.fresh {
			v, _ := json.Marshal(it)
			tx.Put(it.key, v)
		}
		if pl.seq > readSeq(tx) {
			tx.Put(keyQueueSeq, be64(pl.seq))
		}
		for _, f := range w.found {
			if err := s.upsert(tx, f); err != nil {
				return err
			}
		}
		cur.PassDirs += len(w.consumed)
		cur.PassProjects += len(w.found)
		for _, g := range w.gaps {
			cur.PassGapCount++
			if len(cur.PassGaps) < maxGaps {
				cur.PassGaps = append(cur.PassGaps, g)
			}
		}
		cur.Queued = len(w.pending)
		if len(w.pending) == 0 {
			if err := s.finishPass(tx, &cur); err != nil {
				return err
			}
		}
		next = cur
		return putState(tx, cur)
	})
	if err != nil {
		s.stack = nil // the store is the truth again; reload next time
		return res, err
	}
	s.mu.Lock()
	s.state = next
	s.mu.Unlock()
	res.state = next
	res.dirs, res.projects = len(w.consumed), len(w.found)
	if s.Progress != nil {
		s.Progress(res.state)
	}
	return res, nil
}

// load reads the persisted state and queue (a stack: highest key on top).
func (s *Scanner) load(ctx context.Context) error {
	return s.st.View(ctx, func(r *store.Reader) error {
		st, err := ReadState(r)
		if err != nil {
			return err
		}
		s.state = st
		s.stack = []item{}
		if v, ok, _ := r.Get(keyQueueSeq); ok && len(v) == 8 {
			s.seq = binary.BigEndian.Uint64(v)
		}
		return r.Scan(prefixQueue, func(k string, v []byte) bool {
			var it item
			if json.Unmarshal(v, &it) != nil {
				it = item{} // a damaged entry: consumed and dropped
			}
			it.key = k
			s.stack = append(s.stack, it)
			return true
		})
	})
}

// upsert binds a seen project root to its record: the same root keeps its id
// for ever (a re-index is the same project); a new root gets a new id.
func (s *Scanner) upsert(tx *store.Tx, f found) error {
	now := s.now()
	p, err := tx.ProjectByRoot(f.root)
	if err != nil {
		return err
	}
	h := MetaHash(f.meta)
	stable := false // a change GBrain's card must follow
	if p == nil {
		p = &local.Project{ID: store.NewProjectID(), Root: f.root, RecordRevision: 1, FirstSeen: now}
		stable = true
	} else if p.MetaHash == h && p.Availability == local.Present && p.IndexState == local.MarkerPresent && p.Why == "" {
		tx.Put(prefixSeen+p.ID, nil)
		return nil
	} else if p.MetaHash != h {
		p.RecordRevision++
		stable = true
	}
	if stable {
		outbox.Enqueue(tx, p.ID, p.RecordRevision, now)
	}
	p.Meta, p.MetaHash = f.meta, h
	p.Availability, p.IndexState, p.Why = local.Present, local.MarkerPresent, ""
	p.LastSeen, p.ValidatedAt = now, now
	tx.Put(prefixSeen+p.ID, nil)
	return tx.PutProject(p)
}

// finishPass ends a pass: records under the roots that this pass did not see
// get a direct re-check (only that may call a project missing, R13), the gaps
// become the catalog's coverage, and the seen set is cleared.
func (s *Scanner) finishPass(tx *store.Tx, st *State) error {
	seen := map[string]bool{}
	if err := tx.Scan(prefixSeen, func(k string, _ []byte) bool {
		seen[strings.TrimPrefix(k, prefixSeen)] = true
		return true
	}); err != nil {
		return err
	}
	var recheck []*local.Project
	if err := tx.Reader.Projects(func(p *local.Project) error {
		if seen[p.ID] || !s.underRoots(p.Root) {
			return nil
		}
		recheck = append(recheck, p)
		return nil
	}); err != nil {
		return err
	}
	for _, p := range recheck {
		v := Probe(p.Root)
		avail, state, why := v.Availability, v.IndexState, v.Why
		if r := s.rootOf(p.Root); r != "" && avail == local.Missing {
			if _, err := os.Stat(r); err != nil {
				// The whole root is gone: an offline volume is not a
				// deleted project (R13).
				avail, state, why = local.Inaccessible, local.MarkerUnknown, "its discovery root "+r+" is not reachable (offline volume?)"
			}
		}
		if v.Project {
			// Present but unseen: it lies in a part the walk did not reach
			// (depth, exclusion, a gap). Its record stays as it is.
			if p.Availability == local.Present {
				continue
			}
			why = ""
		} else if avail == local.Present {
			avail = local.Missing // the root is there, the index is not
		}
		if p.Availability == avail && p.IndexState == state && p.Why == why {
			continue
		}
		p.Availability, p.IndexState, p.Why = avail, state, why
		p.ValidatedAt = s.now()
		if err := tx.PutProject(p); err != nil {
			return err
		}
	}
	if err := clearPrefix(tx, prefixSeen); err != nil {
		return err
	}
	st.PassRunning = false
	st.LastCompleted = s.now()
	st.Gaps, st.GapCount = st.PassGaps, st.PassGapCount
	st.Coverage = CoverageComplete
	if st.GapCount > 0 {
		st.Coverage = CoveragePartial
	}
	st.Queued = 0
	return nil
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

func (s *Scanner) underRoots(p string) bool {
	return slices.ContainsFunc(s.opt.Roots, func(r string) bool { return pathid.Within(r, p) })
}

// walkResult is what one slice's walk saw.
type walkResult struct {
	consumed []item // directories read (or dropped) in this slice
	pending  []item // directories still to read
	found    []found
	gaps     []Gap
}

// walk reads directories depth first with a few parallel workers, popping
// from the top of the stack. Each worker lists a directory once; d_type from
// the listing tells directories apart without a stat per entry.
func (s *Scanner) walk(ctx context.Context, stack []item, n int, until time.Time) walkResult {
	var (
		mu       sync.Mutex
		cond     = sync.NewCond(&mu)
		inflight int
		res      walkResult
		exclude  = map[string]bool{MarkerDir: true}
	)
	stack = slices.Clone(stack)
	for _, e := range s.opt.ExcludeNames {
		exclude[e] = true
	}
	worker := func() {
		mu.Lock()
		defer mu.Unlock()
		for {
			for len(stack) == 0 && inflight > 0 {
				cond.Wait()
			}
			if len(stack) == 0 || len(res.consumed)+inflight >= n || ctx.Err() != nil || !time.Now().Before(until) {
				cond.Broadcast()
				return
			}
			it := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			inflight++
			mu.Unlock()
			children, proj, gap := s.readDir(it, exclude)
			mu.Lock()
			inflight--
			res.consumed = append(res.consumed, it)
			// Push children in reverse so the first name is read first.
			for i := len(children) - 1; i >= 0; i-- {
				stack = append(stack, children[i])
			}
			if proj != nil {
				res.found = append(res.found, *proj)
			}
			if gap != nil {
				res.gaps = append(res.gaps, *gap)
			}
			cond.Broadcast()
		}
	}
	var wg sync.WaitGroup
	for range s.opt.Workers {
		wg.Add(1)
		go func() { defer wg.Done(); worker() }()
	}
	wg.Wait()
	res.pending = stack
	return res
}

// readDir lists one directory: it reports the project the directory is (if
// its own .codegraph holds the marker) and the child directories to visit.
//
// The directory is opened with no symlink in any component of its path (a
// directory swapped for a symlink since it was queued is refused, never
// followed), and its marker and metadata are read relative to that open
// directory, so nothing read can come from elsewhere. d.ID() is its
// identity (device, inode) for deny-by-identity checks.
func (s *Scanner) readDir(it item, exclude map[string]bool) (children []item, proj *found, gap *Gap) {
	if it.Path == "" || !s.underRoots(it.Path) {
		return nil, nil, nil // a damaged entry, or a root no longer configured
	}
	d, err := nofollow.OpenDir(it.Path)
	if err != nil {
		return nil, nil, openGap(it, err)
	}
	defer d.Close()
	hasMarker := false
	badName := ""
	err = d.List(func(name string, t fs.FileMode) {
		if name == MarkerDir && t.IsDir() {
			hasMarker = true
			return
		}
		if exclude[name] || it.Depth >= s.opt.MaxDepth {
			return
		}
		if !utf8.ValidString(name) {
			// A path that is not UTF-8 cannot travel through JSON intact,
			// so it could never be handed out exactly: a gap, not a project.
			if t.IsDir() && badName == "" {
				badName = strings.ToValidUTF8(name, "\uFFFD")
			}
			return
		}
		child := filepath.Join(it.Path, name)
		switch {
		case t.IsDir():
			children = append(children, item{Path: child, Depth: it.Depth + 1})
		case t&fs.ModeSymlink != 0 && s.opt.FollowSymlinks:
			// Followed by its canonical target, which must lie under a
			// discovery root; that path is opened like any other.
			target, err := pathid.Canonical(child)
			if err != nil {
				return
			}
			if st, err := os.Stat(target); err == nil && st.IsDir() && s.underRoots(target) && !pathid.Within(target, it.Path) {
				children = append(children, item{Path: target, Depth: it.Depth + 1})
			}
		}
	})
	if err != nil {
		return nil, nil, gapFor(it.Path, err)
	}
	if badName != "" {
		gap = &Gap{Path: filepath.Join(it.Path, badName), Why: "directory name is not valid UTF-8; it is skipped"}
	}
	if hasMarker {
		if v := ProbeDir(d); v.Project {
			proj = &found{root: it.Path, meta: meta.ReadDir(d, s.opt.Meta)}
		}
	}
	return children, proj, gap
}

func gapFor(path string, err error) *Gap {
	if errors.Is(err, fs.ErrNotExist) {
		return nil // vanished while we walked: nothing to cover
	}
	if errors.Is(err, fs.ErrPermission) {
		return &Gap{Path: path, Why: "permission denied"}
	}
	return &Gap{Path: path, Why: errText(err)}
}

// MetaHash fingerprints the stable metadata: a change bumps recordRevision
// (and, later, re-projects a GBrain card). Diagnostics are not part of it.
func MetaHash(m local.Metadata) uint64 {
	m.Problems = nil
	b, _ := json.Marshal(m)
	return xxh3.Hash(b)
}

func putState(tx *store.Tx, st State) error {
	v, err := json.Marshal(st)
	if err != nil {
		return err
	}
	tx.Put(keyState, v)
	return nil
}

func readSeq(tx *store.Tx) uint64 {
	v, ok, _ := tx.Get(keyQueueSeq)
	if !ok || len(v) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(v)
}

func be64(n uint64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, n)
	return b
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
