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
	rec := it.rec
	if rec == nil {
		// Forgotten (or pruned): its card goes, if it is ours and unedited.
		return p.retract(ctx, it, true, dry)
	}
	if !p.pol.Policy().AllowsRecord(rec) {
		// Policy decides: nothing about this project leaves the machine,
		// and a card written before it was hidden is taken back.
		return p.retract(ctx, it, false, dry)
	}
	w := &cardWrite{p: p, dry: dry, row: it.row, rec: rec, st: it.st, pi: PlanItem{ProjectID: it.row.ProjectID, Name: rec.Meta.Name}}
	var err error
	w.card, w.slug, w.content, err = encode(rec, p.set)
	w.pi.Slug = w.slug
	if err != nil {
		w.pi.Detail = err.Error()
		return w.failed(err), w.pi, nil
	}
	w.cardHash = gbrain.ContentHash(w.content)
	return w.run(ctx)
}

// cardWrite is one record's card on its way to GBrain (projectOne).
type cardWrite struct {
	p   *Projector
	dry bool
	row outbox.Row
	rec *local.Project
	st  *State // the state before (nil: none)
	pi  PlanItem

	card     gbrain.Card
	slug     string
	content  string
	cardHash uint64
	// sent: a put_page was sent, so a failure leaves its outcome unknown:
	// GBrain may have applied it (or apply it later). The state says so,
	// so that a retraction reads GBrain instead of trusting that no card
	// was written.
	sent bool
}

// run reads the page, decides, writes and reads back; an ambiguous write
// is read back and decided again, up to MaxAmbiguous times.
func (w *cardWrite) run(ctx context.Context) (Outcome, PlanItem, error) {
	p := w.p
	maxAmb := p.MaxAmbiguous
	if maxAmb <= 0 {
		maxAmb = 3
	}
	for attempt := 0; ; attempt++ {
		page, err := p.read(ctx, w.slug)
		if err != nil {
			return w.stop(err)
		}
		if o, final := w.judge(page); final {
			return o, w.pi, nil
		}
		if w.dry {
			return Written, w.pi, nil
		}
		if !p.Holding() {
			return "", w.pi, fmt.Errorf("%w: %w", ErrNoLease, store.ErrFenced)
		}
		_, err = p.put(ctx, w.slug, w.content)
		w.sent = true
		switch {
		case err == nil:
		case ctx.Err() != nil:
			return w.stop(ctx.Err())
		case gbrain.IsAmbiguous(err) && attempt+1 < maxAmb:
			// The write may have landed: read back and compare first.
			p.log.Info("put_page answer lost; reading the card back before deciding", "slug", w.slug, "err", err)
			continue
		case gbrain.IsDefinite(err) && cardError(err):
			w.pi.Detail = err.Error()
			return w.failed(err), w.pi, nil
		default:
			return w.stop(err)
		}
		return w.readBack(ctx)
	}
}

