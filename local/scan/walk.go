package scan

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/marker"
	"github.com/cgcat/cgcat/local/meta"
	"github.com/cgcat/cgcat/local/nofollow"
	"github.com/cgcat/cgcat/local/pathid"
)

// walkResult is what one slice's walk saw.
type walkResult struct {
	consumed []item // directories read (or dropped) in this slice, or of them those with a queue key (slicePlan.join)
	dirs     int    // how many directories were read (or dropped)
	pending  []item // directories still to read
	found    []found
	gaps     []Gap
	rejected []Gap // index files refused by the project rule
}

// walk reads directories depth first with a few parallel workers. Each
// worker walks its own stack (the last child pushed is read next) and hands
// half of it to the shared stack only while another worker waits for work,
// so a directory costs no lock and no wake-up: the shared stack and its
// condition variable are touched when a worker runs dry, not per
// directory. Each worker lists a directory once; d_type from the listing
// tells directories apart without a stat per entry. With one worker the
// order is exactly the stack's: the first name of a listing is read first.
func (s *Scanner) walk(ctx context.Context, stack []item, n int, until time.Time) walkResult {
	// Listings are kept only when their directory had not changed for a
	// while before this moment (dirCache.keep): taken once, before any
	// directory of the slice is looked at.
	began := time.Now()
	p := &walkPool{shared: slices.Clone(stack), n: int64(n), until: until, ctx: ctx}
	p.cond = sync.NewCond(&p.mu)
	exclude := s.excludes()
	workers := make([]walker, max(s.opt.Workers, 1))
	var wg sync.WaitGroup
	for i := range workers {
		wg.Add(1)
		go func(w *walker) {
			defer wg.Done()
			s.runWalker(p, w, exclude, began)
		}(&workers[i])
	}
	wg.Wait()
	res := walkResult{pending: p.shared}
	for i := range workers {
		w := &workers[i]
		res.consumed = append(res.consumed, w.consumed...)
		res.pending = append(res.pending, w.stack...)
		res.found = append(res.found, w.found...)
		res.gaps = append(res.gaps, w.gaps...)
		res.rejected = append(res.rejected, w.rejected...)
	}
	res.dirs = len(res.consumed)
	return res
}

// walkPool is what a slice's workers share: the directories no worker has
// taken yet, and when to stop.
type walkPool struct {
	mu     sync.Mutex
	cond   *sync.Cond
	shared []item // directories not taken by any worker (a stack)
	busy   int    // workers holding work (guarded by mu)
	idle   atomic.Int32
	taken  atomic.Int64 // directories taken, against n
	stop   atomic.Bool
	n      int64
	until  time.Time
	ctx    context.Context
}

// walker is one worker's part of a slice's walk.
type walker struct {
	stack    []item // its own directories still to read (a stack)
	consumed []item
	found    []found
	gaps     []Gap
	rejected []Gap
	active   bool // counted in walkPool.busy
}

// runWalker reads directories until the slice's budget is spent or no
// worker holds any more work.
func (s *Scanner) runWalker(p *walkPool, w *walker, exclude map[string]bool, began time.Time) {
	for {
		it, ok := p.next(w)
		if !ok {
			return
		}
		children, proj, gap, rej := s.readDir(it, exclude, began)
		s.lease.Progress() // the lease's progress rule (package lease)
		w.consumed = append(w.consumed, it)
		if rej != nil {
			w.rejected = append(w.rejected, *rej)
		}
		// Pushed in reverse so the first name is read first.
		for i := len(children) - 1; i >= 0; i-- {
			w.stack = append(w.stack, children[i])
		}
		if proj != nil {
			w.found = append(w.found, *proj)
			if s.onFound != nil {
				p.mu.Lock()
				s.onFound(proj.root)
				p.mu.Unlock()
			}
		}
		if gap != nil {
			w.gaps = append(w.gaps, *gap)
		}
		if len(w.stack) > 1 && p.idle.Load() > 0 {
			p.share(w)
		}
	}
}

// next is the directory w reads next: the top of its own stack, else the
// top of the shared one, waiting while other workers may still share some.
// It is false when the slice is over (its budget spent, the context done,
// or every directory read); what w holds then stays pending.
func (p *walkPool) next(w *walker) (item, bool) {
	if p.stop.Load() {
		return item{}, false
	}
	if len(w.stack) == 0 && !p.takeShared(w) {
		return item{}, false
	}
	if p.taken.Add(1) > p.n || p.ctx.Err() != nil || !time.Now().Before(p.until) {
		p.halt()
		return item{}, false
	}
	it := w.stack[len(w.stack)-1]
	w.stack = w.stack[:len(w.stack)-1]
	return it, true
}

