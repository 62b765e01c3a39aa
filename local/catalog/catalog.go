// Package catalog is the in-memory read model every frontend answers from:
// records by id, the search index, the scan state and the last word from
// GBrain. It follows what writers publish (package view) — one stat per
// call when nothing changed, the changed records otherwise — and never opens
// the store, so no other process can make it wait.
//
// It also owns the sharing policy and the live re-check of a record before
// its path is handed out. It never writes a project's files and never opens
// a CodeGraph database.
package catalog

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/marker"
	"github.com/cgcat/cgcat/local/pathid"
	"github.com/cgcat/cgcat/local/search"
	"github.com/cgcat/cgcat/local/store"
	"github.com/cgcat/cgcat/local/view"
)

// Catalog is safe for concurrent use.
type Catalog struct {
	st     *store.Store
	follow *view.Follower

	mu       sync.RWMutex
	storeID  string
	seq, rev uint64
	projects map[string]*local.Project
	byRoot   map[string]string // pathid.Key(root) → id
	index    *search.Index
	state    local.ScanState
	gbrain   local.GBrainContact
	// cards is the mirror of GBrain's project cards by slug, byProject
	// their slugs by project id, cardIndex their search index (ids are
	// slugs).
	cards     map[string]*local.Card
	byProject map[string][]string
	cardIndex *search.Index
	lastErr   error // the last failure to follow the published catalog
	// allowed caches sharing decisions: view key → id → allowed.
	allowed map[uint64]map[string]bool
	// rootKeys maps each record's root key (store.Identity.RootKey) to its
	// id, built when first needed for a revision.
	rootKeys    map[string]string
	rootKeysRev uint64
	// syncMu keeps one reload at a time.
	syncMu sync.Mutex
}

