package projection

import (
	"context"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/cgcat/cgcat/gbrain"
	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/ids"
	"github.com/cgcat/cgcat/local/store"
	"github.com/cgcat/cgcat/outbox"
)

// ReconcileReport is what `gbrain sync --full` found.
type ReconcileReport struct {
	At time.Time `json:"at"`
	// Cards is how many of our cards list_pages showed.
	Cards int `json:"cards"`
	// Local is how many local records this view shares.
	Local int `json:"local"`
	// Enqueued is how many cards were queued again (missing, stale,
	// changed in GBrain, conflicted or failed: the drain re-checks them).
	Enqueued int `json:"enqueued"`
	Missing  int `json:"missing"`
	Stale    int `json:"stale"`
	// Changed lists cards whose GBrain updated_at moved since our last
	// write: someone else wrote them; the drain records the conflict.
	Changed []ConflictInfo `json:"changed"`
	// Foreign lists the conflicts already known.
	Foreign []ConflictInfo `json:"foreign"`
	// Orphans are this machine's cards under our prefix whose project id
	// is not bound here (forgotten, or from a lost catalog); `gbrain sync
	// --prune` deletes the unedited ones. Another machine's card is never
	// an orphan: OtherMachines counts them.
	Orphans       []Orphan `json:"orphans"`
	OrphanCount   int      `json:"orphanCount"`
	OtherMachines int      `json:"otherMachines"`
	// Unshared are cards of local projects this process's view does not
	// share (the policy changed after they were written): queued for
	// retraction.
	Unshared      []Orphan `json:"unshared"`
	UnsharedCount int      `json:"unsharedCount"`
	// OtherTagged counts pages carrying our tag outside our slug prefix.
	OtherTagged int `json:"otherTagged"`
	// Rescans counts enumerations restarted because list pages shifted;
	// Shifted says the last one still saw them move.
	Rescans int  `json:"rescans"`
	Shifted bool `json:"shifted,omitempty"`
	DryRun  bool `json:"dryRun,omitempty"`
	// Queue lists the queued ids with why (capped).
	Queue []Orphan `json:"queue,omitempty"`
}

// Orphan is one card that matches no shareable local record.
type Orphan struct {
	Slug      string `json:"slug"`
	ProjectID string `json:"projectId,omitempty"`
	Why       string `json:"why"`
}

// Reconcile compares our cards in GBrain with the local records: every
// shareable record whose card is missing, stale, changed in GBrain,
// conflicted or failed is queued again (outbox rows, so the drain decides
// with its usual read-and-check); orphans and cards of projects no longer
// shared are reported. With dryRun nothing is written. It needs no lease:
// queueing is what the scanner does too.
func (p *Projector) Reconcile(ctx context.Context, dryRun bool) (*ReconcileReport, error) {
	cards, rescans, shifted, err := p.listCards(ctx)
	if err != nil {
		return nil, err
	}
	rc := &reconciling{p: p, ours: map[string]gbrain.PageRef{}, pending: map[string]bool{}, bound: map[string]bool{}, machineOf: map[string]string{},
		rep: &ReconcileReport{At: time.Now().UTC(), Rescans: rescans, Shifted: shifted, DryRun: dryRun,
			Changed: []ConflictInfo{}, Foreign: []ConflictInfo{}, Orphans: []Orphan{}, Unshared: []Orphan{}}}
	rc.sortCards(cards)
	if err := p.st.View(ctx, rc.readLocal); err != nil {
		return nil, err
	}
	if err := rc.findOrphans(ctx); err != nil {
		return nil, err
	}
	rc.summarise()
	if dryRun {
		return rc.rep, nil
	}
	if err := rc.enqueue(ctx); err != nil {
		return rc.rep, err
	}
	_ = p.st.Update(ctx, func(tx *store.Tx) error { return reconcileRow.Put(tx, *rc.rep) })
	return rc.rep, nil
}

// reconciling is one Reconcile in progress.
type reconciling struct {
	p         *Projector
	rep       *ReconcileReport
	ours      map[string]gbrain.PageRef // project id → our card's ref
	queue     []want
	pending   map[string]bool   // ids with an outbox row already
	bound     map[string]bool   // ids bound here
	machineOf map[string]string // slug → the mirror's machine id
}

// want is one card to queue again, and why.
type want struct {
	id      string
	rev     uint64
	why     string
	retract bool
}

// sortCards keeps the cards under our slug prefix, by project id.
func (rc *reconciling) sortCards(cards map[string]gbrain.PageRef) {
	prefix := rc.p.set.SlugPrefix + "/"
	for slug, ref := range cards {
		if !strings.HasPrefix(slug, prefix) {
			rc.rep.OtherTagged++
			continue
		}
		rc.rep.Cards++
		rc.ours[strings.TrimPrefix(slug, prefix)] = ref
	}
}

// readLocal judges every local record against its card, in one read.
func (rc *reconciling) readLocal(r *store.Reader) error {
	rows, _ := outbox.Pending(r, 0)
	for _, row := range rows {
		rc.pending[row.ProjectID] = true
	}
	if err := r.Cards(func(c *local.Card) error { rc.machineOf[c.Slug] = c.MachineID; return nil }); err != nil {
		return err
	}
	return r.Projects(func(rec *local.Project) error { return rc.judgeRecord(r, rec) })
}

