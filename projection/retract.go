package projection

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/cgcat/cgcat/gbrain"
	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/ids"
	"github.com/cgcat/cgcat/local/pathid"
	"github.com/cgcat/cgcat/local/store"
	"github.com/cgcat/cgcat/outbox"
)

// Retraction: the card of a project that is forgotten (its record is gone)
// or hidden on this machine (denied, unshared) is deleted from GBrain with
// delete_page (a soft delete GBrain can undo for 72 h) — only when the page
// is ours and unedited: its content hash is the one recorded after cgcat's
// last write, or (no record of writing it: a lost catalog) it is exactly
// what cgcat writes for a card of this machine and this project. A card a
// person edited is reported as a conflict and never touched.

// retract handles the row of a forgotten (gone) or hidden project.
func (p *Projector) retract(ctx context.Context, it item, gone, dry bool) (Outcome, PlanItem, error) {
	id, st := it.row.ProjectID, it.st
	pi := PlanItem{ProjectID: id}
	if it.rec != nil {
		pi.Name = it.rec.Meta.Name
	}
	finish := func(fn func(tx *store.Tx)) error {
		if dry {
			return nil
		}
		row := it.row
		p.stage(func(tx *store.Tx) error {
			if fn != nil {
				fn(tx)
			}
			return outbox.Done(tx, row)
		})
		return nil
	}
	// What the state says once the card is gone (or was never there).
	settle := func(tx *store.Tx, slug string, retracted bool) {
		if slug != "" {
			tx.DeleteCard(slug)
		}
		if gone {
			deleteState(tx, id)
			return
		}
		putState(tx, id, &State{Slug: slug, Unshared: true, Retracted: retracted || (st != nil && st.Retracted)})
	}
	slug, err := gbrain.CardSlug(p.set.SlugPrefix, id)
	if err != nil {
		// An id no card can have: nothing in GBrain to take back.
		pi.Detail = "no card can exist for this id"
		if gone {
			return Dropped, pi, finish(func(tx *store.Tx) { deleteState(tx, id) })
		}
		return NotShared, pi, finish(func(tx *store.Tx) { settle(tx, "", false) })
	}
	pi.Slug = slug
	if !gone && !it.row.Retract && (st == nil || st.PageHash == 0 && !st.Unconfirmed) && (it.card == nil || it.card.MachineID != p.set.MachineID) {
		// Hidden, and nothing says it ever had a card (cgcat never wrote
		// one, nor sent a write whose outcome is unknown; the mirror holds
		// none): not even a read about it.
		pi.Detail = unsharedNote
		return NotShared, pi, finish(func(tx *store.Tx) { settle(tx, "", false) })
	}
	page, err := p.read(ctx, slug)
	if err != nil {
		return "", pi, err
	}
	if page == nil {
		if gone {
			pi.Detail = "the record is gone and GBrain has no card for it"
			return Dropped, pi, finish(func(tx *store.Tx) { settle(tx, slug, false) })
		}
		pi.Detail = unsharedNote + "; GBrain has no card for it"
		return NotShared, pi, finish(func(tx *store.Tx) { settle(tx, slug, false) })
	}
	if !p.unedited(page, id, st) {
		why := "hidden on this machine, but its card in GBrain was edited (or is not cgcat's): not deleted; delete the page in GBrain if it should go"
		if gone {
			why = "its project was forgotten, but its card in GBrain was edited (or is not cgcat's): not deleted; delete the page in GBrain if it should go"
		}
		pi.Detail = why
		return Conflict, pi, finish(func(tx *store.Tx) {
			s := State{Slug: slug}
			if st != nil {
				s = *st
			}
			s.Unshared = !gone
			s.Conflict = &ConflictNote{Why: why, At: time.Now().UTC(), PageHash: gbrain.ContentHash(page.Content)}
			putState(tx, id, &s)
			p.mirrorPage(tx, slug, page, &s)
		})
	}
	if gone {
		pi.Detail = "its project was forgotten: its card is deleted from GBrain"
	} else {
		pi.Detail = unsharedNote + ": its card is deleted from GBrain"
	}
	if dry {
		return Retracted, pi, nil
	}
	if !p.Holding() {
		return "", pi, fmt.Errorf("%w: %w", ErrNoLease, store.ErrFenced)
	}
	if err := p.delete(ctx, slug); err != nil {
		return "", pi, err
	}
	p.noteRetracted(gbrain.Tombstone{ProjectID: id, At: string(page.UpdatedAt)})
	return Retracted, pi, finish(func(tx *store.Tx) { settle(tx, slug, true) })
}

// unedited reports whether the page at a project's slug is cgcat's own,
// unchanged card of this machine: the hash recorded after the last write
// (or after an earlier one, which GBrain may apply late), or — no record of writing it — exactly what cgcat writes for it.
func (p *Projector) unedited(page *gbrain.Page, id string, st *State) bool {
	if st != nil && st.PageHash != 0 && st.Slug == page.Slug {
		return st.ours(gbrain.ContentHash(page.Content))
	}
	return p.ownUnedited(page, id, "")
}

