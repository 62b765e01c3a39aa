package projection

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/cgcat/cgcat/gbrain"
	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/ids"
	"github.com/cgcat/cgcat/local/store"
	"github.com/cgcat/cgcat/outbox"
)

// The mirror: the lease holder keeps a copy of the searchable fields of
// every card under slugPrefix in expectedSource (this machine's, other
// machines', and cards people edited) in the store (mirror/<slug>), so that
// search and resolve answer from it locally. A refresh costs what changed:
// list_pages of the cards (and machine pages) updated since the newest one
// mirrored, then get_page only for pages whose updated_at moved. Now and
// then (FullEvery) a full listing finds the pages deleted meanwhile (a soft
// delete does not move updated_at), marks the cards of silent machines
// stale, and derives every row again after a card format change. A card is
// a claim: the mirror never holds a path, and nothing in it binds an id to
// a root.

// MirrorOptions bound one refresh. Zero fields take the defaults.
type MirrorOptions struct {
	// MaxReads bounds the get_page calls of one refresh (zero: no bound).
	// What is left is read by the next refresh.
	MaxReads int
	// Budget bounds the time spent reading pages (zero: no bound); the
	// listing itself always completes.
	Budget time.Duration
	// Full lists every card (deletions, stale machines); FullEvery is how
	// often a refresh is full anyway (zero: 1 h).
	Full      bool
	FullEvery time.Duration
}

// MirrorReport says what one refresh did.
type MirrorReport struct {
	At time.Time `json:"at"`
	// Full: every card was listed (else only those changed since the last
	// refresh).
	Full bool `json:"full,omitempty"`
	// Listed is how many cards under our prefix list_pages showed.
	Listed int `json:"listed"`
	// Kept were mirrored already with the same updated_at: no read.
	Kept int `json:"kept"`
	// FromRecord are this machine's cards whose page is, by updated_at and
	// recorded hashes, exactly what cgcat wrote: mirrored from the local
	// record without a read.
	FromRecord int `json:"fromRecord"`
	// Read counts get_page calls; Written the mirror rows written.
	Read    int `json:"read"`
	Written int `json:"written"`
	// Deleted are mirror rows of pages gone from GBrain (or of retired
	// machines).
	Deleted int `json:"deleted"`
	// Edited are cards (written now) whose content is not what cgcat wrote.
	Edited int `json:"edited"`
	// Undecodable are pages under our prefix that name no project and
	// machine cgcat can tell (not mirrored).
	Undecodable int `json:"undecodable"`
	// Machines counts machine pages read; Retired the machines retired
	// (their cards are left out), Stale the machines silent too long.
	Machines int `json:"machines,omitempty"`
	Retired  int `json:"retired,omitempty"`
	Stale    int `json:"stale,omitempty"`
	// Calls is how many GBrain calls the refresh made.
	Calls int `json:"calls"`
	// Partial: the read bound was hit; the rest is read next time.
	Partial bool `json:"partial,omitempty"`
	// Shifted: the listing kept moving; pages not seen were kept (only a
	// complete listing removes mirror rows).
	Shifted  bool   `json:"shifted,omitempty"`
	Rescans  int    `json:"rescans,omitempty"`
	Duration string `json:"duration"`
}

// The mirror's own rows (the cards themselves are the store's: PutCard).
var (
	mirrorRow      = store.ProjectionMeta[MirrorReport](store.MetaMirror)   // the last refresh
	markRow        = store.ProjectionMeta[mirrorMark](store.MetaMirrorMark) // where it left off
	machinesRow    = store.ProjectionMeta[map[string]MachineInfo](store.MetaMachines)
	undecodableRow = store.ProjectionMeta[map[string]string](store.MetaUndecodable) // slug → updated_at of our pages that are no card
)

const (
	maxUndecodables  = 10000 // remembered at most (beyond: read again)
	defaultFullEvery = time.Hour
)

// mirrorMark is where the last refresh left off.
type mirrorMark struct {
	// Since and MachSince are the newest updated_at mirrored, of cards and
	// of machine pages (GBrain's clock).
	Since     time.Time `json:"since"`
	MachSince time.Time `json:"machSince"`
	// LastFull is when the last complete full listing ended (this clock).
	LastFull time.Time `json:"lastFull"`
	// Format is the card format (gbrain.CardVersion) the rows were derived
	// with: another one derives every row again.
	Format int `json:"format"`
}

