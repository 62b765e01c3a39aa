package projection

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"time"

	"github.com/cgcat/cgcat/gbrain"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/store"
)

// Machines: every machine's page says when it last reached GBrain and
// whether it was retired. The mirror leaves a retired machine's cards out
// (every search, on every machine), and marks the cards of a machine
// silent longer than gbrain.staleMachineDays stale — never deletes them.

// applyMachines applies what the machine pages say to the rows of this
// refresh. A machine whose state changed (retired, back from retirement or
// from silence) has all its rows looked at, as a full refresh has anyway.
func (m *mirrorRound) applyMachines(ctx context.Context, now time.Time) error {
	if err := m.applyTombstones(ctx); err != nil {
		return err
	}
	for slug, c := range m.puts {
		if m.machines[c.MachineID].StaleSince != "" || (m.mirror[slug] != nil && m.mirror[slug].StaleSince != "") {
			m.changed[c.MachineID] = true // a silent machine heard of again
		}
	}
	if len(m.changed) > 0 && !m.full {
		if err := m.p.st.View(ctx, func(r *store.Reader) error {
			return r.Cards(func(c *local.Card) error {
				if m.changed[c.MachineID] && m.mirror[c.Slug] == nil {
					m.mirror[c.Slug] = c
				}
				return nil
			})
		}); err != nil {
			return err
		}
	}
	me := m.p.set.MachineID
	retired := func(id string) bool { return id != me && m.machines[id].RetiredBy != "" }
	for id := range m.machines {
		if retired(id) {
			m.rep.Retired++
		}
	}
	for slug, c := range m.puts {
		if retired(c.MachineID) {
			delete(m.puts, slug)
			if m.mirror[slug] != nil {
				m.dels[slug] = true
			}
		}
	}
	for slug, c := range m.mirror {
		if retired(c.MachineID) && m.puts[slug] == nil {
			m.dels[slug] = true
		}
	}
	if m.full || len(m.changed) > 0 {
		m.markStale(now)
	}
	return nil
}

// markStale sets StaleSince on the rows of machines silent longer than
// StaleMachineDays: silent means neither its page's heartbeat nor any of
// its cards is newer. Only rows whose mark changes are written.
func (m *mirrorRound) markStale(now time.Time) {
	me := m.p.set.MachineID
	heard := map[string]string{} // machine → newest day heard of
	note := func(id, day string) {
		if len(day) >= 10 && day[:10] > heard[id] {
			heard[id] = day[:10]
		}
	}
	for id, mi := range m.machines {
		note(id, mi.Heartbeat)
	}
	rows := map[string]*local.Card{}
	for slug, c := range m.mirror {
		if !m.dels[slug] {
			rows[slug] = c
		}
	}
	for slug, c := range m.puts {
		rows[slug] = c
	}
	for _, c := range rows {
		note(c.MachineID, c.UpdatedAt)
	}
	days := m.p.set.StaleMachineDays
	staleSince := func(id string) string {
		h := heard[id]
		if days <= 0 || id == me || h == "" {
			return ""
		}
		if t, err := time.Parse("2006-01-02", h); err == nil && now.Sub(t) > time.Duration(days)*24*time.Hour {
			return h
		}
		return ""
	}
	stale := map[string]bool{}
	for slug, c := range rows {
		if !m.full && !m.changed[c.MachineID] && m.puts[slug] == nil {
			continue
		}
		want := staleSince(c.MachineID)
		if want != "" {
			stale[c.MachineID] = true
		}
		if c.StaleSince != want {
			cp := *c
			cp.StaleSince = want
			m.puts[slug] = &cp
		}
	}
	for id := range heard {
		mi := m.machines[id]
		if s := staleSince(id); s != mi.StaleSince && (m.full || m.changed[id]) {
			mi.StaleSince = s
			m.machines[id] = mi
		}
	}
	m.rep.Stale = len(stale)
}

// ErrRetired means this machine was retired (by another machine): it writes
// no card until the retirement is undone.
var ErrRetired = errors.New("this machine was retired in GBrain")

// retiredError says who retired this machine and what to do.
func retiredError(me string, mi MachineInfo) error {
	return fmt.Errorf("%w: machine %s was retired by %s on %s, so every cgcat leaves its cards out of search and this machine writes none; if that was a mistake, run `cgcat gbrain retire --undo %s`", ErrRetired, me, mi.RetiredBy, mi.RetiredAt, me)
}

// today is the UTC day of t, as machine pages spell it.
func today(t time.Time) string { return t.UTC().Format("2006-01-02") }

