package projection

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cgcat/cgcat/gbrain"
	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/pathid"
	"github.com/cgcat/cgcat/local/store"
	"github.com/cgcat/cgcat/outbox"
)

// Recovery: a catalog that was lost (or a data dir lost whole, its
// identity kept outside it) takes its projects' ids back from this
// machine's GBrain cards, which carry each project's root_key. Before the
// first scan binds any id, every card that could claim one of its roots is
// read: this machine's cards (list_pages by its machine tag, no other
// machine's card is read) and the cards of format 1, which carry no machine
// tag (every card tagged cgcat-card minus those tagged cgcat-card-2). No
// time budget cuts it short. Where it cannot finish (GBrain unreachable),
// the scan goes on (discovery never waits for GBrain), the ids it mints
// are pending, and no card is written until recovery finishes: then this
// machine's cards whose roots the catalog now binds under other ids are
// reported, and taken back (no duplicate stays).

// recoveryRow is the door to the recovery state in the store.
var recoveryRow = store.ProjectionMeta[Recovery](store.MetaRecovery)

// Recovery is the state of taking a lost catalog's ids back.
type Recovery struct {
	// Done: the cards were read (ids bound since are final).
	Done bool `json:"done"`
	// Fresh: the catalog was empty when recovery began, so ids minted
	// before Done are pending and no card is written meanwhile.
	Fresh   bool      `json:"fresh"`
	Started time.Time `json:"started"`
	At      time.Time `json:"at,omitzero"`
	// Own and Old count the cards read: this machine's, and of format 1.
	Own int `json:"own"`
	Old int `json:"old"`
	// Err is why the last attempt did not finish.
	Err string `json:"err,omitempty"`
	// Pending counts the records bound while Fresh and not Done (filled
	// in by ReadRecovery).
	Pending int `json:"pending"`
	// NotTakenBack are this machine's cards whose root the catalog binds
	// under another id (minted while the cards could not be read): their
	// cards were queued for retraction.
	NotTakenBack []Orphan `json:"notTakenBack,omitempty"`
}

// Blocks reports whether no card may be written yet.
func (r *Recovery) Blocks() bool { return r != nil && r.Fresh && !r.Done }

// ErrIDsPending means a lost catalog's ids are not settled yet.
var ErrIDsPending = errors.New("ids of a lost catalog are pending")

// PendingError says how many ids are pending and why.
func (r *Recovery) PendingError() error {
	why := r.Err
	if why == "" {
		why = "this machine's cards are being read"
	}
	return fmt.Errorf("%w: %d project ids were bound before this machine's GBrain cards could be read (%s); no card is written until they are, so none is duplicated — the next GBrain round of a running `cgcat serve`, or `cgcat gbrain sync`, reads them", ErrIDsPending, r.Pending, why)
}

// ReadRecovery reads the recovery state (a zero Recovery when none).
func ReadRecovery(ctx context.Context, st *store.Store) (*Recovery, error) {
	rs := &Recovery{}
	err := st.View(ctx, func(r *store.Reader) error {
		if got, ok, _ := recoveryRow.Get(r); ok {
			*rs = got
		}
		if rs.Blocks() {
			return r.Projects(func(*local.Project) error { rs.Pending++; return nil })
		}
		return nil
	})
	return rs, err
}

// storeEmpty reports whether the store binds no project yet.
func storeEmpty(ctx context.Context, st *store.Store) (bool, error) {
	empty := true
	err := st.View(ctx, func(r *store.Reader) error {
		return r.Projects(func(*local.Project) error { empty = false; return errStop })
	})
	if errors.Is(err, errStop) {
		err = nil
	}
	return empty, err
}

