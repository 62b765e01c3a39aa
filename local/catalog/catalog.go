// Package catalog is the in-memory view of the store that every frontend
// answers from: records by id, the search index, and the scan state. It
// follows other processes' commits by watching the store's revision file and
// reloading only the records the change log names, so a query never waits
// for the database.
//
// It also owns the live re-check of a record before its path is handed out
// (R19). It never writes a project's files and never opens a CodeGraph
// database.
package catalog

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/pathid"
	"github.com/cgcat/cgcat/local/scan"
	"github.com/cgcat/cgcat/local/search"
	"github.com/cgcat/cgcat/local/store"
)

// Catalog is safe for concurrent use.
type Catalog struct {
	st *store.Store

	mu       sync.RWMutex
	rev      uint64
	projects map[string]*local.Project
	index    *search.Index
	state    scan.State
	secret   []byte
	stamp    fileStamp // revision file as last seen
	// allowed caches sharing decisions: view key → id → allowed.
	allowed map[uint64]map[string]bool
	// syncMu keeps one reload at a time.
	syncMu sync.Mutex
}

type fileStamp struct {
	mod  time.Time
	size int64
	ok   bool
}

// Load reads the whole catalog into memory.
func Load(ctx context.Context, st *store.Store) (*Catalog, error) {
	c := &Catalog{st: st, projects: map[string]*local.Project{}, index: search.New()}
	if err := c.reload(ctx, true); err != nil {
		return nil, err
	}
	return c, nil
}

// Store is the store behind the catalog.
func (c *Catalog) Store() *store.Store { return c.st }

// Sync brings the view up to date with commits made by any process. It
// costs one stat when nothing changed. When the store stays busy or cannot
// be read for a moment, the last good view is kept and Sync succeeds: a
// query is better answered a little stale than not at all. Only a damaged
// or newer-format store is an error.
func (c *Catalog) Sync(ctx context.Context) error {
	st := stampOf(c.st.RevisionFile())
	c.mu.RLock()
	same := st == c.stamp
	c.mu.RUnlock()
	if same {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, syncWait)
	defer cancel()
	err := c.reload(ctx, false)
	var ce *store.CorruptError
	if errors.As(err, &ce) || errors.Is(err, store.ErrNewerFormat) {
		return err
	}
	return nil
}

// syncWait bounds how long a query waits for the store to reload.
const syncWait = 2 * time.Second

// ForceSync reloads whatever changed, without trusting the revision file
// (after this process committed itself, for instance).
func (c *Catalog) ForceSync(ctx context.Context) error { return c.reload(ctx, false) }

func stampOf(path string) fileStamp {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}
	}
	return fileStamp{mod: fi.ModTime(), size: fi.Size(), ok: true}
}

func (c *Catalog) reload(ctx context.Context, full bool) error {
	c.syncMu.Lock()
	defer c.syncMu.Unlock()
	stamp := stampOf(c.st.RevisionFile())
	c.mu.RLock()
	since := c.rev
	c.mu.RUnlock()
	var (
		changed  []*local.Project
		all      bool
		rev      uint64
		state    scan.State
		secret   []byte
		complete bool
	)
	err := c.st.View(ctx, func(r *store.Reader) error {
		rev = r.Revision()
		secret = r.Secret()
		var err error
		if state, err = scan.ReadState(r); err != nil {
			return err
		}
		if !full {
			var ids []string
			ids, complete, err = r.ChangedSince(since)
			if err != nil {
				return err
			}
			if complete {
				for _, id := range ids {
					p, err := r.Project(id)
					if err != nil {
						return err
					}
					if p != nil {
						changed = append(changed, p)
					}
				}
				return nil
			}
		}
		all = true
		return r.Projects(func(p *local.Project) error { changed = append(changed, p); return nil })
	})
	if err != nil {
		return err
	}
	// The index has its own lock, and a search calls back into c.mu (the
	// keep filter): never hold c.mu while touching the index.
	c.mu.RLock()
	ix := c.index
	c.mu.RUnlock()
	if all {
		ix = search.New()
	}
	for _, p := range changed {
		ix.Put(docOf(p))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if all {
		c.projects = make(map[string]*local.Project, len(changed))
		c.allowed = nil
	}
	for _, p := range changed {
		c.projects[p.ID] = p
		for _, m := range c.allowed {
			delete(m, p.ID)
		}
	}
	c.index = ix
	c.rev, c.state, c.secret, c.stamp = rev, state, secret, stamp
	return nil
}

func docOf(p *local.Project) search.Doc {
	m := p.Meta
	return search.Doc{
		ID:          p.ID,
		SortKey:     strings.ToLower(m.Name) + "\x00" + p.Root,
		Name:        m.Name,
		Aliases:     m.Aliases,
		Packages:    m.Packages,
		Keywords:    m.Keywords,
		Tags:        m.Tags,
		Description: m.Description,
		Readme:      m.Readme,
		Path:        tailPath(p.Root, 3),
	}
}

// tailPath keeps the last n segments of a root: the folders that name a
// project (".../services/payments") without the ones every project shares
// ("/home/me/code"), which would make every project match "code".
func tailPath(root string, n int) string {
	parts := strings.FieldsFunc(root, func(r rune) bool { return r == '/' || r == '\\' })
	if len(parts) > n {
		parts = parts[len(parts)-n:]
	}
	return strings.Join(parts, "/")
}

// Revision is the catalogRevision of the view.
func (c *Catalog) Revision() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.rev
}