// Load follows the published catalog of st's data dir. Nothing published
// yet is not an error: the catalog is empty until a writer publishes.
func Load(ctx context.Context, st *store.Store) (*Catalog, error) {
	c := &Catalog{st: st, follow: view.NewFollower(st.DataDir()), projects: map[string]*local.Project{}, byRoot: map[string]string{}, index: search.New(),
		cards: map[string]*local.Card{}, byProject: map[string][]string{}, cardIndex: search.New()}
	if err := c.ForceSync(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// Store is the store behind the catalog (for writers: discovery, GBrain).
func (c *Catalog) Store() *store.Store { return c.st }

// Sync brings the view up to date with what any process published. It
// costs one stat when nothing changed and never waits for another process,
// nor for another call of this process that is applying the news already:
// that call answers from the view as it is a moment longer. A damaged or
// missing publication keeps the last good view (Err says so).
func (c *Catalog) Sync(ctx context.Context) error {
	if !c.follow.Changed() {
		return nil
	}
	if !c.syncMu.TryLock() {
		return nil
	}
	defer c.syncMu.Unlock()
	return c.next()
}

// ForceSync is Sync that waits for a reload in progress (a process that
// just committed and must see its own commit).
func (c *Catalog) ForceSync(ctx context.Context) error {
	if !c.follow.Changed() {
		return nil
	}
	c.syncMu.Lock()
	defer c.syncMu.Unlock()
	return c.next()
}

func (c *Catalog) next() error {
	u, err := c.follow.Next()
	if err != nil {
		c.mu.Lock()
		c.lastErr = err
		if errors.Is(err, view.ErrNoView) {
			c.lastErr = nil
		}
		c.mu.Unlock()
		return nil
	}
	c.apply(u)
	return nil
}

// Err is the last failure to read what writers published (nil when fine).
func (c *Catalog) Err() error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.lastErr
}

// apply installs a whole snapshot or the deltas after the current one.
func (c *Catalog) apply(u view.Update) {
	// The index has its own lock, and a search calls back into c.mu (the
	// keep filter): never hold c.mu while touching the index.
	c.mu.RLock()
	ix, cx := c.index, c.cardIndex
	c.mu.RUnlock()
	var (
		changed      []*local.Project
		deleted      []string
		cards        []*local.Card
		deletedCards []string
	)
	full := u.Snapshot != nil
	if full {
		ix, cx = search.New(), search.New()
		changed, cards = u.Snapshot.Records, u.Snapshot.Cards
	}
	for _, d := range u.Deltas {
		changed = append(changed, d.Records...)
		deleted = append(deleted, d.Deleted...)
		cards = append(cards, d.Cards...)
		deletedCards = append(deletedCards, d.DeletedCards...)
	}
	for _, p := range changed {
		ix.Put(docOf(p))
	}
	for _, id := range deleted {
		ix.Delete(id)
	}
	c.indexCards(cx, full, changed, deleted, cards, deletedCards)
	c.mu.Lock()
	defer c.mu.Unlock()
	if full {
		s := u.Snapshot
		c.projects = make(map[string]*local.Project, len(s.Records))
		c.byRoot = make(map[string]string, len(s.Records))
		c.cards, c.byProject = make(map[string]*local.Card, len(s.Cards)), map[string][]string{}
		c.allowed, c.rootKeys = nil, nil
		c.storeID, c.seq, c.rev, c.state, c.gbrain = s.StoreID, s.Seq, s.Revision, s.State, s.GBrain
	}
	for _, cd := range cards {
		c.dropCard(cd.Slug)
		c.cards[cd.Slug] = cd
		c.byProject[cd.ProjectID] = append(c.byProject[cd.ProjectID], cd.Slug)
	}
	for _, slug := range deletedCards {
		c.dropCard(slug)
	}
	c.cardIndex = cx
	for _, p := range changed {
		c.projects[p.ID] = p
		c.byRoot[pathid.Key(p.Root)] = p.ID
		for _, m := range c.allowed {
			delete(m, p.ID)
		}
	}
	for _, id := range deleted {
		if p := c.projects[id]; p != nil && c.byRoot[pathid.Key(p.Root)] == id {
			delete(c.byRoot, pathid.Key(p.Root))
		}
		delete(c.projects, id)
		for _, m := range c.allowed {
			delete(m, id)
		}
	}
	if n := len(u.Deltas); n > 0 {
		d := u.Deltas[n-1]
		c.seq, c.rev, c.state, c.gbrain = d.Seq, d.Revision, d.State, d.GBrain
	}
	c.index = ix
	c.lastErr = nil
}

// indexCards keeps the card index to the cards that can be answered as
// historical: those whose project id is not bound here (a card of a bound
// project never is; leaving this machine's own cards out keeps a search
// with GBrain on as cheap as one without). A record bound or forgotten in
// this update moves its cards out of or into the index.
func (c *Catalog) indexCards(cx *search.Index, full bool, changed []*local.Project, deleted []string, cards []*local.Card, deletedCards []string) {
	bound := map[string]bool{}
	var before map[string][]*local.Card // cards by project id, before this update
	c.mu.RLock()
	if !full {
		for id := range c.projects {
			bound[id] = true
		}
		before = map[string][]*local.Card{}
		for _, id := range deleted {
			for _, slug := range c.byProject[id] {
				before[id] = append(before[id], c.cards[slug])
			}
		}
		for _, p := range changed {
			if !bound[p.ID] {
				before[p.ID] = nil
				for _, slug := range c.byProject[p.ID] {
					cx.Delete(slug) // bound now
				}
			}
		}
	}
	c.mu.RUnlock()
	for _, p := range changed {
		bound[p.ID] = true
	}
	for _, id := range deleted {
		delete(bound, id)
	}
	gone := map[string]bool{}
	for _, slug := range deletedCards {
		gone[slug] = true
		cx.Delete(slug)
	}
	// Cards of records forgotten now become answerable (unless replaced or
	// deleted in this same update).
	updated := map[string]bool{}
	for _, cd := range cards {
		updated[cd.Slug] = true
	}
	for _, id := range deleted {
		if bound[id] {
			continue
		}
		for _, cd := range before[id] {
			if cd != nil && !gone[cd.Slug] && !updated[cd.Slug] {
				cx.Put(cardDoc(cd))
			}
		}
	}
	for _, cd := range cards {
		if bound[cd.ProjectID] {
			cx.Delete(cd.Slug)
		} else {
			cx.Put(cardDoc(cd))
		}
	}
}

// dropCard forgets a mirrored card (c.mu held).
func (c *Catalog) dropCard(slug string) {
	old := c.cards[slug]
	if old == nil {
		return
	}
	delete(c.cards, slug)
	rest := slices.DeleteFunc(slices.Clone(c.byProject[old.ProjectID]), func(s string) bool { return s == slug })
	if len(rest) == 0 {
		delete(c.byProject, old.ProjectID)
	} else {
		c.byProject[old.ProjectID] = rest
	}
}

func cardDoc(cd *local.Card) search.Doc {
	return search.Doc{
		ID:          cd.Slug,
		SortKey:     strings.ToLower(cd.Name) + "\x00" + cd.Slug,
		Name:        cd.Name,
		Packages:    cd.Packages,
		Keywords:    cd.Keywords,
		Tags:        cd.Tags,
		Description: cd.Description,
	}
}

// CardsOf returns the mirrored cards that name projectID (copies).
func (c *Catalog) CardsOf(projectID string) []*local.Card {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var out []*local.Card
	for _, slug := range c.byProject[projectID] {
		cp := *c.cards[slug]
		out = append(out, &cp)
	}
	return out
}

// ByRootKey returns the record whose root has the given root key (the
// keyed hash a card carries instead of a path), or nil.
func (c *Catalog) ByRootKey(key string) *local.Project {
	if key == "" {
		return nil
	}
	id := c.st.Identity()
	c.mu.Lock()
	if c.rootKeys == nil || c.rootKeysRev != c.rev {
		c.rootKeys = make(map[string]string, len(c.projects))
		for _, p := range c.projects {
			c.rootKeys[id.RootKey(pathid.Key(p.Root))] = p.ID
		}
		c.rootKeysRev = c.rev
	}
	pid := c.rootKeys[key]
	c.mu.Unlock()
	if pid == "" {
		return nil
	}
	return c.Get(pid)
}

// Card returns a copy of the mirrored card at slug, or nil.
func (c *Catalog) Card(slug string) *local.Card {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if cd := c.cards[slug]; cd != nil {
		cp := *cd
		return &cp
	}
	return nil
}

// SearchCards ranks the mirrored cards that keep accepts, the first n. Only
// cards whose project id is not bound here are ranked (see indexCards).
func (c *Catalog) SearchCards(query string, keep func(*local.Card) bool, n int) []search.Hit {
	c.mu.RLock()
	cx := c.cardIndex
	c.mu.RUnlock()
	hits, _ := cx.SearchTop(query, func(slug string) bool {
		c.mu.RLock()
		cd := c.cards[slug]
		c.mu.RUnlock()
		return cd != nil && keep(cd)
	}, n)
	return hits
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

// StoreID names the database the view comes from; it changes when the data
// dir's database is made anew (deleted, replaced, recovered).
func (c *Catalog) StoreID() string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.storeID
}

// State is the discovery state as of the view.
func (c *Catalog) State() local.ScanState {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.state
}

// GBrain is the last word from GBrain as of the view.
func (c *Catalog) GBrain() local.GBrainContact {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.gbrain
}

// Secret is the key cursors are signed with.
func (c *Catalog) Secret() []byte { return c.st.Identity().Key("cursor") }

// MachineID is this data dir's machine id.
func (c *Catalog) MachineID() string { return c.st.MachineID() }

// Len is the number of records (of any availability, any view).
func (c *Catalog) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.projects)
}

