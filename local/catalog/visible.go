package catalog

import (
	"sync/atomic"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/search"
	"github.com/cgcat/cgcat/local/view"
)

// What one sharing view sees: searches, listings and suggestions cut to
// the records the policy allows, with its decisions cached per view.

// Search ranks the records the policy lets this frontend see.
func (c *Catalog) Search(query string, pol Policy) []search.Hit {
	hits, _ := c.SearchTop(query, pol, -1)
	return hits
}

// SearchTop is Search cut to the first n hits, with the total count; only
// those n are sorted and explained.
func (c *Catalog) SearchTop(query string, pol Policy, n int) ([]search.Hit, int) {
	ix, f := c.filter(pol)
	return ix.SearchFilter(query, f, n)
}

// Suggest returns up to n spellings close to the query's words, from the
// names, aliases and package names of the records this frontend may see.
func (c *Catalog) Suggest(query string, pol Policy, n int) []string {
	ix, f := c.filter(pol)
	return ix.SuggestFilter(query, f, n)
}

// List returns the ids the policy lets this frontend see, in stable order.
func (c *Catalog) List(pol Policy) []string {
	ix, f := c.filter(pol)
	return ix.ListFilter(f)
}

// Visible reports whether the policy lets this frontend see the record.
func (c *Catalog) Visible(id string, pol Policy) bool {
	c.mu.RLock()
	base := c.base
	_, changed := c.over[id]
	c.mu.RUnlock()
	if !changed && base != nil {
		if s, ok := base.Slot(id); ok {
			return c.baseVis(base, pol).keep(s)
		}
	}
	return c.visible(pol)(id)
}

// filter is the index and the keep filter for pol, from one moment of the
// view (the base the filter decides slots of is the index's).
func (c *Catalog) filter(pol Policy) (*search.Index, search.Filter) {
	c.mu.RLock()
	ix, base := c.index, c.base
	c.mu.RUnlock()
	f := search.Filter{ID: c.visible(pol)}
	if base != nil {
		f.Base = c.baseVis(base, pol).keep
	}
	return ix, f
}

// visible is the keep filter for pol over overlay records. Sharing
// decisions are cached per view and record and dropped when the record
// changes.
func (c *Catalog) visible(pol Policy) func(string) bool {
	vk := pol.ViewKey()
	return func(id string) bool {
		c.mu.RLock()
		p := c.over[id]
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
		if c.over[id] == p { // not replaced meanwhile
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

// baseVis is the sharing decisions of one view over the records of one
// base: a bitmap over its slots, each decided once, when first asked (a
// query decides the candidates it meets; a listing every record).
type baseVis struct {
	pol            Policy
	base           *view.Base
	known, allowed []uint64
}

func (c *Catalog) baseVis(base *view.Base, pol Policy) *baseVis {
	vk := pol.ViewKey()
	c.mu.RLock()
	v := c.vis[vk]
	c.mu.RUnlock()
	if v != nil && v.base == base {
		return v
	}
	words := (base.Len() + 63) / 64
	nv := &baseVis{pol: pol, base: base, known: make([]uint64, words), allowed: make([]uint64, words)}
	c.mu.Lock()
	defer c.mu.Unlock()
	if v := c.vis[vk]; v != nil && v.base == base {
		return v
	}
	if c.base != base {
		return nv // the view moved on meanwhile: decide without keeping
	}
	if c.vis == nil {
		c.vis = map[uint64]*baseVis{}
	}
	c.vis[vk] = nv
	return nv
}

func (v *baseVis) keep(s uint32) bool {
	w, m := s>>6, uint64(1)<<(s&63)
	if atomic.LoadUint64(&v.known[w])&m != 0 {
		return atomic.LoadUint64(&v.allowed[w])&m != 0
	}
	var buf [8]string
	ok := v.base.Decide(s, buf[:0], func(root string, lineage []string) bool {
		return v.pol.AllowsRecord(&local.Project{Root: root, Lineage: lineage})
	})
	if ok {
		atomic.OrUint64(&v.allowed[w], m)
	}
	atomic.OrUint64(&v.known[w], m)
	return ok
}