// MachineInfo is what the mirror knows of a machine from its page.
type MachineInfo struct {
	Heartbeat string `json:"heartbeat,omitempty"`
	RetiredBy string `json:"retiredBy,omitempty"`
	RetiredAt string `json:"retiredAt,omitempty"`
	UpdatedAt string `json:"updatedAt,omitempty"`
	// StaleSince: silent since that day, longer than staleMachineDays.
	StaleSince string `json:"staleSince,omitempty"`
}

// mirrorRound is one refresh in progress.
type mirrorRound struct {
	p        *Projector
	o        MirrorOptions
	rep      MirrorReport
	mark     mirrorMark
	full     bool
	rederive bool
	refs     map[string]gbrain.PageRef // cards listed
	machRefs map[string]gbrain.PageRef // machine pages listed
	newest   time.Time                 // newest card updated_at listed
	machNew  time.Time

	// From the store.
	mirror      map[string]*local.Card // rows of the listed slugs (every row on a full refresh)
	undecodable map[string]string
	retracting  map[string]bool
	states      map[string]*State
	fromRecord  map[string]*local.Card
	machines    map[string]MachineInfo
	changed     map[string]bool               // machines whose state the pages changed now
	tombs       map[string][]gbrain.Tombstone // cards taken back, by machine (pages read now)

	puts    map[string]*local.Card
	dels    map[string]bool
	stillUn map[string]string
	ferr    error // GBrain failed mid-way: keep what was read, delete nothing
}

// RefreshMirror brings the mirror up to date with GBrain: the listings,
// the reads of changed pages (bounded by o), and one fenced store batch.
// It needs the projector lease: the mirror has one writer, like the cards.
func (p *Projector) RefreshMirror(ctx context.Context, o MirrorOptions) (MirrorReport, error) {
	m := &mirrorRound{p: p, o: o, rep: MirrorReport{At: time.Now().UTC()}}
	start, calls0 := time.Now(), p.callTotal()
	err := m.run(ctx)
	m.rep.Duration = time.Since(start).Round(time.Millisecond).String()
	m.rep.Calls = p.callTotal() - calls0
	return m.rep, err
}

func (m *mirrorRound) run(ctx context.Context) error {
	p := m.p
	if !p.Holding() {
		return ErrNoLease
	}
	if err := m.list(ctx); err != nil {
		return err
	}
	if err := m.load(ctx); err != nil {
		return err
	}
	m.readMachines(ctx)
	m.readCards(ctx)
	if m.full && m.ferr == nil && !m.rep.Shifted {
		for slug := range m.mirror {
			if _, listed := m.refs[slug]; !listed {
				m.dels[slug] = true
			}
		}
	}
	if err := m.applyMachines(ctx, time.Now()); err != nil {
		return err
	}
	err := m.commit(ctx)
	if m.ferr != nil {
		m.rep.Partial = true
		return m.ferr
	}
	return err
}

// list runs the listings: full, or of what changed since the mark.
func (m *mirrorRound) list(ctx context.Context) error {
	p := m.p
	if err := p.st.View(ctx, func(r *store.Reader) error {
		if mark, ok, _ := markRow.Get(r); ok {
			m.mark = mark
		}
		return nil
	}); err != nil {
		return err
	}
	every := m.o.FullEvery
	if every <= 0 {
		every = defaultFullEvery
	}
	m.rederive = m.mark.Format != gbrain.CardVersion
	m.full = m.o.Full || m.rederive || m.mark.LastFull.IsZero() || time.Since(m.mark.LastFull) >= every
	m.rep.Full = m.full
	var err error
	if m.full {
		if m.refs, m.rep.Rescans, m.rep.Shifted, err = p.listCards(ctx); err != nil {
			return err
		}
		if m.machRefs, _, _, err = p.listTagged(ctx, gbrain.MachinePageTag); err != nil {
			return err
		}
		for _, r := range m.refs {
			if t, err := time.Parse(time.RFC3339Nano, string(r.UpdatedAt)); err == nil && t.After(m.newest) {
				m.newest = t
			}
		}
		for _, r := range m.machRefs {
			if t, err := time.Parse(time.RFC3339Nano, string(r.UpdatedAt)); err == nil && t.After(m.machNew) {
				m.machNew = t
			}
		}
		return nil
	}
	if m.refs, m.newest, err = p.listSince(ctx, gbrain.CardTag, m.mark.Since); err != nil {
		return err
	}
	m.machRefs, m.machNew, err = p.listSince(ctx, gbrain.MachinePageTag, m.mark.MachSince)
	return err
}

