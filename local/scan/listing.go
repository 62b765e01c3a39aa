package scan

import (
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
	"github.com/cgcat/cgcat/local/marker"
	"github.com/cgcat/cgcat/local/meta"
	"github.com/cgcat/cgcat/local/nofollow"
	"github.com/cgcat/cgcat/local/pathid"
)

// listing is what the walk takes from one directory's listing: everything
// it decides about the directory follows from this and from the walk
// settings, so a listing kept from an earlier pass (dircache.go) gives the
// same answer as listing again.
type listing struct {
	marker  bool     // it holds a .codegraph directory
	bad     string   // the first child directory name that is not UTF-8, made printable
	dirs    []string // child directories, without .codegraph and excluded names
	links   []string // symlinks (kept only when the walk follows them)
	sources []string // the names meta.Stamp looks at (kept only beside .codegraph)
}

// listDir lists d once. d_type from the listing tells directories apart
// without a stat per entry.
func (s *Scanner) listDir(d *nofollow.Dir, exclude map[string]bool) (*listing, error) {
	ls := &listing{}
	// Every name (sorted out only beside a .codegraph) and the child
	// directories go into recycled slices first: growing fresh ones for
	// every directory was a tenth of a first pass's own CPU.
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	names, dirs := sc.names[:0], sc.dirs[:0]
	defer func() { sc.names, sc.dirs = recycled(names), recycled(dirs) }()
	err := d.List(func(name string, t fs.FileMode) {
		names = append(names, name)
		if name == marker.Dir && t.IsDir() {
			ls.marker = true
			return
		}
		if exclude[name] {
			return
		}
		if !utf8.ValidString(name) {
			// A path that is not UTF-8 cannot travel through JSON intact,
			// so it could never be handed out exactly: a gap, not a project.
			if t.IsDir() && ls.bad == "" {
				ls.bad = strings.ToValidUTF8(name, "\uFFFD")
			}
			return
		}
		switch {
		case t.IsDir():
			dirs = append(dirs, name)
		case t&fs.ModeSymlink != 0 && s.opt.FollowSymlinks:
			ls.links = append(ls.links, name)
		}
	})
	if err != nil {
		return nil, err
	}
	if len(dirs) > 0 {
		ls.dirs = slices.Clone(dirs)
	}
	if ls.marker {
		for _, n := range names {
			if len(ls.sources) < meta.MaxStampNames && meta.IsSource(n) {
				ls.sources = append(ls.sources, n)
			}
		}
	}
	return ls, nil
}

// scratch is what listDir builds a listing in.
type scratch struct{ names, dirs []string }

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// recycled empties s for reuse, dropping its strings (a directory of a
// million names does not keep them alive in the pool).
func recycled(s []string) []string {
	clear(s)
	return s[:0]
}

// expand turns a directory's listing into the items to visit below it and
// the gap (or nil) for what it cannot or may not cover there.
func (s *Scanner) expand(it item, ls *listing) (children []item, gap *Gap) {
	deeper := 0 // subdirectories not entered because of maxDepth
	for _, name := range ls.dirs {
		if it.Depth >= s.opt.MaxDepth {
			deeper++
			continue
		}
		children = append(children, item{Path: join(it.Path, name), Depth: it.Depth + 1, inRoots: true})
	}
	if s.opt.FollowSymlinks {
		for _, name := range ls.links {
			// Followed by its canonical target, which must lie under a
			// discovery root; that path is opened like any other. Resolved
			// afresh on every visit: a link's target is not the listing's.
			child := join(it.Path, name)
			target, err := pathid.Canonical(child)
			if err != nil {
				continue
			}
			if st, err := os.Stat(target); err == nil && st.IsDir() && s.underRoots(target) && !pathid.Within(target, it.Path) {
				if it.Depth >= s.opt.MaxDepth {
					deeper++
					continue
				}
				children = append(children, item{Path: target, Depth: it.Depth + 1, inRoots: true})
			}
		}
	}
	switch {
	case ls.bad != "":
		gap = &Gap{Path: filepath.Join(it.Path, ls.bad), Kind: local.GapName, Why: "directory name is not valid UTF-8; it is skipped"}
	case deeper > 0:
		gap = &Gap{Path: it.Path, Kind: local.GapDepth, Why: fmt.Sprintf("%d folder(s) below here are deeper than discovery.maxDepth %d and were not searched; raise discovery.maxDepth to include them", deeper, s.opt.MaxDepth)}
	}
	return children, gap
}

// list is d's listing: the one kept from an earlier pass when d's identity
// and change times say it cannot differ (dircache.go), else a fresh one,
// kept for the passes after when it may be. start is a moment before d was
// opened (see dirCache.keep).
func (s *Scanner) list(d *nofollow.Dir, exclude map[string]bool, start time.Time) (*listing, error) {
	c := s.cache
	if c == nil {
		s.listings.Add(1)
		return s.listDir(d, exclude)
	}
	t, err := d.Times()
	ok := err == nil && c.trusts(d, t.ID.Dev)
	if ok && s.coarsen != nil {
		t = s.coarsen(d.Path(), t)
	}
	if ok {
		if ls := c.get(t); ls != nil {
			return ls, nil
		}
	}
	s.listings.Add(1)
	ls, err := s.listDir(d, exclude)
	if err == nil && ok {
		c.keep(t, ls, start)
	}
	return ls, err
}

// excludes is the set of names the walk never enters: .codegraph and the
// excluded names.
func (s *Scanner) excludes() map[string]bool {
	exclude := map[string]bool{marker.Dir: true}
	for _, e := range s.opt.ExcludeNames {
		exclude[e] = true
	}
	return exclude
}

// stampNow is meta.Stamp of a project root now, from the directory cache's
// listing when the root did not change since it was listed (a pass's end
// then reads no listing of an unchanged project). The root is opened with
// no symlink in its path, as the walk opens it.
func (s *Scanner) stampNow(root string) uint64 {
	d, err := nofollow.OpenDir(root)
	if err != nil {
		return 0
	}
	defer d.Close()
	ls, err := s.list(d, s.excludes(), time.Now())
	if err != nil {
		return 0
	}
	if !ls.marker {
		// No .codegraph any more: the listing kept no source names.
		return meta.Stamp(root)
	}
	return meta.StampNames(root, ls.sources)
}

// join is filepath.Join for a clean directory path and one plain name (a
// name from a listing), without cleaning again.
func join(dir, name string) string {
	if len(dir) > 0 && os.IsPathSeparator(dir[len(dir)-1]) {
		return dir + name
	}
	return dir + string(filepath.Separator) + name
}