// ownUnedited reports whether page is a card of this machine for project id
// exactly as cgcat writes it (and, when both are known, for the root with
// rootKey).
func (p *Projector) ownUnedited(page *gbrain.Page, id, rootKey string) bool {
	c, err := gbrain.Decode(page.Content)
	if err != nil || c.MachineID != p.set.MachineID || c.ProjectID != id {
		return false
	}
	if c.RootKey != "" && rootKey != "" && c.RootKey != rootKey {
		return false
	}
	return canonical(page, c)
}

// delete soft-deletes a page once: only a failure that surely sent nothing
// is retried; after a lost answer the page is read back (absent: deleted).
func (p *Projector) delete(ctx context.Context, slug string) error {
	maxAmb := p.MaxAmbiguous
	if maxAmb <= 0 {
		maxAmb = 3
	}
	for attempt := 0; ; attempt++ {
		err := p.retry(ctx, func(c gbrain.Brain) error {
			_, err := c.DeletePage(ctx, slug)
			return err
		})
		switch {
		case err == nil || errors.Is(err, gbrain.ErrPageNotFound):
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		case gbrain.IsAmbiguous(err) && attempt+1 < maxAmb:
			page, rerr := p.read(ctx, slug)
			if rerr != nil {
				return fmt.Errorf("read back %s after deleting it: %w", slug, rerr)
			}
			if page == nil {
				return nil
			}
			p.log.Info("delete_page answer lost and the page is still there; deleting again", "slug", slug)
		default:
			return err
		}
	}
}

// mirrorWritten mirrors a card cgcat just wrote (or found as written).
func (p *Projector) mirrorWritten(tx *store.Tx, slug string, card gbrain.Card, page *gbrain.Page) {
	lc := localCard(slug, card)
	lc.UpdatedAt = string(page.UpdatedAt)
	_ = tx.PutCard(lc)
}

// mirrorPage mirrors a page as it is (a conflict: someone else's content).
func (p *Projector) mirrorPage(tx *store.Tx, slug string, page *gbrain.Page, st *State) {
	if lc, ok := p.judge(slug, page, st); ok {
		_ = tx.PutCard(lc)
	}
}

// SweepReport counts what Sweep queued.
type SweepReport struct {
	Retract int `json:"retract"` // cards of projects hidden or gone since they were written
	Reshare int `json:"reshare"` // projects shared again after their card was taken back
}

// Sweep queues what no record change queued: the cards of projects that
// became hidden after they were written (sharing or deny roots changed) —
// including this machine's cards that only the mirror knows of (written
// before the catalog was lost) — for retraction, and projects shared again
// after a retraction for a new card. One View, and one Update when
// something is queued. It needs no lease: queueing is what the scanner does.
func (p *Projector) Sweep(ctx context.Context) (SweepReport, error) {
	var rep SweepReport
	pol := p.policy()
	type q struct {
		id      string
		rev     uint64
		retract bool
	}
	var queue []q
	err := p.st.View(ctx, func(r *store.Reader) error {
		rows, err := outbox.Pending(r, 0)
		if err != nil && rows == nil {
			return err
		}
		pending := map[string]bool{}
		for _, row := range rows {
			pending[row.ProjectID] = true
		}
		known := map[string]bool{}
		var serr error
		if err := states.IDs(r, func(id string) bool {
			known[id] = true
			if pending[id] {
				return true
			}
			st, err := readState(r, id)
			if err != nil || st == nil || st.Conflict != nil {
				return true
			}
			rec, err := r.Project(id)
			if err != nil {
				serr = err
				return false
			}
			switch {
			case rec == nil && st.PageHash != 0:
				queue = append(queue, q{id, st.RecordRevision, true})
				rep.Retract++
			case rec == nil:
			case !pol.AllowsRecord(rec) && (st.PageHash != 0 || st.Unconfirmed):
				queue = append(queue, q{id, rec.RecordRevision, true})
				rep.Retract++
			case pol.AllowsRecord(rec) && (st.Unshared || st.Retracted):
				queue = append(queue, q{id, rec.RecordRevision, false})
				rep.Reshare++
			}
			return true
		}); err != nil {
			return err
		}
		if serr != nil {
			return serr
		}
		return r.Cards(func(c *local.Card) error {
			if c.MachineID != p.set.MachineID || known[c.ProjectID] || pending[c.ProjectID] || c.Edited {
				return nil
			}
			rec, err := r.Project(c.ProjectID)
			if err != nil || rec == nil {
				return err
			}
			if !pol.AllowsRecord(rec) {
				known[c.ProjectID] = true
				queue = append(queue, q{c.ProjectID, rec.RecordRevision, true})
				rep.Retract++
			}
			return nil
		})
	})
	if err != nil || len(queue) == 0 {
		return rep, err
	}
	err = p.st.Update(ctx, func(tx *store.Tx) error {
		for _, x := range queue {
			tx.EnqueueCard(x.id, x.rev, x.retract)
		}
		return nil
	})
	return rep, err
}