// load reads what the store knows of the listed pages: their mirror rows
// (every row on a full refresh), this machine's writes, the cards being
// taken back, and the machines.
func (m *mirrorRound) load(ctx context.Context) error {
	p := m.p
	prefix := p.set.SlugPrefix + "/"
	m.mirror, m.undecodable, m.retracting = map[string]*local.Card{}, map[string]string{}, map[string]bool{}
	m.states, m.fromRecord, m.machines = map[string]*State{}, map[string]*local.Card{}, map[string]MachineInfo{}
	m.puts, m.dels, m.stillUn = map[string]*local.Card{}, map[string]bool{}, map[string]string{}
	m.changed = map[string]bool{}
	return p.st.View(ctx, func(r *store.Reader) error {
		if m.full {
			if err := r.Cards(func(c *local.Card) error { m.mirror[c.Slug] = c; return nil }); err != nil {
				return err
			}
		} else {
			for slug := range m.refs {
				if c, err := r.Card(slug); err == nil && c != nil {
					m.mirror[slug] = c
				}
			}
		}
		if u, ok, _ := undecodableRow.Get(r); ok {
			maps.Copy(m.undecodable, u)
		}
		if ms, ok, _ := machinesRow.Get(r); ok {
			maps.Copy(m.machines, ms)
		}
		// This machine's cards being taken back (forgotten, hidden) stay
		// out of the mirror meanwhile: nothing may resolve or reclaim them.
		rows, _ := outbox.Pending(r, 0)
		for _, row := range rows {
			if row.Retract {
				if slug, err := gbrain.CardSlug(p.set.SlugPrefix, row.ProjectID); err == nil {
					m.retracting[slug] = true
				}
			}
		}
		for slug, ref := range m.refs {
			id, ok := strings.CutPrefix(slug, prefix)
			if !ok || !ids.ValidProjectID(id) {
				continue
			}
			st, err := readState(r, id)
			if err != nil {
				return err
			}
			if st != nil && st.Slug == slug {
				m.states[slug] = st
			}
			if lc := m.ownFromRecord(r, slug, id, ref, st); lc != nil {
				m.fromRecord[slug] = lc
			}
		}
		return nil
	})
}

// ownFromRecord is this machine's card rebuilt from its record when, as
// far as the recorded hashes and updated_at tell, the page is exactly what
// cgcat wrote for the record as it is: no read needed.
func (m *mirrorRound) ownFromRecord(r *store.Reader, slug, id string, ref gbrain.PageRef, st *State) *local.Card {
	if row := m.mirror[slug]; row != nil && row.UpdatedAt == string(ref.UpdatedAt) && ref.UpdatedAt != "" && !m.rederive {
		return nil
	}
	if st == nil || st.PageHash == 0 || st.Conflict != nil || st.PageUpdatedAt == "" || st.PageUpdatedAt != string(ref.UpdatedAt) {
		return nil
	}
	rec, err := r.Project(id)
	if err != nil || rec == nil {
		return nil
	}
	card, s, content, err := encode(rec, m.p.set)
	if err != nil || s != slug || gbrain.ContentHash(content) != st.CardHash {
		return nil
	}
	lc := localCard(slug, card)
	lc.UpdatedAt = string(ref.UpdatedAt)
	return lc
}

// readMachines reads the machine pages whose updated_at moved.
func (m *mirrorRound) readMachines(ctx context.Context) {
	p := m.p
	for slug, ref := range m.machRefs {
		id, ok := gbrain.MachineOfSlug(p.set.SlugPrefix, slug)
		if !ok || (m.machines[id].UpdatedAt == string(ref.UpdatedAt) && ref.UpdatedAt != "") {
			continue
		}
		page, err := p.read(ctx, slug)
		if err != nil {
			if !gbrain.IsDefinite(err) {
				m.ferr = err
				return
			}
			continue
		}
		m.rep.Machines++
		if page == nil {
			continue
		}
		mp, err := gbrain.DecodeMachine(page.Content)
		if err != nil || mp.MachineID != id {
			continue
		}
		if len(mp.Retracted) > 0 {
			if m.tombs == nil {
				m.tombs = map[string][]gbrain.Tombstone{}
			}
			m.tombs[id] = mp.Retracted
		}
		old := m.machines[id]
		if old.RetiredBy != mp.RetiredBy || old.StaleSince != "" {
			m.changed[id] = true // retired, back, or heard of again
		}
		m.machines[id] = MachineInfo{Heartbeat: mp.Heartbeat, RetiredBy: mp.RetiredBy, RetiredAt: mp.RetiredAt, UpdatedAt: string(page.UpdatedAt), StaleSince: old.StaleSince}
	}
}