// State is the discovery state as of the view.
func (c *Catalog) State() scan.State {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.state
}

// Secret is the data dir's random key.
func (c *Catalog) Secret() []byte {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.secret
}

// Len is the number of records (of any availability, any view).
func (c *Catalog) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.projects)
}

// Get returns a copy of the record with id, or nil.
func (c *Catalog) Get(id string) *local.Project {
	c.mu.RLock()
	defer c.mu.RUnlock()
	p := c.projects[id]
	if p == nil {
		return nil
	}
	cp := *p
	return &cp
}

// Search ranks the records the policy lets this frontend see.
func (c *Catalog) Search(query string, pol Policy) []search.Hit {
	c.mu.RLock()
	ix := c.index
	c.mu.RUnlock()
	return ix.Search(query, c.visible(pol))
}

// SearchTop is Search cut to the first n hits, with the total count; only
// those n are sorted and explained.
func (c *Catalog) SearchTop(query string, pol Policy, n int) ([]search.Hit, int) {
	c.mu.RLock()
	ix := c.index
	c.mu.RUnlock()
	return ix.SearchTop(query, c.visible(pol), n)
}

// List returns the ids the policy lets this frontend see, in stable order.
func (c *Catalog) List(pol Policy) []string {
	c.mu.RLock()
	ix := c.index
	c.mu.RUnlock()
	return ix.List(c.visible(pol))
}

// visible is the keep filter for pol. Sharing decisions are cached per view
// and record (a path comparison per record per query was most of a search's
// cost) and dropped when the record changes.
func (c *Catalog) visible(pol Policy) func(string) bool {
	vk := pol.ViewKey()
	return func(id string) bool {
		c.mu.RLock()
		p := c.projects[id]
		ok, cached := c.allowed[vk][id]
		c.mu.RUnlock()
		if p == nil {
			return false
		}
		if cached {
			return ok
		}
		ok = pol.Allows(p.Root)
		c.mu.Lock()
		if c.projects[id] == p { // not replaced meanwhile
			if c.allowed == nil {
				c.allowed = map[uint64]map[string]bool{}
			}
			if c.allowed[vk] == nil {
				c.allowed[vk] = map[string]bool{}
			}
			c.allowed[vk][id] = ok
		}
		c.mu.Unlock()
		return ok
	}
}

// Check is the outcome of a live re-check of one record.
type Check struct {
	OK           bool // root canonical and unchanged, marker present, policy allows
	Allowed      bool // the live policy allows the root at all
	Availability local.Availability
	IndexState   local.IndexState
	Why          string
	At           time.Time
}

// Recheck looks at a record's root right now (R19): it still exists, it is
// still the same canonical path (a root swapped for a symlink to elsewhere
// fails), its own marker is there, and the live policy allows it.
func Recheck(p *local.Project, pol Policy) Check {
	ck := Check{At: time.Now().UTC(), Allowed: pol.Allows(p.Root)}
	if !ck.Allowed {
		ck.Availability, ck.IndexState, ck.Why = local.Unknown, local.MarkerUnknown, "not shared with this frontend"
		return ck
	}
	v := scan.Probe(p.Root)
	ck.Availability, ck.IndexState, ck.Why = v.Availability, v.IndexState, v.Why
	if !v.Project {
		if ck.Availability == local.Present {
			ck.Availability = local.Missing
		}
		return ck
	}
	canon, err := pathid.Canonical(p.Root)
	if err != nil || canon != filepath.Clean(p.Root) {
		ck.Availability, ck.IndexState = local.Missing, local.MarkerUnknown
		ck.Why = "the root is no longer the same directory (a symlink or rename now stands in its place)"
		return ck
	}
	if !pol.Allows(canon) {
		ck.Allowed = false
		ck.Availability, ck.Why = local.Unknown, "not shared with this frontend"
		return ck
	}
	ck.OK = true
	return ck
}