// judgeRecord queues rec's card when it is not shared (retract) or not as
// cgcat last wrote it.
func (rc *reconciling) judgeRecord(r *store.Reader, rec *local.Project) error {
	rep := rc.rep
	rc.bound[rec.ID] = true
	ref, has := rc.ours[rec.ID]
	if !rc.p.pol.Policy().AllowsRecord(rec) {
		if has {
			rep.UnsharedCount++
			if len(rep.Unshared) < maxListed {
				rep.Unshared = append(rep.Unshared, Orphan{Slug: ref.Slug, ProjectID: rec.ID, Why: unsharedNote + "; its card is taken back (unless a person edited it)"})
			}
			rc.queue = append(rc.queue, want{rec.ID, rec.RecordRevision, "not shared: retract", true})
		}
		return nil
	}
	rep.Local++
	st, err := readState(r, rec.ID)
	if err != nil {
		return err
	}
	if why := rc.why(rec, st, ref, has); why != "" {
		rc.queue = append(rc.queue, want{rec.ID, rec.RecordRevision, why, false})
	}
	return nil
}

// why is why a shared record's card must be checked again ("" if not).
func (rc *reconciling) why(rec *local.Project, st *State, ref gbrain.PageRef, has bool) string {
	rep := rc.rep
	_, slug, content, encErr := encode(rec, rc.p.set)
	switch {
	case !has:
		rep.Missing++
		return "missing in GBrain"
	case st == nil || st.PageHash == 0:
		rep.Stale++
		return "no record of writing it"
	case st.RecordRevision != rec.RecordRevision || (encErr == nil && st.CardHash != gbrain.ContentHash(content)) || st.Slug != slug:
		rep.Stale++
		return "stale"
	case st.PageUpdatedAt != "" && string(ref.UpdatedAt) != st.PageUpdatedAt:
		why := "changed in GBrain since cgcat's last write"
		if len(rep.Changed) < maxListed {
			rep.Changed = append(rep.Changed, ConflictInfo{ProjectID: rec.ID, Slug: ref.Slug, Why: why})
		}
		return why
	case st.Conflict != nil:
		if len(rep.Foreign) < maxListed {
			rep.Foreign = append(rep.Foreign, ConflictInfo{ProjectID: rec.ID, Slug: ref.Slug, Why: st.Conflict.Why, At: st.Conflict.At})
		}
		return "conflict: " + st.Conflict.Why
	case st.Failed != "":
		return "failed before: " + st.Failed
	}
	return ""
}

// findOrphans reports our cards whose project id is bound nowhere here:
// this machine's are orphans, another machine's are counted.
func (rc *reconciling) findOrphans(ctx context.Context) error {
	p, rep := rc.p, rc.rep
	for id, ref := range rc.ours {
		if rc.bound[id] {
			continue
		}
		if !gbrain.ValidCardID(id) || !ids.ValidProjectID(id) {
			rep.OrphanCount++
			rep.Orphans = append(rep.Orphans, Orphan{Slug: ref.Slug, ProjectID: id, Why: "its slug does not end in a cgcat project id (not cgcat's; left alone)"})
			continue
		}
		machine, known := rc.machineOf[ref.Slug]
		if !known {
			// Not mirrored yet: the card says whose it is.
			page, err := p.read(ctx, ref.Slug)
			if err != nil && !gbrain.IsDefinite(err) {
				return err
			}
			if page != nil {
				if lc, ok := p.judge(ref.Slug, page, nil); ok {
					machine = lc.MachineID
				}
			}
		}
		if machine != "" && machine != p.set.MachineID {
			rep.OtherMachines++
			continue
		}
		rep.OrphanCount++
		rep.Orphans = append(rep.Orphans, Orphan{Slug: ref.Slug, ProjectID: id, Why: "this machine's card, but its project id is not bound here (forgotten, or from a lost catalog): `cgcat gbrain sync --prune` deletes it unless a person edited it"})
	}
	return nil
}

// summarise orders and caps the lists of the report.
func (rc *reconciling) summarise() {
	rep := rc.rep
	sort.Slice(rep.Orphans, func(i, j int) bool { return rep.Orphans[i].Slug < rep.Orphans[j].Slug })
	if len(rep.Orphans) > maxListed {
		rep.Orphans = rep.Orphans[:maxListed]
	}
	sort.Slice(rc.queue, func(i, j int) bool { return rc.queue[i].id < rc.queue[j].id })
	for _, q := range rc.queue {
		if len(rep.Queue) < maxListed {
			rep.Queue = append(rep.Queue, Orphan{ProjectID: q.id, Why: q.why})
		}
	}
	rep.Enqueued = len(rc.queue)
}

// enqueue writes the queue as outbox rows, 500 to a batch; a card with a
// row pending already is left to it.
func (rc *reconciling) enqueue(ctx context.Context) error {
	for chunk := range slices.Chunk(rc.queue, 500) {
		err := rc.p.st.Update(ctx, func(tx *store.Tx) error {
			for _, q := range chunk {
				switch {
				case q.retract:
					outbox.Retract(tx, q.id, q.rev)
				case !rc.pending[q.id]:
					outbox.Enqueue(tx, q.id, q.rev)
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}
