// Package catalog is the read model every frontend answers from: records
// by id, the search index, the scan state and the last word from GBrain —
// a published base as mapped (records decoded on demand, the index
// prebuilt) plus what changed since, in memory. It follows what writers publish (package view) — one stat per
// call when nothing changed, the changed records otherwise — and never opens
// the store, so no other process can make it wait. The store comes in as
// an [Authority], read only when the published files cannot be used, and
// is never handed on: writers get it from the composition root (cmd/cgcat,
// wire.go).
//
// It also owns the sharing policy and the live re-check of a record before
// its path is handed out. It never writes a project's files and never opens
// a CodeGraph database.
package catalog

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"time"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/pathid"
	"github.com/cgcat/cgcat/local/search"
	"github.com/cgcat/cgcat/local/view"
)

// Catalog is safe for concurrent use.
//
// Its records are a published base, mapped (view.Base: records decoded on
// demand, the search index prebuilt), plus the records changed since, kept
// in memory (the overlay). Applying a commit of k records costs O(k): they
// go into the overlay and the index's own overlay, and their base slots
// become tombstones. Sharing decisions for the base's records are kept per
// view as a bitmap over its slots.
type Catalog struct {
	src    Authority
	follow *view.Follower

	mu       sync.RWMutex
	storeID  string
	seq, rev uint64
	base     *view.Base                // nil until a base is read
	over     map[string]*local.Project // records changed since the base; nil: deleted
	n        int                       // records
	byRoot   map[string]string         // pathid.Key(root) → id, for overlay records (before the base's)
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
	// allowed caches sharing decisions of overlay records: view key → id
	// → allowed; vis those of the base's records, per view key.
	allowed map[uint64]map[string]bool
	vis     map[uint64]*baseVis
	// forgotten are the ids forgotten in this store, from the base and
	// the deltas after it.
	forgotten map[string]bool
	// rootKeys maps each record's root key (the identity's RootKey) to its
	// id, built when first needed for a revision.
	rootKeys    map[string]string
	rootKeysRev uint64
	// syncMu keeps one reload at a time.
	syncMu sync.Mutex
}

// Authority is the store behind the published catalog (package store's
// Store; cmd wires it). The catalog only reads through it when the
// published files cannot be used, and never hands it on: writers get the
// store from the composition root, not from the read model.
type Authority interface {
	DataDir() string
	// ReadCatalog reads the whole catalog without the store's lock (R39).
	ReadCatalog(ctx context.Context) (*view.Snapshot, error)
	// Damage is why the store cannot be written (nil when sound).
	Damage() error
	// MachineID, RootKey and Key are this machine's identity: its id, the
	// keyed hash a card carries for a root key, a secret for a purpose.
	MachineID() string
	RootKey(rootKey string) string
	Key(purpose string) []byte
}

