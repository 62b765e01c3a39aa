package projection

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cgcat/cgcat/gbrain"
	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/store"
	"github.com/cgcat/cgcat/outbox"
)

// The mirror: the lease holder keeps a copy of the searchable fields of
// every card under slugPrefix in expectedSource (this machine's, other
// machines', and cards people edited) in the store (mirror/<slug>), so that
// search and resolve answer from it locally. It is refreshed incrementally:
// list_pages by our tag (cheap, 100 rows a call), then get_page only for the
// pages whose updated_at moved since they were mirrored. A card is a claim:
// the mirror never holds a path, and nothing in it binds an id to a root.

// MirrorOptions bound one refresh. Zero fields take the defaults.
type MirrorOptions struct {
	// MaxReads bounds the get_page calls of one refresh (zero: no bound).
	// What is left is read by the next refresh.
	MaxReads int
	// Budget bounds the time spent reading pages (zero: no bound); the
	// listing itself always completes.
	Budget time.Duration
}

// MirrorReport says what one refresh did.
type MirrorReport struct {
	At time.Time `json:"at"`
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
	// Deleted are mirror rows of pages gone from GBrain.
	Deleted int `json:"deleted"`
	// Edited are cards (written now) whose content is not what cgcat wrote.
	Edited int `json:"edited"`
	// Undecodable are pages under our prefix that name no project and
	// machine cgcat can tell (not mirrored).
	Undecodable int `json:"undecodable"`
	// Partial: the read bound was hit; the rest is read next time.
	Partial bool `json:"partial,omitempty"`
	// Shifted: the listing kept moving; pages not seen were kept (only a
	// complete listing removes mirror rows).
	Shifted  bool   `json:"shifted,omitempty"`
	Rescans  int    `json:"rescans,omitempty"`
	Duration string `json:"duration"`
}

const (
	keyMirror       = "projmeta/mirror"      // MirrorReport of the last refresh
	keyUndecodable  = "projmeta/undecodable" // slug → updated_at of pages under our prefix that are no card
	maxUndecodables = 10000                  // remembered at most (beyond: read again)
)

