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
)

// Retiring a machine (one that is gone: a lost disk, a data dir deleted on
// a machine that got a new id, a laptop given away): its machine page says
// retired_by, which every machine's mirror reads at its next refresh and
// then leaves that machine's cards out of every search; and its cards that
// are exactly as cgcat wrote them are deleted from GBrain (a soft delete,
// restorable 72 h), so GBrain's own search drops them too. A card a person
// edited is left alone and listed. It is the one place cgcat touches
// another machine's cards, and only when a person asks.

// RetireReport says what retiring a machine did (or would do).
type RetireReport struct {
	Machine string `json:"machine"`
	DryRun  bool   `json:"dryRun,omitempty"`
	Undo    bool   `json:"undo,omitempty"`
	// Already: the page said so before (retired, or not retired for an
	// undo); nothing was written to it.
	Already bool `json:"already,omitempty"`
	// Cards are the machine's cards found; Deleted those deleted (or that
	// would be); Edited those left alone.
	Cards   int      `json:"cards"`
	Deleted int      `json:"deleted"`
	Edited  []Orphan `json:"edited"`
	// MirrorUpdated: this process held the projector lease and removed the
	// machine's cards from the local mirror at once (else the process
	// holding it does at its next round).
	MirrorUpdated bool `json:"mirrorUpdated,omitempty"`
}

// Retire retires machine (never this one), or undoes it. With dryRun it
// reads GBrain and writes nothing.
func (p *Projector) Retire(ctx context.Context, machine string, undo, dryRun bool) (*RetireReport, error) {
	rep := &RetireReport{Machine: machine, DryRun: dryRun, Undo: undo, Edited: []Orphan{}}
	if !gbrain.ValidCardID(machine) {
		return rep, fmt.Errorf("%q is not a machine id (want the id a card names, such as m_abcdefghijklmnop)", machine)
	}
	if machine == p.set.MachineID && !undo {
		return rep, fmt.Errorf("%s is this machine: a machine retires another one that is gone; to stop projecting here, turn GBrain off in the config", machine)
	}
	slug, err := gbrain.MachineSlug(p.set.SlugPrefix, machine)
	if err != nil {
		return rep, err
	}
	page, err := p.read(ctx, slug)
	if err != nil {
		return rep, err
	}
	var mp gbrain.MachinePage
	if page != nil {
		if mp, err = gbrain.DecodeMachine(page.Content); err != nil || mp.MachineID != machine {
			return rep, fmt.Errorf("the page %s is not a cgcat machine page (%v): not overwritten", slug, err)
		}
	}
	mp.MachineID = machine
	rep.Already = mp.Retired() != undo
	if undo {
		mp.RetiredBy, mp.RetiredAt = "", ""
	} else if !mp.Retired() {
		mp.RetiredBy, mp.RetiredAt = p.set.MachineID, today(time.Now())
	}
	if !rep.Already && !dryRun {
		if _, err := p.putMachine(ctx, slug, mp); err != nil {
			return rep, fmt.Errorf("write the page of %s: %w", machine, err)
		}
	}
	if undo {
		return rep, p.noteRetirement(ctx, machine, mp, rep)
	}
	if err := p.retireCards(ctx, machine, dryRun, rep); err != nil {
		return rep, err
	}
	if dryRun {
		return rep, nil
	}
	return rep, p.noteRetirement(ctx, machine, mp, rep)
}

// retireCards deletes the machine's unedited cards: those its tag lists
// and those the mirror holds (cards of format 1 carry no machine tag).
func (p *Projector) retireCards(ctx context.Context, machine string, dryRun bool, rep *RetireReport) error {
	refs, _, _, err := p.listTagged(ctx, gbrain.MachineTag(machine))
	if err != nil {
		return err
	}
	slugs := map[string]bool{}
	for slug := range refs {
		slugs[slug] = true
	}
	if err := p.st.View(ctx, func(r *store.Reader) error {
		return r.Cards(func(c *local.Card) error {
			if c.MachineID == machine {
				slugs[c.Slug] = true
			}
			return nil
		})
	}); err != nil {
		return err
	}
	sorted := make([]string, 0, len(slugs))
	for slug := range slugs {
		sorted = append(sorted, slug)
	}
	slices.Sort(sorted)
	for _, slug := range sorted {
		page, err := p.read(ctx, slug)
		if err != nil && !gbrain.IsDefinite(err) {
			return err
		}
		if page == nil {
			continue
		}
		c, derr := gbrain.Decode(page.Content)
		if derr == nil && c.MachineID != machine {
			continue // another machine's card now
		}
		rep.Cards++
		if derr != nil || !canonical(page, c) {
			rep.Edited = append(rep.Edited, Orphan{Slug: slug, ProjectID: c.ProjectID, Why: "edited in GBrain (or not cgcat's shape): left alone; its machine's retirement still keeps it out of cgcat's search"})
			continue
		}
		rep.Deleted++
		if dryRun {
			continue
		}
		if err := p.delete(ctx, slug); err != nil {
			return fmt.Errorf("delete %s: %w", slug, err)
		}
	}
	return nil
}

// noteRetirement records the machine's page in the store and, when this
// process holds the projector lease, takes its cards out of the mirror at
// once.
func (p *Projector) noteRetirement(ctx context.Context, machine string, mp gbrain.MachinePage, rep *RetireReport) error {
	mi := MachineInfo{Heartbeat: mp.Heartbeat, RetiredBy: mp.RetiredBy, RetiredAt: mp.RetiredAt}
	if !p.Holding() {
		if err := p.TryAcquire(ctx); err != nil {
			return nil // the holder's next round reads the page
		}
		defer p.Release()
	}
	if err := p.noteMachine(ctx, machine, mi); err != nil {
		return err
	}
	if mp.Retired() {
		err := p.commit(ctx, func(tx *store.Tx) error {
			var slugs []string
			if err := tx.Cards(func(c *local.Card) error {
				if c.MachineID == machine {
					slugs = append(slugs, c.Slug)
				}
				return nil
			}); err != nil {
				return err
			}
			for _, s := range slugs {
				tx.DeleteCard(s)
			}
			return nil
		})
		if err != nil && !errors.Is(err, store.ErrFenced) {
			return err
		}
	}
	rep.MirrorUpdated = true
	return nil
}