// Recover reads the cards that could claim this machine's roots into the
// mirror, then settles: see the package's Recovery. progress, when set,
// hears of every card read. It needs the projector lease.
func (p *Projector) Recover(ctx context.Context, progress func(done, total int)) (*Recovery, error) {
	if !p.Holding() {
		return nil, ErrNoLease
	}
	rs, err := ReadRecovery(ctx, p.st)
	if err != nil || rs.Done {
		return rs, err
	}
	if !rs.Fresh && rs.Started.IsZero() {
		if rs.Fresh, err = storeEmpty(ctx, p.st); err != nil {
			return rs, err
		}
	}
	rs.Started, rs.Err = time.Now().UTC(), ""
	switch {
	case p.st.Identity().New:
		// A machine id made just now: no card in GBrain can name it.
		rs.Done, rs.At = true, time.Now().UTC()
		return rs, p.putRecovery(ctx, rs)
	case !rs.Fresh:
		// The catalog binds its projects already (an upgrade, or GBrain
		// turned on later): nothing to take back, only duplicates of its
		// roots to settle, from a mirror a full refresh made complete.
		if complete, err := p.mirrorComplete(ctx); err != nil || !complete {
			return rs, err
		}
		rs.Done, rs.At = true, time.Now().UTC()
		return rs, p.settle(ctx, rs)
	}
	if err := p.putRecovery(ctx, rs); err != nil {
		return rs, err
	}
	if err := p.recoverCards(ctx, rs, progress); err != nil {
		rs.Err = err.Error()
		_ = p.putRecovery(ctx, rs)
		return rs, err
	}
	if err := p.settle(ctx, rs); err != nil {
		rs.Err = err.Error()
		_ = p.putRecovery(ctx, rs)
		return rs, err
	}
	return rs, nil
}

func (p *Projector) putRecovery(ctx context.Context, rs *Recovery) error {
	return p.commit(ctx, func(tx *store.Tx) error { return recoveryRow.Put(tx, *rs) })
}

