package server

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cgcat/cgcat/local"
)

// Historical candidates: GBrain cards of projects that are not bound on
// this machine — another machine's projects, or this machine's from a lost
// catalog. They are data about a project elsewhere: no path, no handoff,
// and never a card of a project this frontend hides.

// AvailabilityHistorical marks a project known only from a GBrain card.
const AvailabilityHistorical = "historical"

// cardRef is how a listing names a card among record ids.
const cardRef = "card:"

// historicalCard reports whether a mirrored card may be shown to this
// frontend as a historical candidate, and says why not otherwise.
func (f *Frontend) historicalCard(c *call, cd *local.Card) bool {
	if !c.cfg.GBrain.Enabled || cd.ProjectID == "" {
		return false
	}
	if c.cat.Get(cd.ProjectID) != nil {
		return false // bound here: the local record answers, under its own rules
	}
	if cd.MachineID == c.cat.MachineID() {
		// This machine's card from a lost catalog: if its root is known
		// here under a new id, that record answers; a hidden one hides it.
		if rec := c.cat.ByRootKey(cd.RootKey); rec != nil {
			return false
		}
	}
	return true
}

// addHistorical appends the cards that match query and are not bound here,
// after the local hits: one per project id. A card whose project moved on
// its machine is folded into the card of the project it moved to (shown
// once, as that one), when that card is mirrored.
func (f *Frontend) addHistorical(c *call, l *listing, query string) {
	hits := c.cat.SearchCards(query, func(cd *local.Card) bool { return f.historicalCard(c, cd) }, maxHits)
	seen := map[string]int{} // project id → index in l
	for _, h := range hits {
		cd := c.cat.Card(h.ID)
		if cd == nil {
			continue
		}
		reasons := append([]string{"GBrain card from machine " + cd.MachineID}, h.Reasons...)
		from := ""
		if to := f.movedCard(c, cd); to != nil {
			from = "moved on its machine from " + cd.ProjectID
			reasons = append(reasons, from)
			cd = to
		}
		if i, ok := seen[cd.ProjectID]; ok {
			if from != "" && !slices.Contains(l.reasons[i], from) {
				l.reasons[i] = append(l.reasons[i], from)
			}
			continue
		}
		seen[cd.ProjectID] = len(l.ids)
		if cd.StaleSince != "" {
			reasons = append(reasons, "stale: machine "+cd.MachineID+" silent since "+cd.StaleSince)
		}
		l.ids = append(l.ids, cardRef+cd.Slug)
		l.reasons = append(l.reasons, reasons)
	}
}

// movedCard is the card a moved card's project moved to, following at
// most a few moves, when it is mirrored and may be shown here (nil else).
func (f *Frontend) movedCard(c *call, cd *local.Card) *local.Card {
	var to *local.Card
	for hop := 0; hop < 4 && cd.MovedTo != ""; hop++ {
		next := c.cat.CardsOf(cd.MovedTo)
		if len(next) == 0 || next[0].MachineID != cd.MachineID || !f.historicalCard(c, next[0]) {
			break
		}
		to, cd = next[0], next[0]
	}
	return to
}

// cardProject renders a card as a project an agent may read about but not
// open: no projectPath, no handoff.
func (f *Frontend) cardProject(cd *local.Card, reasons []string, availability string) Project {
	out := Project{
		ProjectID:              cd.ProjectID,
		RecordRevision:         max(cd.RecordRevision, 1),
		Name:                   dataText(cd.Name, 120),
		Description:            dataText(cd.Description, 300),
		Reason:                 reasons,
		Availability:           availability,
		IndexState:             string(local.MarkerUnknown),
		Freshness:              local.FreshnessUnknown,
		ValidatedAt:            f.opt.Now().UTC().Format(time.RFC3339),
		RevalidateAfterSeconds: RevalidateAfter,
		Packages:               capList(cd.Packages, 8, 200),
		MachineID:              cd.MachineID,
	}
	if out.Reason == nil {
		out.Reason = []string{}
	}
	out.Why = fmt.Sprintf("known only from a GBrain card of machine %s: the project is not on this machine, so its code cannot be read from here", cd.MachineID)
	if availability == string(local.Missing) {
		out.Why = "known only from this machine's GBrain card: the project is not in the catalog any more (its folder is gone, or the catalog was rebuilt without it)"
		return out
	}
	if cd.MovedTo != "" {
		out.MovedTo = cd.MovedTo
		out.Why += "; on its machine it moved: it is now the project " + cd.MovedTo
	} else if cd.Availability != "" && cd.Availability != string(local.Present) {
		out.Why += "; on its machine it is " + cd.Availability
	}
	if cd.StaleSince != "" {
		out.Why += fmt.Sprintf("; stale: machine %s has not been heard of since %s", cd.MachineID, cd.StaleSince)
	}
	return out
}

func isCardRef(id string) (string, bool) { return strings.CutPrefix(id, cardRef) }