// takeShared moves the top of the shared stack onto w's empty one, waiting
// while it is empty and another worker still holds work it may share.
func (p *walkPool) takeShared(w *walker) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if w.active {
		w.active = false
		p.busy--
	}
	for len(p.shared) == 0 {
		if p.busy == 0 || p.stop.Load() {
			p.cond.Broadcast() // every directory read: the others stop too
			return false
		}
		p.idle.Add(1)
		p.cond.Wait()
		p.idle.Add(-1)
	}
	w.stack = append(w.stack, p.shared[len(p.shared)-1])
	p.shared = p.shared[:len(p.shared)-1]
	w.active = true
	p.busy++
	return true
}

// share hands the bottom half of w's stack (the shallowest directories,
// likely the largest subtrees) to the shared stack for waiting workers.
func (p *walkPool) share(w *walker) {
	k := len(w.stack) / 2
	p.mu.Lock()
	p.shared = append(p.shared, w.stack[:k]...)
	p.cond.Broadcast()
	p.mu.Unlock()
	w.stack = append(w.stack[:0], w.stack[k:]...)
}

// halt ends the slice for every worker.
func (p *walkPool) halt() {
	p.mu.Lock()
	p.stop.Store(true)
	p.cond.Broadcast()
	p.mu.Unlock()
}

// readDir lists one directory: it reports the project the directory is (if
// its own .codegraph holds the marker), the child directories to visit, and
// a gap for what it could not or may not cover.
//
// The directory is opened with no symlink in any component of its path (a
// directory swapped for a symlink since it was queued is refused, never
// followed), and its marker and metadata are read relative to that open
// directory, so nothing read can come from elsewhere.
func (s *Scanner) readDir(it item, exclude map[string]bool, began time.Time) (children []item, proj *found, gap, rejected *Gap) {
	if it.Path == "" || !it.inRoots && !s.underRoots(it.Path) {
		return nil, nil, nil, nil // a damaged entry, or a root no longer configured
	}
	d, err := nofollow.OpenDir(it.Path)
	if err != nil {
		return nil, nil, openGap(it, err), nil
	}
	defer d.Close()
	if s.opt.Watch != nil {
		_ = s.opt.Watch.AddDir(d) // before the listing: a change after it is an event
	}
	ls, err := s.list(d, exclude, began)
	if err != nil {
		return nil, nil, gapFor(it.Path, err), nil
	}
	children, gap = s.expand(it, ls)
	if it.shallow {
		children = nil
	}
	if ls.marker {
		if s.opt.Watch != nil {
			_ = s.opt.Watch.AddMarkerIn(d) // before the probe, for the same reason
		}
		switch v := marker.ProbeDir(d); {
		case v.Project:
			proj = s.project(d, v, ls.sources)
		case v.Rejected:
			rejected = &Gap{Path: filepath.Join(it.Path, marker.Dir, marker.File), Kind: local.GapRejected, Why: v.Why}
		}
	}
	return children, proj, gap, rejected
}

// Watcher is told of the directories a walk opens (package watch
// implements it; refused watches are its own to report).
type Watcher interface {
	AddDir(d *nofollow.Dir) error
	AddMarkerIn(d *nofollow.Dir) error
}

// project reads what a found project's record needs, through its open
// directory: its metadata (unless its stamp says nothing changed since it
// was read), the identity of its database, and the identities of the
// directories that lead to it.
func (s *Scanner) project(d *nofollow.Dir, v marker.Verdict, sources []string) *found {
	root := d.Path()
	f := &found{root: root, stamp: meta.StampNames(root, sources), lineage: s.lineage(root)}
	if !v.DB.IsZero() {
		f.dbID = v.DB.String()
	}
	key := pathid.Key(root)
	s.mu.Lock()
	var known uint64
	if s.known != nil {
		known = s.known.byRoot[key].metaStamp()
	}
	if s.stampedAt != nil {
		s.stampedAt[key] = time.Now()
	}
	s.mu.Unlock()
	if f.stamp == 0 || known != f.stamp {
		m := meta.ReadDir(d, s.opt.Meta)
		f.meta = &m
	}
	return f
}

// lineage is the file identity of every directory from root's discovery
// root down to root itself.
func (s *Scanner) lineage(root string) []string {
	top := s.rootOf(root)
	if top == "" {
		return nil
	}
	var ids []string
	for d := root; ; d = filepath.Dir(d) {
		if id, err := pathid.DirKey(d); err == nil {
			ids = append(ids, id)
		}
		if pathid.Same(d, top) || filepath.Dir(d) == d {
			break
		}
	}
	slices.Reverse(ids)
	return ids
}

func gapFor(path string, err error) *Gap {
	if errors.Is(err, fs.ErrNotExist) {
		return nil // vanished while we walked: nothing to cover
	}
	if errors.Is(err, fs.ErrPermission) {
		return &Gap{Path: path, Kind: local.GapUnreadable, Why: "permission denied"}
	}
	return &Gap{Path: path, Kind: local.GapUnreadable, Why: marker.ErrText(err)}
}