// PruneReport is what `gbrain sync --prune` found among the cards under our
// prefix whose project id is not bound here.
type PruneReport struct {
	// Orphans are this machine's own unedited cards of ids not bound here
	// (forgotten, or replaced by a newer id for the same root): queued for
	// deletion (or, in a dry run, would be).
	Orphans []Orphan `json:"orphans"`
	// Edited are this machine's cards of unbound ids that a person changed:
	// never deleted.
	Edited []Orphan `json:"edited"`
	// OtherMachines counts cards of other machines: never orphans, never
	// touched. NotCgcat counts pages that do not name a machine.
	OtherMachines int  `json:"otherMachines"`
	NotCgcat      int  `json:"notCgcat"`
	Queued        int  `json:"queued"`
	DryRun        bool `json:"dryRun,omitempty"`
	Shifted       bool `json:"shifted,omitempty"`
}

// orphan reports whether page (the card at slug, whose id is bound nowhere
// here) is this machine's own, unedited: an orphan to take back. What it
// is instead is counted in rep.
func (p *Projector) orphan(rep *PruneReport, slug, id string, page *gbrain.Page, st *State, byRootKey map[string]string) bool {
	c, derr := gbrain.Decode(page.Content)
	if derr != nil {
		if lc := lenientCard(slug, id, page); lc != nil && lc.MachineID != p.set.MachineID {
			rep.OtherMachines++
		} else if lc != nil {
			rep.Edited = append(rep.Edited, Orphan{Slug: slug, ProjectID: id, Why: "this machine's card, edited in GBrain (no longer cgcat's shape): left alone"})
		} else {
			rep.NotCgcat++
		}
		return false
	}
	if c.MachineID != p.set.MachineID {
		rep.OtherMachines++
		return false
	}
	if !p.unedited(page, id, st) {
		rep.Edited = append(rep.Edited, Orphan{Slug: slug, ProjectID: id, Why: "this machine's card, edited in GBrain: left alone"})
		return false
	}
	why := "this machine's card of a project id that is not in the catalog (forgotten, or from a catalog that was lost)"
	if now := byRootKey[c.RootKey]; c.RootKey != "" && now != "" {
		why = "this machine's card of a project now known as " + now + " (same root): replaced"
	}
	rep.Orphans = append(rep.Orphans, Orphan{Slug: slug, ProjectID: id, Why: why})
	return true
}

// Prune finds this machine's own orphaned cards: it lists the cards, reads
// those whose ids are not bound here, and queues a retraction for each one
// that is this machine's and unedited (the drain checks again before it
// deletes). Other machines' cards are never called orphans. With dryRun
// nothing is queued. It needs no lease.
func (p *Projector) Prune(ctx context.Context, dryRun bool) (*PruneReport, error) {
	refs, _, shifted, err := p.listCards(ctx)
	if err != nil {
		return nil, err
	}
	rep := &PruneReport{Orphans: []Orphan{}, Edited: []Orphan{}, DryRun: dryRun, Shifted: shifted}
	prefix := p.set.SlugPrefix + "/"
	bound := map[string]bool{}
	byRootKey := map[string]string{}
	states := map[string]*State{}
	err = p.st.View(ctx, func(r *store.Reader) error {
		if err := r.Projects(func(rec *local.Project) error {
			bound[rec.ID] = true
			if len(p.set.Identity.Secret) > 0 {
				byRootKey[p.set.Identity.RootKey(pathid.Key(rec.Root))] = rec.ID
			}
			return nil
		}); err != nil {
			return err
		}
		for slug := range refs {
			if id, ok := strings.CutPrefix(slug, prefix); ok && !bound[id] {
				st, err := readState(r, id)
				if err != nil {
					return err
				}
				states[id] = st
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slugs := make([]string, 0, len(refs))
	for slug := range refs {
		slugs = append(slugs, slug)
	}
	sort.Strings(slugs)
	var queue []string
	for _, slug := range slugs {
		id, ok := strings.CutPrefix(slug, prefix)
		if !ok || bound[id] {
			continue
		}
		if !ids.ValidProjectID(id) {
			rep.NotCgcat++
			continue
		}
		page, err := p.read(ctx, slug)
		if err != nil {
			if gbrain.IsDefinite(err) {
				rep.NotCgcat++
				continue
			}
			return rep, err
		}
		if page != nil && p.orphan(rep, slug, id, page, states[id], byRootKey) {
			queue = append(queue, id)
		}
	}
	if dryRun || len(queue) == 0 {
		return rep, nil
	}
	err = p.st.Update(ctx, func(tx *store.Tx) error {
		for _, id := range queue {
			if p, _ := tx.Project(id); p != nil {
				continue // bound meanwhile (a scan took the id back)
			}
			outbox.Retract(tx, id, 0)
			rep.Queued++
		}
		return nil
	})
	return rep, err
}