// RefreshMirror brings the mirror up to date with GBrain: one listing, the
// reads of changed pages (bounded by o), and one fenced store batch. It
// needs the projector lease: the mirror has one writer, like the cards.
func (p *Projector) RefreshMirror(ctx context.Context, o MirrorOptions) (MirrorReport, error) {
	rep := MirrorReport{At: time.Now().UTC()}
	start := time.Now()
	defer func() { rep.Duration = time.Since(start).Round(time.Millisecond).String() }()
	if !p.Holding() {
		return rep, ErrNoLease
	}
	refs, rescans, shifted, err := p.listCards(ctx)
	if err != nil {
		return rep, err
	}
	rep.Rescans, rep.Shifted = rescans, shifted
	prefix := p.set.SlugPrefix + "/"

	// What the store knows: the mirror, and this machine's writes.
	mirror := map[string]*local.Card{}
	undecodable := map[string]string{} // as of the last refresh
	retracting := map[string]bool{}    // slugs of own cards queued for retraction
	states := map[string]*State{}      // by slug
	fromRecord := map[string]*local.Card{}
	err = p.st.View(ctx, func(r *store.Reader) error {
		if err := r.Cards(func(c *local.Card) error { mirror[c.Slug] = c; return nil }); err != nil {
			return err
		}
		if v, ok, _ := r.Get(keyUndecodable); ok {
			_ = json.Unmarshal(v, &undecodable)
		}
		// This machine's cards being taken back (forgotten, hidden) stay
		// out of the mirror meanwhile: nothing may resolve or reclaim them.
		rows, _ := outbox.Pending(r, 0)
		for _, row := range rows {
			if row.Retract {
				if slug, err := gbrain.CardSlug(p.set.SlugPrefix, row.ProjectID); err == nil {
					retracting[slug] = true
				}
			}
		}
		if err := r.Scan(prefixState, func(k string, v []byte) bool {
			var s State
			if json.Unmarshal(v, &s) == nil && s.Slug != "" {
				states[s.Slug] = &s
			}
			return true
		}); err != nil {
			return err
		}
		// This machine's cards that are, as far as the recorded hashes and
		// updated_at tell, exactly what cgcat wrote for the record as it is:
		// no read needed.
		for slug, ref := range refs {
			st := states[slug]
			if m := mirror[slug]; m != nil && m.UpdatedAt == string(ref.UpdatedAt) && ref.UpdatedAt != "" {
				continue
			}
			if st == nil || st.PageHash == 0 || st.Conflict != nil || st.PageUpdatedAt == "" || st.PageUpdatedAt != string(ref.UpdatedAt) {
				continue
			}
			id, ok := strings.CutPrefix(slug, prefix)
			if !ok || !store.ValidProjectID(id) {
				continue
			}
			rec, err := r.Project(id)
			if err != nil || rec == nil {
				continue
			}
			card, s, content, err := encode(rec, p.set)
			if err != nil || s != slug || gbrain.ContentHash(content) != st.CardHash {
				continue
			}
			lc := localCard(slug, card)
			lc.UpdatedAt = string(ref.UpdatedAt)
			fromRecord[slug] = lc
		}
		return nil
	})
	if err != nil {
		return rep, err
	}

	var puts []*local.Card
	var dels []string
	stillUndecodable := map[string]string{}
	var ferr error // GBrain failed mid-way: keep what was read, delete nothing
	readStart := time.Now()
	slugs := make([]string, 0, len(refs))
	for slug := range refs {
		slugs = append(slugs, slug)
	}
	slices.Sort(slugs)
	for _, slug := range slugs {
		ref := refs[slug]
		if !strings.HasPrefix(slug, prefix) {
			continue
		}
		rep.Listed++
		if retracting[slug] {
			// Not mirrored while its retraction is pending (a person's
			// edited copy stays as it was).
			if m := mirror[slug]; m != nil && !m.Edited {
				dels = append(dels, slug)
			}
			continue
		}
		if m := mirror[slug]; m != nil && m.UpdatedAt == string(ref.UpdatedAt) && ref.UpdatedAt != "" {
			rep.Kept++
			continue
		}
		if lc := fromRecord[slug]; lc != nil {
			rep.FromRecord++
			puts = append(puts, lc)
			continue
		}
		if at, ok := undecodable[slug]; ok && at == string(ref.UpdatedAt) && at != "" {
			rep.Undecodable++
			stillUndecodable[slug] = at
			continue
		}
		if (o.MaxReads > 0 && rep.Read >= o.MaxReads) || (o.Budget > 0 && time.Since(readStart) > o.Budget) {
			rep.Partial = true
			continue
		}
		if err := ctx.Err(); err != nil {
			ferr = err
			break
		}
		rep.Read++
		page, err := p.read(ctx, slug)
		if err != nil {
			if gbrain.IsDefinite(err) && !errors.Is(err, gbrain.ErrNotConnected) {
				// This one page cannot be read as a card of our source
				// (foreign source, garbage): not mirrored.
				rep.Undecodable++
				if mirror[slug] != nil {
					dels = append(dels, slug)
				}
				continue
			}
			ferr = err
			break
		}
		if page == nil { // deleted between the listing and the read
			if mirror[slug] != nil {
				dels = append(dels, slug)
			}
			continue
		}
		lc, ok := p.judge(slug, page, states[slug])
		if !ok {
			rep.Undecodable++
			if len(stillUndecodable) < maxUndecodables {
				stillUndecodable[slug] = string(page.UpdatedAt)
			}
			if mirror[slug] != nil {
				dels = append(dels, slug)
			}
			continue
		}
		if lc.Edited {
			rep.Edited++
		}
		puts = append(puts, lc)
	}
	if !shifted && ferr == nil {
		for slug := range mirror {
			if _, listed := refs[slug]; !listed || !strings.HasPrefix(slug, prefix) {
				dels = append(dels, slug)
			}
		}
	}
	rep.Written, rep.Deleted = len(puts), len(dels)
	v, _ := json.Marshal(rep)
	uv, _ := json.Marshal(stillUndecodable)
	err = p.commit(ctx, func(tx *store.Tx) error {
		for _, c := range puts {
			if err := tx.PutCard(c); err != nil {
				return err
			}
		}
		for _, slug := range dels {
			tx.DeleteCard(slug)
		}
		tx.Put(keyMirror, v)
		tx.Put(keyUndecodable, uv)
		return nil
	})
	if ferr != nil {
		rep.Partial = true
		return rep, ferr
	}
	return rep, err
}

// localCard is the mirror's copy of a card: never its path.
func localCard(slug string, c gbrain.Card) *local.Card {
	c = gbrain.Normalize(c)
	return &local.Card{
		Slug:           slug,
		ProjectID:      c.ProjectID,
		MachineID:      c.MachineID,
		Name:           c.Name,
		Description:    c.Description,
		Tags:           c.Tags,
		Packages:       c.Packages,
		Keywords:       c.Keywords,
		RecordRevision: c.RecordRevision,
		RootKey:        c.RootKey,
		Availability:   mirrorAvailability(c.Availability),
		MovedTo:        c.MovedTo,
	}
}

// mirrorAvailability keeps a card's availability in the mirror ("" for
// present: most cards).
func mirrorAvailability(a string) string {
	if a == string(local.Present) {
		return ""
	}
	return a
}

// judge decodes a page under our prefix for the mirror, and says whether a
// person changed it: a card of this machine is unedited when its content
// hash is the one recorded after cgcat's last write; any other card (another
// machine's, or this machine's from a lost catalog) when it is exactly what
// cgcat writes for the card it decodes to. A page that is not a well-formed
// card is decoded as far as it can be (title, the frontmatter fields cgcat
// uses, bounded) and marked edited; one that names no project and machine
// is refused (ok false).
func (p *Projector) judge(slug string, page *gbrain.Page, st *State) (*local.Card, bool) {
	return judgeCard(p.set, slug, page, st)
}