// Heartbeat keeps this machine's page: written when its heartbeat is not
// today's (one write a day), read first so a retirement is never undone by
// accident. A retired machine's page is left alone (ErrRetired).
func (p *Projector) Heartbeat(ctx context.Context) error {
	me := p.set.MachineID
	var known MachineInfo
	if err := p.st.View(ctx, func(r *store.Reader) error {
		ms, _, _ := machinesRow.Get(r)
		known = ms[me]
		return nil
	}); err != nil {
		return err
	}
	now := today(time.Now())
	if known.Heartbeat == now && known.RetiredBy == "" {
		return nil
	}
	slug, err := gbrain.MachineSlug(p.set.SlugPrefix, me)
	if err != nil {
		return err
	}
	page, err := p.read(ctx, slug)
	if err != nil {
		return err
	}
	var mp gbrain.MachinePage
	if page != nil {
		if mp, err = gbrain.DecodeMachine(page.Content); err != nil || mp.MachineID != me {
			return fmt.Errorf("the page %s is not this machine's page (%v): not overwritten; delete it in GBrain", slug, err)
		}
	}
	mi := MachineInfo{Heartbeat: mp.Heartbeat, RetiredBy: mp.RetiredBy, RetiredAt: mp.RetiredAt}
	if page != nil {
		mi.UpdatedAt = string(page.UpdatedAt)
	}
	if mp.Retired() {
		_ = p.noteMachine(ctx, me, mi)
		return retiredError(me, mi)
	}
	if mp.Heartbeat == now {
		return p.noteMachine(ctx, me, mi)
	}
	if !p.Holding() {
		return ErrNoLease
	}
	mp.MachineID, mp.Heartbeat = me, now
	back, err := p.putMachine(ctx, slug, mp)
	if err != nil {
		return err
	}
	return p.noteMachine(ctx, me, MachineInfo{Heartbeat: now, UpdatedAt: string(back.UpdatedAt)})
}

// putMachine writes a machine page and reads it back.
func (p *Projector) putMachine(ctx context.Context, slug string, mp gbrain.MachinePage) (*gbrain.Page, error) {
	content, err := gbrain.EncodeMachine(mp)
	if err != nil {
		return nil, err
	}
	if _, err := p.put(ctx, slug, content); err != nil && !gbrain.IsAmbiguous(err) {
		return nil, err
	}
	back, err := p.read(ctx, slug)
	if err != nil {
		return nil, err
	}
	if back == nil {
		return nil, fmt.Errorf("read back %s after writing it: the page is not there", slug)
	}
	if got, derr := gbrain.DecodeMachine(back.Content); derr != nil || !reflect.DeepEqual(got, mp) {
		return nil, fmt.Errorf("read back %s after writing it: it holds something else (another writer?)", slug)
	}
	return back, nil
}

// noteMachine records what is known of a machine's page in the store.
func (p *Projector) noteMachine(ctx context.Context, id string, mi MachineInfo) error {
	return p.st.Update(ctx, func(tx *store.Tx) error {
		ms, _, _ := machinesRow.Get(tx)
		if ms == nil {
			ms = map[string]MachineInfo{}
		}
		old := ms[id]
		mi.StaleSince = old.StaleSince
		ms[id] = mi
		return machinesRow.Put(tx, ms)
	})
}

// Machines is what the mirror knows of every machine (no network).
func Machines(ctx context.Context, st *store.Store) (map[string]MachineInfo, error) {
	ms := map[string]MachineInfo{}
	err := st.View(ctx, func(r *store.Reader) error {
		if got, ok, _ := machinesRow.Get(r); ok {
			maps.Copy(ms, got)
		}
		return nil
	})
	return ms, err
}

// noteRetracted remembers a card this drain deleted.
func (p *Projector) noteRetracted(t gbrain.Tombstone) {
	p.stageMu.Lock()
	p.retracted = append(p.retracted, t)
	p.stageMu.Unlock()
}

// tombstones lists the cards this drain deleted on this machine's page
// (with the updated_at of the version deleted: GBrain's clock, so another
// machine drops exactly that version or older from its mirror, never a
// card written again later).
func (p *Projector) tombstones(ctx context.Context) error {
	p.stageMu.Lock()
	ts := p.retracted
	p.retracted = nil
	p.stageMu.Unlock()
	if len(ts) == 0 {
		return nil
	}
	me := p.set.MachineID
	slug, err := gbrain.MachineSlug(p.set.SlugPrefix, me)
	if err != nil {
		return err
	}
	page, err := p.read(ctx, slug)
	if err != nil {
		return err
	}
	mp := gbrain.MachinePage{MachineID: me}
	if page != nil {
		if mp, err = gbrain.DecodeMachine(page.Content); err != nil || mp.MachineID != me {
			return fmt.Errorf("the page %s is not this machine's page: not overwritten", slug)
		}
	}
	if mp.Retired() {
		return nil
	}
	mp.Heartbeat = today(time.Now())
	mp.Retracted = append(mp.Retracted, ts...)
	if n := len(mp.Retracted); n > gbrain.MaxTombstones {
		mp.Retracted = mp.Retracted[n-gbrain.MaxTombstones:]
	}
	back, err := p.putMachine(ctx, slug, mp)
	if err != nil {
		return err
	}
	return p.noteMachine(ctx, me, MachineInfo{Heartbeat: mp.Heartbeat, UpdatedAt: string(back.UpdatedAt)})
}

// applyTombstones drops the rows of cards their machine's page says it took
// back: exactly the version deleted, or an older one (a card written again
// later has a later updated_at and stays).
func (m *mirrorRound) applyTombstones(ctx context.Context) error {
	if len(m.tombs) == 0 {
		return nil
	}
	return m.p.st.View(ctx, func(r *store.Reader) error {
		for machine, ts := range m.tombs {
			for _, tb := range ts {
				slug, err := gbrain.CardSlug(m.p.set.SlugPrefix, tb.ProjectID)
				if err != nil {
					continue
				}
				row := m.puts[slug]
				if row == nil {
					row = m.mirror[slug]
				}
				if row == nil {
					if row, _ = r.Card(slug); row == nil {
						continue
					}
				}
				if row.MachineID == machine && row.UpdatedAt != "" && row.UpdatedAt <= tb.At {
					delete(m.puts, slug)
					m.dels[slug] = true
				}
			}
		}
		return nil
	})
}