// Load follows the published catalog of src's data dir. Nothing published
// yet is not an error: the catalog is empty until a writer publishes.
func Load(ctx context.Context, src Authority) (*Catalog, error) {
	c := &Catalog{src: src, follow: view.NewFollower(src.DataDir()), over: map[string]*local.Project{}, byRoot: map[string]string{}, index: search.New(),
		cards: map[string]*local.Card{}, byProject: map[string][]string{}, cardIndex: search.New()}
	// When the published files cannot be used, the store itself is read
	// (without its lock: R39).
	c.follow.SetFallback(func() (*view.Snapshot, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return src.ReadCatalog(ctx)
	})
	if err := c.ForceSync(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// DataDir is the data dir whose published catalog this follows.
func (c *Catalog) DataDir() string { return c.src.DataDir() }

// StoreDamage is why the store behind the catalog cannot be written (nil
// when sound): answers then come from the last published catalog.
func (c *Catalog) StoreDamage() error { return c.src.Damage() }

// Sync brings the view up to date with what any process published. It
// costs one stat when nothing changed and never waits for another process,
// nor for another call of this process that is applying the news already:
// that call answers from the view as it is a moment longer — unless the
// view's own base changed under it (a backup restored over it in place),
// whose bytes are then another file's: it waits for that reload. A damaged
// or missing publication keeps the last good view (Err says so).
func (c *Catalog) Sync(ctx context.Context) error {
	if !c.follow.Changed() {
		return nil
	}
	if !c.syncMu.TryLock() {
		if !c.follow.BaseMoved() {
			return nil
		}
		c.syncMu.Lock()
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

// BaseMoved reports whether the published base the view reads from changed
// under it since it was checked (restored over in place, truncated): an
// answer read from it meanwhile may hold another file's records, and is
// to be read again after a Sync.
func (c *Catalog) BaseMoved() bool { return c.follow.BaseMoved() }

// Err is the last failure to read what writers published (nil when fine).
func (c *Catalog) Err() error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.lastErr
}

// change is one record put (p) or deleted (p nil) by a commit.
type change struct {
	id string
	p  *local.Project
}

// apply installs a whole snapshot or the deltas after the current one.
func (c *Catalog) apply(u view.Update) {
	// The index has its own lock, and a search calls back into c.mu (the
	// keep filter): never hold c.mu while touching the index.
	c.mu.RLock()
	ix, cx, base := c.index, c.cardIndex, c.base
	c.mu.RUnlock()
	full := u.Snapshot != nil
	var (
		cards        []*local.Card
		deletedCards []string
		changes      []change
	)
	if full {
		base = u.Snapshot.Base
		ix, cx = search.NewOver(base.Index()), search.New()
		cards = u.Snapshot.Cards
	}
	// Commit by commit, puts then deletes, as they were made.
	for _, d := range u.Deltas {
		for _, p := range d.Records {
			changes = append(changes, change{p.ID, p})
			ix.Put(search.DocOf(p))
		}
		for _, id := range d.Deleted {
			changes = append(changes, change{id, nil})
			ix.Delete(id)
		}
		cards = append(cards, d.Cards...)
		deletedCards = append(deletedCards, d.DeletedCards...)
	}
	after := map[string]bool{} // ids this update touched: bound after it?
	for _, ch := range changes {
		after[ch.id] = ch.p != nil
	}
	boundAfter := func(id string) bool {
		if b, ok := after[id]; ok {
			return b
		}
		if full {
			_, ok := base.Slot(id)
			return ok
		}
		return c.has(id)
	}
	c.indexCards(cx, full, after, cards, deletedCards, boundAfter)

	c.mu.Lock()
	defer c.mu.Unlock()
	if full {
		s := u.Snapshot
		c.base, c.n = base, base.Len()
		c.over, c.byRoot = map[string]*local.Project{}, map[string]string{}
		c.cards, c.byProject = make(map[string]*local.Card, len(s.Cards)), map[string][]string{}
		c.allowed, c.vis, c.rootKeys = nil, nil, nil
		c.storeID, c.seq, c.rev, c.state, c.gbrain = s.StoreID, s.Seq, s.Revision, s.State, s.GBrain
		c.forgotten = make(map[string]bool, len(s.Forgotten))
		for _, id := range s.Forgotten {
			c.forgotten[id] = true
		}
	}
	for _, d := range u.Deltas {
		for _, id := range d.Deleted {
			if c.forgotten == nil {
				c.forgotten = map[string]bool{}
			}
			c.forgotten[id] = true
		}
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
	c.overlayLocked(changes)
	if n := len(u.Deltas); n > 0 {
		d := u.Deltas[n-1]
		c.seq, c.rev, c.state, c.gbrain = d.Seq, d.Revision, d.State, d.GBrain
	}
	c.index = ix
	c.lastErr = nil
}

// overlayLocked puts changed records into the overlay (c.mu held): their
// root bindings, the count, and the sharing decisions to make again.
func (c *Catalog) overlayLocked(changes []change) {
	for _, ch := range changes {
		had := c.hasLocked(ch.id)
		if old := c.over[ch.id]; old != nil && c.byRoot[pathid.Key(old.Root)] == ch.id {
			delete(c.byRoot, pathid.Key(old.Root))
		}
		c.over[ch.id] = ch.p
		if ch.p != nil {
			c.byRoot[pathid.Key(ch.p.Root)] = ch.id
		}
		switch {
		case ch.p != nil && !had:
			c.n++
		case ch.p == nil && had:
			c.n--
		}
		for _, m := range c.allowed {
			delete(m, ch.id)
		}
	}
}

func changedIn(over map[string]*local.Project, id string) bool {
	_, ok := over[id]
	return ok
}

// has reports whether a record with id is in the view.
func (c *Catalog) has(id string) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.hasLocked(id)
}

func (c *Catalog) hasLocked(id string) bool {
	if p, ok := c.over[id]; ok {
		return p != nil
	}
	if c.base != nil {
		_, ok := c.base.Slot(id)
		return ok
	}
	return false
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
func (c *Catalog) Secret() []byte { return c.src.Key("cursor") }

// MachineID is this data dir's machine id.
func (c *Catalog) MachineID() string { return c.src.MachineID() }

// RecordsAt calls fn for a copy of every record (of any availability, any
// view) and reports true when the view is exactly store storeID at
// revision rev; otherwise it reports false and calls nothing. A scanner
// starting at that revision learns what it knows of the records from it
// (scan.RecordsAt).
func (c *Catalog) RecordsAt(storeID string, rev uint64, fn func(*local.Project)) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if storeID == "" || c.storeID != storeID || c.rev != rev {
		return false
	}
	if c.base != nil {
		for s := range c.base.Len() {
			if _, changed := c.over[c.base.ID(uint32(s))]; !changed {
				fn(c.base.Record(uint32(s)))
			}
		}
	}
	for _, p := range c.over {
		if p != nil {
			cp := *p
			fn(&cp)
		}
	}
	return true
}

// Forgotten reports whether the record with id was forgotten in this store
// (`cgcat forget`, `cgcat prune`): such an id is gone for good (ids are
// never given out again), whatever a GBrain card that is not retracted yet
// still says of it.
func (c *Catalog) Forgotten(id string) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.forgotten[id]
}

// Len is the number of records (of any availability, any view).
func (c *Catalog) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.n
}

// Containing returns the innermost record whose root holds path (path
// itself or an ancestor), or nil: one lookup per path segment.
func (c *Catalog) Containing(path string) *local.Project {
	for d := filepath.Clean(path); ; {
		if p := c.atRoot(pathid.Key(d)); p != nil {
			return p
		}
		parent := filepath.Dir(d)
		if parent == d {
			return nil
		}
		d = parent
	}
}

// atRoot is the record whose root has key: an overlay record's first, then
// the base's (unless changed since).
func (c *Catalog) atRoot(key string) *local.Project {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if id := c.byRoot[key]; id != "" {
		if p := c.over[id]; p != nil && pathid.Key(p.Root) == key {
			cp := *p
			return &cp
		}
	}
	if c.base == nil {
		return nil
	}
	s, ok := c.base.RootSlot(key)
	if !ok {
		return nil
	}
	if _, changed := c.over[c.base.ID(s)]; changed {
		return nil // its overlay record has another root now, or is gone
	}
	return c.base.Record(s)
}

// Present reports whether the record with id was present when last seen.
func (c *Catalog) Present(id string) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if p, ok := c.over[id]; ok {
		return p != nil && p.Availability == local.Present
	}
	if c.base != nil {
		if s, ok := c.base.Slot(id); ok {
			return c.base.Availability(s) == local.Present
		}
	}
	return false
}