func judgeCard(set Settings, slug string, page *gbrain.Page, st *State) (*local.Card, bool) {
	id := strings.TrimPrefix(slug, set.SlugPrefix+"/")
	c, err := gbrain.Decode(page.Content)
	if err == nil {
		if c.ProjectID != id {
			return nil, false // a card claiming another page's project
		}
		lc := localCard(slug, c)
		lc.UpdatedAt = string(page.UpdatedAt)
		if c.MachineID == set.MachineID && st != nil && st.PageHash != 0 && st.Slug == slug {
			lc.Edited = !st.ours(gbrain.ContentHash(page.Content)) // an earlier write of ours landing late is no edit
		} else {
			lc.Edited = !canonical(page, c)
		}
		return lc, true
	}
	lc := lenientCard(slug, id, page)
	if lc == nil {
		return nil, false
	}
	lc.Edited = true
	return lc, true
}

// canonical reports whether the page is exactly what cgcat writes for the
// card c (fields and body; GBrain's re-serialisation aside).
func canonical(page *gbrain.Page, c gbrain.Card) bool {
	proj := gbrain.ProjectionReferenceOnly
	if c.Path != "" {
		proj = gbrain.ProjectionLocalPaths
	}
	content, err := gbrain.Encode(c, gbrain.EncodeOptions{Projection: proj})
	if err != nil {
		return false
	}
	return holds(page, c, content)
}

// lenientCard takes what it can from a page that is not a well-formed card:
// GBrain's title and tags, and the frontmatter fields cgcat writes when they
// have the right type. It needs a project id (the slug's) and a machine id
// (machine_id, or the locator) to name anything; never a path.
func lenientCard(slug, id string, page *gbrain.Page) *local.Card {
	if !store.ValidProjectID(id) && !gbrain.ValidCardID(id) {
		return nil
	}
	fm := page.Frontmatter
	s := func(k string) string {
		v, _ := fm[k].(string)
		return v
	}
	list := func(k string) []string {
		xs, _ := fm[k].([]any)
		var out []string
		for _, x := range xs {
			if v, ok := x.(string); ok {
				out = append(out, v)
			}
			if len(out) == gbrain.MaxItems {
				break
			}
		}
		return out
	}
	if pid := s("project_id"); pid != "" && pid != id {
		return nil
	}
	machine := s("machine_id")
	if machine == "" {
		if loc, ok := strings.CutPrefix(s("locator"), gbrain.LocatorScheme); ok {
			if m, pid, ok := strings.Cut(loc, "/"); ok && pid == id {
				machine = m
			}
		}
	}
	if !gbrain.ValidCardID(machine) {
		return nil
	}
	c := gbrain.Card{
		ProjectID:   id,
		MachineID:   machine,
		Name:        page.Title,
		Description: s("description"),
		Packages:    list("packages"),
		Keywords:    list("keywords"),
	}
	if c.Description == "" {
		c.Description = firstParagraph(page.CompiledTruth)
	}
	for _, t := range page.Tags {
		if !gbrain.OwnTag(t) {
			c.Tags = append(c.Tags, t)
		}
	}
	if rk := s("root_key"); gbrain.ValidRootKey(rk) {
		c.RootKey = rk
	}
	if a := s("availability"); slices.Contains(gbrain.Availabilities, a) {
		c.Availability = a
	}
	if to := s("moved_to"); store.ValidProjectID(to) && to != id {
		c.MovedTo = to
	}
	if f, ok := fm["record_revision"].(float64); ok && f >= 0 && f == float64(uint64(f)) {
		c.RecordRevision = uint64(f)
	}
	c = gbrain.Normalize(c)
	if c.Name == "" {
		c.Name = id
	}
	lc := localCard(slug, c)
	lc.UpdatedAt = string(page.UpdatedAt)
	return lc
}

// firstParagraph is the first paragraph of a markdown body that is not a
// heading (bounded by Normalize afterwards).
func firstParagraph(body string) string {
	if len(body) > gbrain.MaxCardBytes {
		body = body[:gbrain.MaxCardBytes]
	}
	for _, para := range strings.Split(strings.ReplaceAll(body, "\r\n", "\n"), "\n\n") {
		para = strings.TrimSpace(para)
		if para != "" && !strings.HasPrefix(para, "#") {
			return para
		}
	}
	return ""
}

// LastMirror is the report of the last mirror refresh (nil before the first).
func LastMirror(ctx context.Context, st *store.Store) (*MirrorReport, error) {
	var rep *MirrorReport
	err := st.View(ctx, func(r *store.Reader) error {
		v, ok, err := r.Get(keyMirror)
		if err != nil || !ok {
			return err
		}
		var m MirrorReport
		if json.Unmarshal(v, &m) == nil {
			rep = &m
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the mirror's state: %w", err)
	}
	return rep, nil
}