// recoverCards lists and reads this machine's cards and the cards of format
// 1, and mirrors them.
func (p *Projector) recoverCards(ctx context.Context, rs *Recovery, progress func(done, total int)) error {
	var own, all, v2 map[string]gbrain.PageRef
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for i, tag := range []string{gbrain.MachineTag(p.set.MachineID), gbrain.CardTag, gbrain.FormatTag} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			refs, _, _, err := p.listTagged(ctx, tag)
			errs[i] = err
			switch i {
			case 0:
				own = refs
			case 1:
				all = refs
			case 2:
				v2 = refs
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	prefix := p.set.SlugPrefix + "/"
	want := map[string]gbrain.PageRef{}
	for slug, ref := range own {
		want[slug] = ref
	}
	rs.Own = len(want)
	for slug, ref := range all {
		if _, isV2 := v2[slug]; !isV2 && strings.HasPrefix(slug, prefix) {
			if _, mine := want[slug]; !mine {
				want[slug] = ref
				rs.Old++
			}
		}
	}
	puts, err := p.readCards(ctx, want, progress)
	if err != nil {
		return err
	}
	rs.Done, rs.At = true, time.Now().UTC()
	return p.commit(ctx, func(tx *store.Tx) error {
		for _, c := range puts {
			if err := tx.PutCard(c); err != nil {
				return err
			}
		}
		return recoveryRow.Put(tx, *rs)
	})
}

// readCards reads the pages of refs, InFlight at once, and judges them for
// the mirror (pages already mirrored with the same updated_at are not
// read again).
func (p *Projector) readCards(ctx context.Context, refs map[string]gbrain.PageRef, progress func(done, total int)) ([]*local.Card, error) {
	var slugs []string
	if err := p.st.View(ctx, func(r *store.Reader) error {
		for slug, ref := range refs {
			if c, err := r.Card(slug); err == nil && c != nil && c.UpdatedAt == string(ref.UpdatedAt) && ref.UpdatedAt != "" {
				continue
			}
			slugs = append(slugs, slug)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	sort.Strings(slugs)
	var mu sync.Mutex
	var puts []*local.Card
	var first error
	done := 0
	jobs := make(chan string)
	var wg sync.WaitGroup
	for range min(p.inFlight(), len(slugs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for slug := range jobs {
				page, err := p.read(ctx, slug)
				mu.Lock()
				done++
				switch {
				case err != nil && !gbrain.IsDefinite(err):
					if first == nil {
						first = err
					}
				case err == nil && page != nil:
					if lc, ok := p.judge(slug, page, nil); ok {
						puts = append(puts, lc)
					}
				}
				if progress != nil {
					progress(done, len(slugs))
				}
				mu.Unlock()
			}
		}()
	}
	for _, slug := range slugs {
		mu.Lock()
		stop := first != nil
		mu.Unlock()
		if stop || ctx.Err() != nil {
			break
		}
		jobs <- slug
	}
	close(jobs)
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return puts, first
}

// settle takes back this machine's cards whose roots the catalog binds
// under another id (ids minted while the cards could not be read), so that
// none stays as a duplicate, and says which.
func (p *Projector) settle(ctx context.Context, rs *Recovery) error {
	var lost []Orphan
	err := p.commit(ctx, func(tx *store.Tx) error {
		byRoot := map[string]*local.Project{}
		if len(p.set.Identity.Secret) > 0 {
			if err := tx.Projects(func(rec *local.Project) error {
				byRoot[p.set.Identity.RootKey(pathid.Key(rec.Root))] = rec
				return nil
			}); err != nil {
				return err
			}
		}
		var cards []*local.Card
		if err := tx.Cards(func(c *local.Card) error { cards = append(cards, c); return nil }); err != nil {
			return err
		}
		for _, c := range cards {
			rec := byRoot[c.RootKey]
			if c.MachineID != p.set.MachineID || c.RootKey == "" || c.Edited || rec == nil || rec.ID == c.ProjectID {
				continue
			}
			if cur, _ := tx.Project(c.ProjectID); cur != nil {
				continue
			}
			lost = append(lost, Orphan{Slug: c.Slug, ProjectID: c.ProjectID, Why: "its root is now " + rec.ID + " (bound before this machine's cards could be read): the old card is taken back"})
			outbox.Retract(tx, c.ProjectID, 0)
		}
		rs.NotTakenBack = lost
		return recoveryRow.Put(tx, *rs)
	})
	return err
}

// MarkFresh records, for a catalog that binds no project yet, that
// recovery could not even begin (GBrain unreachable: why): the ids the scan
// binds now are pending, and no card is written until this machine's cards
// were read. It changes nothing once recovery is done or the catalog binds
// projects.
func MarkFresh(ctx context.Context, st *store.Store, why error) error {
	return st.Update(ctx, func(tx *store.Tx) error {
		rs, _, _ := recoveryRow.Get(tx)
		if rs.Done || rs.Fresh {
			if !rs.Done && why != nil {
				rs.Err = why.Error()
				return recoveryRow.Put(tx, rs)
			}
			return nil
		}
		empty := true
		if err := tx.Projects(func(*local.Project) error { empty = false; return errStop }); err != nil && !errors.Is(err, errStop) {
			return err
		}
		if !empty {
			return nil
		}
		rs.Fresh, rs.Started = true, time.Now().UTC()
		switch {
		case st.Identity().New:
			// A machine id made just now: no card can name it, nothing is
			// pending.
			rs.Done, rs.At = true, rs.Started
		case why != nil:
			rs.Err = why.Error()
		}
		return recoveryRow.Put(tx, rs)
	})
}

// mirrorComplete reports whether a full refresh of the current card format
// completed (every card under the prefix is mirrored as of then).
func (p *Projector) mirrorComplete(ctx context.Context) (bool, error) {
	var mark mirrorMark
	err := p.st.View(ctx, func(r *store.Reader) error {
		mark, _, _ = markRow.Get(r)
		return nil
	})
	return mark.Format == gbrain.CardVersion && !mark.LastFull.IsZero(), err
}
