package projection

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/cgcat/cgcat/gbrain"
	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/store"
)

// Recaller answers the frontend's recall (R31) from a live GBrain
// connection: search (or query with semanticSearch) → slugs under our
// prefix → project ids bound in the local store → for the top few, the card
// itself is read and must decode as ours (this machine, this project id,
// matching locator, no forbidden path). Everything else is dropped: a card
// is a claim, and recall only ever names records the frontend then checks
// against its own view.
type Recaller struct {
	Conn     interface{ Current() gbrain.Brain }
	Store    *store.Store
	Settings Settings
	// Verify is how many bound hits are checked (and returned) at most
	// (zero: 5).
	Verify int
	// Dial, when set, connects when there is no live connection (HTTP, where
	// a connection is cheap and holds no brain); else Recall without a live
	// connection fails at once.
	Dial func(ctx context.Context) (gbrain.Brain, error)
}

// Connected reports whether recall can be asked right now (a frontend may
// use it to say gbrainState degraded on answers that do not search).
func (r *Recaller) Connected() bool { return r.Conn.Current() != nil }

// Recall implements local.Recall. It never dials: without a live
// connection it fails at once, and the frontend says gbrainState degraded.
func (r *Recaller) Recall(ctx context.Context, query string, limit int) ([]local.RecallHit, error) {
	c := r.Conn.Current()
	if c == nil && r.Dial != nil {
		var err error
		if c, err = r.Dial(ctx); err != nil {
			return nil, err
		}
	}
	if c == nil {
		return nil, ErrNotConnected
	}
	if strings.TrimSpace(query) == "" {
		return nil, nil
	}
	verify := r.Verify
	if verify <= 0 {
		verify = 5
	}
	if limit <= 0 || limit > verify {
		limit = verify
	}
	n := min(max(limit*4, 10), 50) // chunk rows; several may name one page
	var hits []gbrain.Chunk
	var err error
	if r.Settings.SemanticSearch {
		hits, err = c.Query(ctx, gbrain.QueryOptions{Query: query, Limit: n})
	} else {
		hits, err = c.Search(ctx, query, n)
	}
	if err != nil {
		return nil, err
	}
	prefix := r.Settings.SlugPrefix + "/"
	var ids []string
	seen := map[string]bool{}
	for _, h := range hits {
		id, ok := strings.CutPrefix(h.Slug, prefix)
		if !ok || seen[id] || !store.ValidProjectID(id) {
			continue
		}
		seen[id] = true
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	// Only ids bound on this machine are worth a read.
	var bound []string
	err = r.Store.View(ctx, func(rd *store.Reader) error {
		for _, id := range ids {
			if len(bound) == limit {
				break
			}
			p, err := rd.Project(id)
			if err != nil {
				return err
			}
			if p != nil {
				bound = append(bound, id)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("recall: read the catalog: %w", err)
	}
	type res struct {
		ok  bool
		err error
	}
	out := make([]res, len(bound))
	var wg sync.WaitGroup
	for i, id := range bound {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slug := prefix + id
			pg, err := c.GetPage(ctx, slug, true)
			if err != nil {
				if errors.Is(err, gbrain.ErrPageNotFound) || gbrain.IsDefinite(err) {
					return // not a card we can trust: dropped
				}
				out[i].err = err
				return
			}
			_, ok := isOurs(pg.Content, id, r.Settings.MachineID)
			out[i].ok = ok
		}()
	}
	wg.Wait()
	var got []local.RecallHit
	var errs []error
	for i, id := range bound {
		if out[i].ok {
			got = append(got, local.RecallHit{ProjectID: id, MachineID: r.Settings.MachineID})
		} else if out[i].err != nil {
			errs = append(errs, out[i].err)
		}
	}
	if len(errs) > 0 {
		return got, fmt.Errorf("recall: %d of %d cards could not be read: %w", len(errs), len(bound), errs[0])
	}
	return got, ctx.Err()
}
