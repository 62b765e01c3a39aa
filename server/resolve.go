package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/catalog"
	"github.com/cgcat/cgcat/local/ids"
)

// Resolve answers local_codegraph_resolve (R21): the current record of an
// id from an earlier answer. It never takes a path.
func (f *Frontend) Resolve(ctx context.Context, a ResolveArgs) (*Envelope, error) {
	return f.onSoundView(func() (*Envelope, error) { return f.resolve(ctx, a) })
}

func (f *Frontend) resolve(ctx context.Context, a ResolveArgs) (*Envelope, error) {
	c, early, err := f.begin(ctx)
	if c == nil {
		return early, err
	}
	var p *local.Project
	if ids.ValidProjectID(a.ProjectID) {
		p = c.cat.Get(a.ProjectID)
	}
	if p == nil && ids.ValidProjectID(a.ProjectID) {
		if e := f.resolveCard(ctx, c, a.ProjectID); e != nil {
			return e, nil
		}
	}
	if p == nil {
		e := f.envelope(c, StatusUnknownProject)
		msg := "No project with this id is known on this machine. It may come from another machine, or a record that was forgotten: search again with " + f.searchWith() + "."
		if !ids.ValidProjectID(a.ProjectID) {
			msg = "This is not a projectId issued by this catalog (ids look like cg_ followed by 16 letters and digits; a path is never an id). Search with " + f.searchWith() + " instead."
		}
		e.Message = prepend(msg, e.Message)
		return e, nil
	}
	ck := catalog.Recheck(p, c.pol)
	if !ck.Allowed {
		e := f.envelope(c, StatusNotAvailable)
		e.Message = prepend(f.notShared(), e.Message)
		return e, nil
	}
	if a.ExpectedRecordRevision != 0 && a.ExpectedRecordRevision != p.RecordRevision {
		e := f.envelope(c, StatusRecordChanged)
		e.Message = prepend(fmt.Sprintf("The record changed since revision %d (now %d). Check that it is still the project you mean, then resolve again with the new revision or search again.", a.ExpectedRecordRevision, p.RecordRevision), e.Message)
		rec := f.project(c, p, ck, []string{"record changed"}, "", false)
		rec.ProjectPath, rec.Handoff = nil, nil
		rec.Why = "the record changed since the revision you hold; check it is still the project you mean, then resolve again"
		e.Projects = append(e.Projects, rec)
		return e, nil
	}
	e := f.envelope(c, StatusOK)
	if !ck.OK {
		e.Status = StatusMissing
		msg := "The project's root or its CodeGraph index is not there any more: " + ck.Why + ". Search again with " + f.searchWith() + "."
		switch {
		case p.MovedTo != "" && ck.Availability == local.Missing:
			msg = fmt.Sprintf("This project's index moved: it is now the project %s (a new record). %s for its current path.", p.MovedTo, f.resolveIt(p.MovedTo))
		case ck.Availability == local.Inaccessible:
			// Not gone: unreadable right now (permissions, an offline volume).
			msg = "The project's root cannot be checked right now: " + ck.Why + ". It may be on an offline volume or need permissions; try again later, or search again with " + f.searchWith() + "."
		}
		e.Message = prepend(msg, e.Message)
	}
	e.Projects = append(e.Projects, f.project(c, p, ck, []string{"resolved by projectId"}, "", true))
	return e, nil
}

func prepend(msg, rest string) string {
	if rest == "" {
		return msg
	}
	return msg + " " + rest
}

// resolveCard answers for an id that is not bound here from the mirrored
// GBrain cards: another machine's project is historical (no path); this
// machine's is missing — with movedTo when its root is in the catalog under
// a newer id. nil when no card names the id.
func (f *Frontend) resolveCard(ctx context.Context, c *call, id string) *Envelope {
	if !c.cfg.GBrain.Enabled || c.cat.Forgotten(id) {
		// A forgotten id is unknown, even while GBrain still holds its
		// card (the projector retracts it soon).
		return nil
	}
	cards := c.cat.CardsOf(id)
	if len(cards) == 0 && f.opt.Cards != nil {
		// Not mirrored yet: ask GBrain, within the recall budget.
		lctx, cancel := context.WithTimeout(ctx, f.opt.RecallBudget)
		cd, err := f.opt.Cards.LookupCard(lctx, id)
		cancel()
		switch {
		case errors.Is(err, local.ErrRecallNotReady):
			c.notes = append(c.notes, "GBrain is still being connected to; its card of this id, if any, can be read in a moment.")
		case err != nil:
			c.gstate = GBrainDegraded
		case cd != nil && cd.ProjectID == id:
			cards = []*local.Card{cd}
		}
	}
	if len(cards) == 0 {
		return nil
	}
	cd := cards[0]
	for _, k := range cards {
		if !k.Edited { // cgcat's own words before a person's copy
			cd = k
			break
		}
	}
	reasons := []string{"resolved from a GBrain card"}
	if cd.MachineID != c.cat.MachineID() {
		e := f.envelope(c, StatusOK)
		e.Message = prepend(fmt.Sprintf("This project lives on another machine (%s): it is known here only from its GBrain card, so there is no path to hand to %s. Search with %s for a project on this machine instead.", cd.MachineID, f.explorer(), f.searchWith()), e.Message)
		if cd.MovedTo != "" {
			e.Message = prepend(fmt.Sprintf("On its machine this project moved: it is now %s.", cd.MovedTo), e.Message)
		}
		e.Projects = append(e.Projects, f.cardProject(cd, reasons, AvailabilityHistorical))
		return e
	}
	e := f.envelope(c, StatusMissing)
	out := f.cardProject(cd, reasons, string(local.Missing))
	if rec := c.cat.ByRootKey(cd.RootKey); rec != nil {
		if !c.cat.Visible(rec.ID, c.pol) {
			e := f.envelope(c, StatusNotAvailable)
			e.Message = prepend(f.notShared(), e.Message)
			return e
		}
		out.MovedTo = rec.ID
		out.Why = "this machine's catalog knows the project under a newer id: " + rec.ID
		e.Message = prepend(fmt.Sprintf("This id comes from an older catalog of this machine; the project is now %s. %s for its current path.", rec.ID, f.resolveIt(rec.ID)), e.Message)
	} else {
		e.Message = prepend("This project was on this machine (its GBrain card says so) but is not in the catalog any more. Search again with "+f.searchWith()+".", e.Message)
	}
	e.Projects = append(e.Projects, out)
	return e
}