// judge decides from the page GBrain holds before writing: final when
// nothing is to be written (the card is there already, or someone else's
// edit is).
func (w *cardWrite) judge(page *gbrain.Page) (o Outcome, final bool) {
	st, rec, slug := w.st, w.rec, w.slug
	switch {
	case page == nil:
		w.pi.Detail = "new card"
	case st != nil && st.PageHash != 0 && gbrain.ContentHash(page.Content) == st.PageHash:
		if st.CardHash == w.cardHash && st.Slug == slug {
			w.pi.Detail = "the card in GBrain is already this one"
			return w.done(Unchanged, func(tx *store.Tx) {
				if st.Failed != "" || st.Unshared || st.Retracted || st.Unconfirmed || st.Conflict != nil || st.RecordRevision != rec.RecordRevision {
					s := *st
					s.Failed, s.Unshared, s.Retracted, s.Unconfirmed, s.Conflict, s.RecordRevision = "", false, false, false, nil, rec.RecordRevision
					putState(tx, rec.ID, &s)
				}
				w.p.mirrorWritten(tx, slug, w.card, page)
			}), true
		}
		w.pi.Detail = "update"
	case st.ours(gbrain.ContentHash(page.Content)) && st.Slug == slug:
		// An earlier write of cgcat's that GBrain applied late: ours.
		w.pi.Detail = "update (the page holds an earlier write of cgcat's that landed late)"
	case holds(page, w.card, w.content):
		// Our own write whose hash was never recorded (a lost answer,
		// a crash before the batch): take it as written.
		w.pi.Detail = "the card in GBrain is already this one (a write whose answer was lost)"
		return w.written(Adopted, page), true
	case (st == nil || st.PageHash == 0) && w.p.ownUnedited(page, rec.ID, w.card.RootKey):
		// This machine's card from a catalog that was lost (the scan
		// took its id back by root key), exactly as cgcat wrote it
		// then: ours to update, not a conflict.
		w.pi.Detail = "this machine's card from before the catalog was rebuilt: updated"
	default:
		return w.conflict(conflictWhy(page, rec.ID, w.p.set.MachineID, st), page), true
	}
	return "", false
}

// readBack reads the card just written: written when it holds what was
// sent, a conflict when another writer changed it right after.
func (w *cardWrite) readBack(ctx context.Context) (Outcome, PlanItem, error) {
	back, err := w.p.read(ctx, w.slug)
	if err != nil {
		// Written but not confirmed: the row stays; the next read finds
		// our card and adopts it.
		return w.stop(fmt.Errorf("read back %s after writing it: %w", w.slug, err))
	}
	if back == nil {
		return w.stop(fmt.Errorf("read back %s after writing it: the page is not there", w.slug))
	}
	if !holds(back, w.card, w.content) {
		return w.conflict("the page changed right after cgcat wrote it (another writer?)", back), w.pi, nil
	}
	return w.written(Written, back), w.pi, nil
}

// done stages fn (if any) with the row's removal, unless this is a dry run.
func (w *cardWrite) done(o Outcome, fn func(tx *store.Tx)) Outcome {
	if !w.dry {
		w.p.stage(func(tx *store.Tx) error {
			if fn != nil {
				fn(tx)
			}
			return outbox.Done(tx, w.row)
		})
	}
	return o
}

// written records page as cgcat's card (written now, or adopted).
func (w *cardWrite) written(o Outcome, page *gbrain.Page) Outcome {
	return w.done(o, func(tx *store.Tx) {
		putState(tx, w.rec.ID, written(w.slug, w.cardHash, page, w.rec, w.st))
		w.p.mirrorWritten(tx, w.slug, w.card, page)
	})
}

// failed records that the card cannot be written as it is.
func (w *cardWrite) failed(err error) Outcome {
	return w.done(Failed, func(tx *store.Tx) { w.p.putFailed(tx, w.rec, w.st, w.slug, err) })
}

// conflict records that page holds content cgcat did not write.
func (w *cardWrite) conflict(why string, page *gbrain.Page) Outcome {
	w.pi.Detail = why
	return w.done(Conflict, func(tx *store.Tx) {
		s := State{Slug: w.slug}
		if w.st != nil {
			s = *w.st
		}
		s.Conflict = &ConflictNote{Why: why, At: time.Now().UTC(), PageHash: gbrain.ContentHash(page.Content)}
		putState(tx, w.rec.ID, &s)
		w.p.mirrorPage(tx, w.slug, page, &s)
	})
}

// stop ends the drain with err, the row left pending; a write already sent
// marks the state unconfirmed.
func (w *cardWrite) stop(err error) (Outcome, PlanItem, error) {
	if w.sent && !w.dry {
		w.p.stage(func(tx *store.Tx) error {
			s := State{Slug: w.slug}
			if w.st != nil {
				s = *w.st
			}
			s.Unconfirmed = true
			putState(tx, w.rec.ID, &s)
			return nil
		})
	}
	return "", w.pi, err
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
