package projection

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/cgcat/cgcat/gbrain"
	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/ids"
	"github.com/cgcat/cgcat/local/store"
)

// Recaller answers the frontend's recall (R31) over a GBrain connection of
// its own (never the projector's, which is open only for its rounds):
// search (or query with semanticSearch) → slugs under our prefix → project
// ids bound in the local store → for the top few, the card itself is read
// and must decode as ours (this machine, this project id, matching
// locator, no forbidden path). Everything else is dropped: a card is a
// claim, and recall only ever names records the frontend then checks
// against its own view.
//
// Its connection is dialed in the background when first needed (and by
// the service when it starts), kept while searches come, and over stdio
// closed after a while without one, so a PGLite brain is free. A search
// that comes while it is still being made is not a GBrain failure: it
// answers local.ErrRecallNotReady at once.
type Recaller struct {
	Conn     *Conn
	Store    *store.Store
	Settings Settings
	// Verify is how many bound hits are checked (and returned) at most
	// (zero: 5).
	Verify int
	// Contact, when set, hears of every outcome, so that gbrainState is
	// the same truth on every answer (the service records it).
	Contact func(err error)

	mu      sync.Mutex
	lastUse time.Time
}

// Ready reports whether recall can ask GBrain right now.
func (r *Recaller) Ready() bool { return r.Conn.Current() != nil }

// idle is how long the recall connection went unused.
func (r *Recaller) idle() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return time.Since(r.lastUse)
}

// Recall implements local.Recall.
func (r *Recaller) Recall(ctx context.Context, query string, limit int) (hits []local.RecallHit, err error) {
	r.mu.Lock()
	r.lastUse = time.Now()
	r.mu.Unlock()
	c, err := r.brain(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { r.note(err) }()
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
	found, err := r.candidates(ctx, c, query, min(max(limit*4, 10), 50)) // chunk rows; several may name one page
	if err != nil || len(found) == 0 {
		return nil, err
	}
	// Only ids bound on this machine are worth a read.
	var bound []string
	err = r.Store.View(ctx, func(rd *store.Reader) error {
		for _, id := range found {
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
	return r.verified(ctx, c, bound)
}

// brain is the connection to ask, waiting (within ctx) for one being made.
// A failure to connect is noted.
func (r *Recaller) brain(ctx context.Context) (gbrain.Brain, error) {
	if c := r.Conn.Current(); c != nil {
		return c, nil
	}
	select {
	case <-r.Conn.Warm():
		if c := r.Conn.Current(); c != nil {
			return c, nil
		}
		err := r.Conn.LastError()
		if err == nil {
			err = ErrNotConnected
		}
		r.note(err)
		return nil, err
	case <-ctx.Done():
		return nil, fmt.Errorf("%w (%w)", local.ErrRecallNotReady, ctx.Err())
	}
}

// candidates asks GBrain for up to n chunks and keeps the project ids of
// the cards under our slug prefix, once each, in GBrain's order.
func (r *Recaller) candidates(ctx context.Context, c gbrain.Brain, query string, n int) ([]string, error) {
	var chunks []gbrain.Chunk
	var err error
	if r.Settings.SemanticSearch {
		chunks, err = c.Query(ctx, gbrain.QueryOptions{Query: query, Limit: n})
	} else {
		chunks, err = c.Search(ctx, query, n)
	}
	if err != nil {
		return nil, err
	}
	prefix := r.Settings.SlugPrefix + "/"
	var found []string
	seen := map[string]bool{}
	for _, h := range chunks {
		id, ok := strings.CutPrefix(h.Slug, prefix)
		if !ok || seen[id] || !ids.ValidProjectID(id) {
			continue
		}
		seen[id] = true
		found = append(found, id)
	}
	return found, nil
}

// verified reads the cards of bound at once and keeps those that are this
// machine's own, as cgcat wrote them; a card GBrain cannot give is dropped,
// a failure to read one is returned with the hits kept.
func (r *Recaller) verified(ctx context.Context, c gbrain.Brain, bound []string) ([]local.RecallHit, error) {
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
			pg, err := c.GetPage(ctx, r.Settings.SlugPrefix+"/"+id, true)
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

// note passes an outcome to Contact (a caller that gave up is no news of
// GBrain's).
func (r *Recaller) note(err error) {
	if r.Contact == nil || errors.Is(err, local.ErrRecallNotReady) || errors.Is(err, context.Canceled) {
		return
	}
	r.Contact(err)
}