// readCards reads the listed cards that changed, and judges them.
func (m *mirrorRound) readCards(ctx context.Context) {
	p := m.p
	prefix := p.set.SlugPrefix + "/"
	slugs := make([]string, 0, len(m.refs))
	for slug := range m.refs {
		slugs = append(slugs, slug)
	}
	slices.Sort(slugs)
	readStart := time.Now()
	for _, slug := range slugs {
		ref := m.refs[slug]
		if !strings.HasPrefix(slug, prefix) {
			continue
		}
		m.rep.Listed++
		row := m.mirror[slug]
		switch {
		case m.retracting[slug]:
			// Not mirrored while its retraction is pending (a person's
			// edited copy stays as it was).
			if row != nil && !row.Edited {
				m.dels[slug] = true
			}
			continue
		case row != nil && row.UpdatedAt == string(ref.UpdatedAt) && ref.UpdatedAt != "" && !m.rederive:
			m.rep.Kept++
			continue
		case m.fromRecord[slug] != nil:
			m.rep.FromRecord++
			m.puts[slug] = m.fromRecord[slug]
			continue
		}
		if at, ok := m.undecodable[slug]; ok && at == string(ref.UpdatedAt) && at != "" {
			m.rep.Undecodable++
			m.stillUn[slug] = at
			continue
		}
		if (m.o.MaxReads > 0 && m.rep.Read >= m.o.MaxReads) || (m.o.Budget > 0 && time.Since(readStart) > m.o.Budget) {
			m.rep.Partial = true
			continue
		}
		if err := ctx.Err(); err != nil {
			m.ferr = err
			return
		}
		m.rep.Read++
		page, err := p.read(ctx, slug)
		if err != nil {
			if gbrain.IsDefinite(err) && !errors.Is(err, gbrain.ErrNotConnected) {
				// This one page cannot be read as a card of our source
				// (foreign source, garbage): not mirrored.
				m.rep.Undecodable++
				if row != nil {
					m.dels[slug] = true
				}
				continue
			}
			m.ferr = err
			return
		}
		m.take(slug, page, row)
	}
}

// take mirrors one page that was read.
func (m *mirrorRound) take(slug string, page *gbrain.Page, row *local.Card) {
	if page == nil { // deleted between the listing and the read
		if row != nil {
			m.dels[slug] = true
		}
		return
	}
	lc, ok := m.p.judge(slug, page, m.states[slug])
	if !ok {
		m.rep.Undecodable++
		if len(m.stillUn) < maxUndecodables {
			m.stillUn[slug] = string(page.UpdatedAt)
		}
		if row != nil {
			m.dels[slug] = true
		}
		return
	}
	if lc.Edited {
		m.rep.Edited++
	}
	m.puts[slug] = lc
}

// commit writes the rows, the machines, the undecodable pages and the mark
// in one fenced batch.
func (m *mirrorRound) commit(ctx context.Context) error {
	complete := m.ferr == nil && !m.rep.Partial
	undec := m.stillUn
	if !m.full {
		// Only the listed pages were looked at: keep what is known of the
		// others.
		for slug, at := range m.undecodable {
			if _, listed := m.refs[slug]; !listed && len(undec) < maxUndecodables {
				undec[slug] = at
			}
		}
	}
	mark := m.mark
	if complete {
		if m.newest.After(mark.Since) {
			mark.Since = m.newest
		}
		if m.machNew.After(mark.MachSince) {
			mark.MachSince = m.machNew
		}
		if m.full && !m.rep.Shifted {
			mark.LastFull, mark.Format = time.Now().UTC(), gbrain.CardVersion
		}
	}
	for slug := range m.dels {
		delete(m.puts, slug)
	}
	m.rep.Written, m.rep.Deleted = len(m.puts), len(m.dels)
	return m.p.commit(ctx, func(tx *store.Tx) error {
		for _, c := range m.puts {
			if err := tx.PutCard(c); err != nil {
				return err
			}
		}
		for slug := range m.dels {
			tx.DeleteCard(slug)
		}
		return errors.Join(mirrorRow.Put(tx, m.rep), undecodableRow.Put(tx, undec),
			machinesRow.Put(tx, m.machines), markRow.Put(tx, mark))
	})
}

// LastMirror is the report of the last mirror refresh (nil before the first).
func LastMirror(ctx context.Context, st *store.Store) (*MirrorReport, error) {
	var rep *MirrorReport
	err := st.View(ctx, func(r *store.Reader) error {
		m, ok, err := mirrorRow.Get(r)
		switch {
		case errors.Is(err, store.ErrUnreadable):
			return nil
		case err != nil || !ok:
			return err
		}
		rep = &m
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the mirror's state: %w", err)
	}
	return rep, nil
}
