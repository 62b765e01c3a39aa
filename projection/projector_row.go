package projection

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/cgcat/cgcat/gbrain"
	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/store"
	"github.com/cgcat/cgcat/outbox"
)

// projectOne handles one row. A returned error stops the drain and leaves
// the row pending; every per-card outcome is an Outcome.
func (p *Projector) projectOne(ctx context.Context, it item, dry bool) (Outcome, PlanItem, error) {
	pi := PlanItem{ProjectID: it.row.ProjectID}
	row, rec, st := it.row, it.rec, it.st
	done := func(fn func(tx *store.Tx)) error {
		if dry {
			return nil
		}
		p.stage(func(tx *store.Tx) error {
			if fn != nil {
				fn(tx)
			}
			return outbox.Done(tx, row)
		})
		return nil
	}
	if rec == nil {
		// Forgotten (or pruned): its card goes, if it is ours and unedited.
		return p.retract(ctx, it, true, dry)
	}
	pi.Name = rec.Meta.Name
	if !p.pol.Policy().AllowsRecord(rec) {
		// Policy decides: nothing about this project leaves the machine,
		// and a card written before it was hidden is taken back.
		return p.retract(ctx, it, false, dry)
	}
	card, slug, content, err := encode(rec, p.set)
	pi.Slug = slug
	if err != nil {
		pi.Detail = err.Error()
		return Failed, pi, done(func(tx *store.Tx) { p.putFailed(tx, rec, st, slug, err) })
	}
	cardHash := gbrain.ContentHash(content)
	// Once a put_page was sent, a failure leaves its outcome unknown: GBrain
	// may have applied it (or apply it later). The state says so, so that a
	// retraction reads GBrain instead of trusting that no card was written.
	sent := false
	fail := func(err error) (Outcome, PlanItem, error) {
		if sent && !dry {
			p.stage(func(tx *store.Tx) error {
				s := State{Slug: slug}
				if st != nil {
					s = *st
				}
				s.Unconfirmed = true
				putState(tx, rec.ID, &s)
				return nil
			})
		}
		return "", pi, err
	}
	maxAmb := p.MaxAmbiguous
	if maxAmb <= 0 {
		maxAmb = 3
	}
	for attempt := 0; ; attempt++ {
		page, err := p.read(ctx, slug)
		if err != nil {
			return fail(err)
		}
		switch {
		case page == nil:
			pi.Detail = "new card"
		case st != nil && st.PageHash != 0 && gbrain.ContentHash(page.Content) == st.PageHash:
			if st.CardHash == cardHash && st.Slug == slug {
				pi.Detail = "the card in GBrain is already this one"
				return Unchanged, pi, done(func(tx *store.Tx) {
					if st.Failed != "" || st.Unshared || st.Retracted || st.Unconfirmed || st.Conflict != nil || st.RecordRevision != rec.RecordRevision {
						s := *st
						s.Failed, s.Unshared, s.Retracted, s.Unconfirmed, s.Conflict, s.RecordRevision = "", false, false, false, nil, rec.RecordRevision
						putState(tx, rec.ID, &s)
					}
					p.mirrorWritten(tx, slug, card, page)
				})
			}
			pi.Detail = "update"
		case st.ours(gbrain.ContentHash(page.Content)) && st.Slug == slug:
			// An earlier write of cgcat's that GBrain applied late: ours.
			pi.Detail = "update (the page holds an earlier write of cgcat's that landed late)"
		case holds(page, card, content):
			// Our own write whose hash was never recorded (a lost answer,
			// a crash before the batch): take it as written.
			pi.Detail = "the card in GBrain is already this one (a write whose answer was lost)"
			return Adopted, pi, done(func(tx *store.Tx) {
				putState(tx, rec.ID, written(slug, cardHash, page, rec, st))
				p.mirrorWritten(tx, slug, card, page)
			})
		case (st == nil || st.PageHash == 0) && p.ownUnedited(page, rec.ID, card.RootKey):
			// This machine's card from a catalog that was lost (the scan
			// took its id back by root key), exactly as cgcat wrote it
			// then: ours to update, not a conflict.
			pi.Detail = "this machine's card from before the catalog was rebuilt: updated"
		default:
			why := conflictWhy(page, rec.ID, p.set.MachineID, st)
			pi.Detail = why
			return Conflict, pi, done(func(tx *store.Tx) {
				s := State{Slug: slug}
				if st != nil {
					s = *st
				}
				s.Conflict = &ConflictNote{Why: why, At: time.Now().UTC(), PageHash: gbrain.ContentHash(page.Content)}
				putState(tx, rec.ID, &s)
				p.mirrorPage(tx, slug, page, &s)
			})
		}
		if dry {
			return Written, pi, nil
		}
		if !p.Holding() {
			return "", pi, fmt.Errorf("%w: %w", ErrNoLease, store.ErrFenced)
		}
		_, err = p.put(ctx, slug, content)
		sent = true
		switch {
		case err == nil:
		case ctx.Err() != nil:
			return fail(ctx.Err())
		case gbrain.IsAmbiguous(err) && attempt+1 < maxAmb:
			// The write may have landed: read back and compare first.
			p.log.Info("put_page answer lost; reading the card back before deciding", "slug", slug, "err", err)
			continue
		case gbrain.IsDefinite(err) && cardError(err):
			pi.Detail = err.Error()
			return Failed, pi, done(func(tx *store.Tx) { p.putFailed(tx, rec, st, slug, err) })
		default:
			return fail(err)
		}
		back, err := p.read(ctx, slug)
		if err != nil {
			// Written but not confirmed: the row stays; the next read finds
			// our card and adopts it.
			return fail(fmt.Errorf("read back %s after writing it: %w", slug, err))
		}
		if back == nil {
			return fail(fmt.Errorf("read back %s after writing it: the page is not there", slug))
		}
		if !holds(back, card, content) {
			why := "the page changed right after cgcat wrote it (another writer?)"
			pi.Detail = why
			return Conflict, pi, done(func(tx *store.Tx) {
				s := State{Slug: slug}
				if st != nil {
					s = *st
				}
				s.Conflict = &ConflictNote{Why: why, At: time.Now().UTC(), PageHash: gbrain.ContentHash(back.Content)}
				putState(tx, rec.ID, &s)
				p.mirrorPage(tx, slug, back, &s)
			})
		}
		return Written, pi, done(func(tx *store.Tx) {
			putState(tx, rec.ID, written(slug, cardHash, back, rec, st))
			p.mirrorWritten(tx, slug, card, back)
		})
	}
}

