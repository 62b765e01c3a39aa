package scan

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"sync"
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
}

// walk reads directories depth first with a few parallel workers, popping
// from the top of the stack. Each worker lists a directory once; d_type from
// the listing tells directories apart without a stat per entry.
func (s *Scanner) walk(ctx context.Context, stack []item, n int, until time.Time) walkResult {
	// Listings are kept only when their directory had not changed for a
	// while before this moment (dirCache.keep): taken once, before any
	// directory of the slice is looked at.
	began := time.Now()
	var (
		mu       sync.Mutex
		cond     = sync.NewCond(&mu)
		inflight int
		res      walkResult
		exclude  = s.excludes()
	)
	stack = slices.Clone(stack)
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
			children, proj, gap := s.readDir(it, exclude, began)
			s.lease.Progress() // the lease's progress rule (package lease)
			mu.Lock()
			inflight--
			res.consumed = append(res.consumed, it)
			// Push children in reverse so the first name is read first.
			for i := len(children) - 1; i >= 0; i-- {
				stack = append(stack, children[i])
			}
			if proj != nil {
				res.found = append(res.found, *proj)
				if s.onFound != nil {
					s.onFound(proj.root)
				}
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
	res.dirs = len(res.consumed)
	return res
}

// readDir lists one directory: it reports the project the directory is (if
// its own .codegraph holds the marker), the child directories to visit, and
// a gap for what it could not or may not cover.
//
// The directory is opened with no symlink in any component of its path (a
// directory swapped for a symlink since it was queued is refused, never
// followed), and its marker and metadata are read relative to that open
// directory, so nothing read can come from elsewhere.
func (s *Scanner) readDir(it item, exclude map[string]bool, began time.Time) (children []item, proj *found, gap *Gap) {
	if it.Path == "" || !s.underRoots(it.Path) {
		return nil, nil, nil // a damaged entry, or a root no longer configured
	}
	d, err := nofollow.OpenDir(it.Path)
	if err != nil {
		return nil, nil, openGap(it, err)
	}
	defer d.Close()
	ls, err := s.list(d, exclude, began)
	if err != nil {
		return nil, nil, gapFor(it.Path, err)
	}
	children, gap = s.expand(it, ls)
	if ls.marker {
		if v := marker.ProbeDir(d); v.Project {
			proj = s.project(d, v, ls.sources)
		}
	}
	return children, proj, gap
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