// Get returns a copy of the record with id, or nil.
func (c *Catalog) Get(id string) *local.Project {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if p, ok := c.over[id]; ok {
		if p == nil {
			return nil
		}
		cp := *p
		return &cp
	}
	if c.base != nil {
		if s, ok := c.base.Slot(id); ok {
			return c.base.Record(s)
		}
	}
	return nil
}

// PresentAll is Present for each id, under one lock (a ranking asks it of
// every kept hit).
func (c *Catalog) PresentAll(ids []string) []bool {
	out := make([]bool, len(ids))
	c.mu.RLock()
	defer c.mu.RUnlock()
	for i, id := range ids {
		if p, ok := c.over[id]; ok {
			out[i] = p != nil && p.Availability == local.Present
		} else if c.base != nil {
			if s, ok := c.base.Slot(id); ok {
				out[i] = c.base.Availability(s) == local.Present
			}
		}
	}
	return out
}

// ListWhere is List cut to the records keep accepts by their availability
// and MissingSince (read without decoding a record).
func (c *Catalog) ListWhere(pol Policy, keep func(local.Availability, time.Time) bool) []string {
	ix, f := c.filter(pol)
	c.mu.RLock()
	base := c.base
	c.mu.RUnlock()
	byID := f.ID
	f.ID = func(id string) bool {
		if !byID(id) {
			return false
		}
		c.mu.RLock()
		p := c.over[id]
		c.mu.RUnlock()
		return p != nil && keep(p.Availability, p.MissingSince)
	}
	if byBase := f.Base; byBase != nil {
		f.Base = func(s uint32) bool {
			return byBase(s) && keep(base.Availability(s), base.MissingSince(s))
		}
	}
	return ix.ListFilter(f)
}

// GetLite is Get without the record's description, README, keywords,
// tags, manifests and problems (empty): for comparing records (a workspace
// and its relatives), at a fraction of a whole record's cost.
func (c *Catalog) GetLite(id string) *local.Project {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if p, ok := c.over[id]; ok {
		if p == nil {
			return nil
		}
		cp := *p
		cp.Meta.Description, cp.Meta.Readme = "", ""
		cp.Meta.Keywords, cp.Meta.Tags, cp.Meta.Manifests, cp.Meta.Problems = nil, nil, nil, nil
		return &cp
	}
	if c.base != nil {
		if s, ok := c.base.Slot(id); ok {
			return c.base.RecordLite(s)
		}
	}
	return nil
}

// Listed reports a record's availability and MissingSince without decoding
// it (listings filter every record by them).
func (c *Catalog) Listed(id string) (local.Availability, time.Time, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if p, ok := c.over[id]; ok {
		if p == nil {
			return "", time.Time{}, false
		}
		return p.Availability, p.MissingSince, true
	}
	if c.base != nil {
		if s, ok := c.base.Slot(id); ok {
			return c.base.Availability(s), c.base.MissingSince(s), true
		}
	}
	return "", time.Time{}, false
}