// Containing returns the innermost record whose root holds path (path
// itself or an ancestor), or nil: one map lookup per path segment.
func (c *Catalog) Containing(path string) *local.Project {
	for d := filepath.Clean(path); ; {
		c.mu.RLock()
		id := c.byRoot[pathid.Key(d)]
		c.mu.RUnlock()
		if id != "" {
			return c.Get(id)
		}
		parent := filepath.Dir(d)
		if parent == d {
			return nil
		}
		d = parent
	}
}

// Present reports whether the record with id was present when last seen.
func (c *Catalog) Present(id string) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	p := c.projects[id]
	return p != nil && p.Availability == local.Present
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

// Suggest returns up to n spellings close to the query's words, from the
// names, aliases and package names of the records this frontend may see.
func (c *Catalog) Suggest(query string, pol Policy, n int) []string {
	c.mu.RLock()
	ix := c.index
	c.mu.RUnlock()
	return ix.Suggest(query, c.visible(pol), n)
}

// List returns the ids the policy lets this frontend see, in stable order.
func (c *Catalog) List(pol Policy) []string {
	c.mu.RLock()
	ix := c.index
	c.mu.RUnlock()
	return ix.List(c.visible(pol))
}

// Visible reports whether the policy lets this frontend see the record.
func (c *Catalog) Visible(id string, pol Policy) bool { return c.visible(pol)(id) }

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
		ok = pol.AllowsRecord(p)
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

// Recheck looks at a record's root right now: it still exists, it is still
// the same canonical path (a root swapped for a symlink to elsewhere
// fails), it is not reached through an alias of a deny root, its own marker
// is there, and the live policy allows it.
func Recheck(p *local.Project, pol Policy) Check {
	ck := Check{At: time.Now().UTC(), Allowed: pol.AllowsRecord(p)}
	if !ck.Allowed {
		ck.Availability, ck.IndexState, ck.Why = local.Unknown, local.MarkerUnknown, "not shared with this frontend"
		return ck
	}
	if cached, ok := recheckCached(p, pol); ok {
		return cached
	}
	// What the root and database look like before the full check: if they
	// change during it, the remembered answer simply never matches again.
	rootLook, ok1 := lookAt(p.Root)
	dbLook, ok2 := lookAt(filepath.Join(p.Root, marker.Dir, marker.File))
	// One descent from the discovery root with no symlink in the way
	// gives the verdict and the identity of every directory on the way.
	rc := marker.ProbeRoot(p.Root, pol.discoveryRootOf(p.Root))
	ck.Availability, ck.IndexState, ck.Why = rc.Availability, rc.IndexState, rc.Why
	if !rc.Project {
		if ck.Availability == local.Present {
			ck.Availability = local.Missing
		}
		return ck
	}
	// On a case-insensitive volume a case-only rename keeps the directory
	// but not the spelling the record hands out.
	if canon, err := pathid.Canonical(p.Root); err != nil || canon != filepath.Clean(p.Root) {
		ck.Availability, ck.IndexState = local.Missing, local.MarkerUnknown
		ck.Why = "the root is no longer the same directory as recorded (renamed, or a symlink stands in its place)"
		return ck
	}
	if pol.deniesAny(append(rc.Ancestors, rc.ID)) {
		ck.Allowed = false
		ck.Availability, ck.Why = local.Unknown, "not shared with this frontend"
		return ck
	}
	ck.OK = true
	if ok1 && ok2 {
		rememberRecheck(p, pol, ck, rootLook, dbLook)
	}
	return ck
}