// written is the state after cgcat wrote page; prev (the state before,
// nil if none) gives the hashes of the earlier writes of the same slug.
func written(slug string, cardHash uint64, page *gbrain.Page, rec *local.Project, prev *State) *State {
	s := &State{
		Slug:           slug,
		CardHash:       cardHash,
		PageHash:       gbrain.ContentHash(page.Content),
		PageUpdatedAt:  string(page.UpdatedAt),
		RecordRevision: rec.RecordRevision,
		WrittenAt:      time.Now().UTC(),
	}
	if prev != nil && prev.Slug == slug {
		for _, h := range append([]uint64{prev.PageHash}, prev.Earlier...) {
			if h != 0 && h != s.PageHash && !slices.Contains(s.Earlier, h) && len(s.Earlier) < maxEarlier {
				s.Earlier = append(s.Earlier, h)
			}
		}
	}
	return s
}

func (p *Projector) putFailed(tx *store.Tx, rec *local.Project, st *State, slug string, err error) {
	s := State{Slug: slug}
	if st != nil {
		s = *st
	}
	s.Failed = err.Error()
	putState(tx, rec.ID, &s)
}

// cardError: GBrain refused this card's content (status "error", e.g. its
// frontmatter), or answered for another slug, or the client refused it before
// sending — not the connection or the configuration, so other cards may still
// go through. GBrain's own isError answers (invalid_params, internal_error —
// an unregistered source —, permission_denied) are about every card: they
// stop the drain and the rows wait.
func cardError(err error) bool {
	return errors.Is(err, gbrain.ErrPutRejected) || errors.Is(err, gbrain.ErrSlugMismatch) ||
		errors.Is(err, gbrain.ErrInvalidSlug) || errors.Is(err, gbrain.ErrInvalidArgument)
}

func conflictWhy(page *gbrain.Page, projectID, machineID string, st *State) string {
	c, err := gbrain.Decode(page.Content)
	switch {
	case errors.Is(err, gbrain.ErrNotOurCard):
		return "the page at this slug is not a cgcat card (no ownership marker): written by someone else"
	case errors.Is(err, gbrain.ErrCardTampered):
		return "the card's locator does not match its ids (tampered)"
	case errors.Is(err, gbrain.ErrPathForbidden):
		return "the card carries a path although it is reference-only (tampered)"
	case err != nil:
		return "the page does not parse as a cgcat card: " + err.Error()
	case c.MachineID != machineID:
		return fmt.Sprintf("the card names machine %s, not this one", c.MachineID)
	case c.ProjectID != projectID:
		return fmt.Sprintf("the card names project %s", c.ProjectID)
	case st == nil || st.PageHash == 0:
		return "a card cgcat has no record of writing (its content differs from what cgcat would write)"
	}
	return "edited in GBrain since cgcat's last write (content hash differs)"
}
