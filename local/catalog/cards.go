package catalog

import (
	"slices"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/pathid"
	"github.com/cgcat/cgcat/local/search"
)

// The mirror of GBrain's cards as the read model holds it: the cards by
// slug, their index (only cards whose project is not bound here), and the
// lookups by project and by root key.

// indexCards keeps the card index to the cards that can be answered as
// historical: those whose project id is not bound here (a card of a bound
// project never is; leaving this machine's own cards out keeps a search
// with GBrain on as cheap as one without). A record bound or forgotten in
// this update (after: the ids it touched, bound after it or not) moves its
// cards out of or into the index.
func (c *Catalog) indexCards(cx *search.Index, full bool, after map[string]bool, cards []*local.Card, deletedCards []string, boundAfter func(string) bool) {
	var freed []*local.Card // cards of records forgotten now
	var taken []string      // cards of records bound now
	if !full {
		c.mu.RLock()
		for id, bound := range after {
			switch was := c.hasLocked(id); {
			case bound && !was:
				taken = append(taken, c.byProject[id]...)
			case !bound && was:
				for _, slug := range c.byProject[id] {
					freed = append(freed, c.cards[slug])
				}
			}
		}
		c.mu.RUnlock()
	}
	for _, slug := range taken {
		cx.Delete(slug)
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
	for _, cd := range freed {
		if cd != nil && !gone[cd.Slug] && !updated[cd.Slug] {
			cx.Put(search.CardDoc(cd))
		}
	}
	for _, cd := range cards {
		if boundAfter(cd.ProjectID) {
			cx.Delete(cd.Slug)
		} else {
			cx.Put(search.CardDoc(cd))
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
	id := c.src
	c.mu.Lock()
	if c.rootKeys == nil || c.rootKeysRev != c.rev {
		c.rootKeys = make(map[string]string, c.n)
		if b := c.base; b != nil {
			for s := range uint32(b.Len()) {
				if rid := b.ID(s); !changedIn(c.over, rid) {
					c.rootKeys[id.RootKey(pathid.Key(b.Root(s)))] = rid
				}
			}
		}
		for pid, p := range c.over {
			if p != nil {
				c.rootKeys[id.RootKey(pathid.Key(p.Root))] = pid
			}
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
