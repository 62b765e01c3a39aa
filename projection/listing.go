package projection

import (
	"context"
	"time"

	"github.com/cgcat/cgcat/gbrain"
)

// maxRescans bounds restarts of a shifting enumeration.
const maxRescans = 3

// listCards enumerates the pages tagged as our cards.
func (p *Projector) listCards(ctx context.Context) (map[string]gbrain.PageRef, int, bool, error) {
	return p.listTagged(ctx, gbrain.CardTag)
}

// listTagged enumerates the pages with tag: sorted by slug, offset paging
// with one row of overlap. When the overlap row is not where it was (pages
// shifted under concurrent writes), the enumeration restarts; rows seen in
// any pass are kept (de-duplicated by slug).
func (p *Projector) listTagged(ctx context.Context, tag string) (map[string]gbrain.PageRef, int, bool, error) {
	seen := map[string]gbrain.PageRef{}
	limit := gbrain.MaxListLimit
	if p.listLimit > 0 {
		limit = p.listLimit
	}
	rescans := 0
	for pass := 0; ; pass++ {
		shifted := false
		offset, last := 0, ""
		for {
			var refs []gbrain.PageRef
			if p.listHook != nil {
				p.listHook(offset)
			}
			err := p.retry(ctx, func(c gbrain.Brain) error {
				var err error
				refs, err = c.ListPages(ctx, gbrain.ListOptions{Tag: tag, Sort: gbrain.SortSlug, Limit: limit, Offset: offset})
				return err
			})
			if err != nil {
				return nil, rescans, false, err
			}
			n := len(refs)
			if offset > 0 {
				if n == 0 || refs[0].Slug != last {
					shifted = true
					break
				}
				refs = refs[1:]
			}
			for _, r := range refs {
				seen[r.Slug] = r
			}
			if n < limit {
				break
			}
			last = refs[len(refs)-1].Slug
			offset += limit - 1
		}
		if !shifted {
			return seen, rescans, false, nil
		}
		if pass >= maxRescans {
			return seen, rescans, true, nil
		}
		rescans++
	}
}

// sinceMargin is how far before the newest updated_at seen an incremental
// listing starts again: Postgres stamps updated_at when a write's
// transaction begins, so a slow write can commit after a listing already
// passed its time.
const sinceMargin = 2 * time.Minute

// listSince enumerates the pages with tag updated after since (all when
// since is zero), oldest change first: list_pages sorted updated_asc with
// updated_after moved to the last row seen (GBrain's own advice), so rows
// written meanwhile come later instead of shifting pages. Rows of one
// millisecond that fill a whole page are paged by offset. It returns the
// rows and the newest updated_at among them.
func (p *Projector) listSince(ctx context.Context, tag string, since time.Time) (map[string]gbrain.PageRef, time.Time, error) {
	seen := map[string]gbrain.PageRef{}
	limit := gbrain.MaxListLimit
	if p.listLimit > 0 {
		limit = p.listLimit
	}
	var after gbrain.Timestamp
	if !since.IsZero() {
		after = gbrain.Timestamp(since.Add(-sinceMargin).UTC().Format("2006-01-02T15:04:05.000Z"))
	}
	newest := since
	offset := 0
	for {
		var refs []gbrain.PageRef
		if p.listHook != nil {
			p.listHook(offset)
		}
		err := p.retry(ctx, func(c gbrain.Brain) error {
			var err error
			refs, err = c.ListPages(ctx, gbrain.ListOptions{Tag: tag, Sort: gbrain.SortUpdatedAsc, Limit: limit, Offset: offset, UpdatedAfter: after})
			return err
		})
		if err != nil {
			return nil, since, err
		}
		for _, r := range refs {
			seen[r.Slug] = r
			if t, err := time.Parse(time.RFC3339Nano, string(r.UpdatedAt)); err == nil && t.After(newest) {
				newest = t
			}
		}
		if len(refs) < limit {
			return seen, newest, nil
		}
		if last := refs[len(refs)-1].UpdatedAt; last != after && last != "" {
			after, offset = last, 0
		} else {
			offset += len(refs)
		}
	}
}
