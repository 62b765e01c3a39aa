package projection

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cgcat/cgcat/gbrain"
	"github.com/cgcat/cgcat/gbrain/gbraintest"
	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/catalog"
	"github.com/cgcat/cgcat/local/pathid"
	"github.com/cgcat/cgcat/local/store"
	"github.com/cgcat/cgcat/server"
)

// policyFunc is a policy source that can change under a projector.
type policyFunc func() catalog.Policy

func (f policyFunc) Policy() catalog.Policy { return f() }

// loseCatalog deletes everything in the data dir but the identity file
// and opens the fresh store (new connection and settings too).
func (e *env) loseCatalog() {
	e.t.Helper()
	ents, err := os.ReadDir(e.cfg.DataDir)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, de := range ents {
		if de.Name() != filepath.Base(store.IdentityFile(e.cfg.DataDir)) {
			if err := os.RemoveAll(filepath.Join(e.cfg.DataDir, de.Name())); err != nil {
				e.t.Fatal(err)
			}
		}
	}
	st, err := store.Open(e.ctx, e.cfg.DataDir)
	if err != nil {
		e.t.Fatal(err)
	}
	e.st = st
	if len(e.records()) != 0 {
		e.t.Fatal("the catalog was not lost")
	}
	if e.reconnect != nil {
		e.conn = e.reconnect()
	} else {
		e.conn = e.newConn(e.opts)
	}
	e.set = SettingsFrom(e.cfg, st)
}

// mirror returns the mirrored cards by slug.
func (e *env) mirror() map[string]*local.Card {
	e.t.Helper()
	out := map[string]*local.Card{}
	if err := e.st.View(e.ctx, func(r *store.Reader) error {
		return r.Cards(func(c *local.Card) error { out[c.Slug] = c; return nil })
	}); err != nil {
		e.t.Fatal(err)
	}
	return out
}

func (e *env) refresh(p *Projector) MirrorReport {
	e.t.Helper()
	rep, err := p.RefreshMirror(e.ctx, MirrorOptions{})
	if err != nil {
		e.t.Fatalf("mirror refresh: %v (%+v)", err, rep)
	}
	return rep
}

// otherCard is a card another machine's cgcat wrote (its own projection).
func otherCard(t testing.TB, id, machine, name, desc string, localPaths bool) string {
	t.Helper()
	c := gbrain.Card{ProjectID: id, MachineID: machine, Name: name, Description: desc, Packages: []string{"@other/" + name},
		RecordRevision: 4, RootKey: "00112233445566778899aabbccddeeff"}
	o := gbrain.EncodeOptions{}
	if localPaths {
		c.Path = "/home/someone/secret/" + name
		o.Projection = gbrain.ProjectionLocalPaths
	}
	s, err := gbrain.Encode(c, o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestMirrorRefreshIsIncrementalAndJudgesEdits(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 3)
	p := e.projector()
	p.listLimit = 2 // several list pages from few cards
	e.drain(p)
	recs := e.records()

	// The drain mirrors what it writes, with root keys and no edit.
	m := e.mirror()
	if len(m) != 3 {
		t.Fatalf("mirror after the first drain: %d rows", len(m))
	}
	for _, r := range recs {
		c := m[e.slug(r.ID)]
		want := e.st.Identity().RootKey(pathid.Key(r.Root))
		if c == nil || c.Edited || c.MachineID != e.set.MachineID || c.RootKey != want || c.UpdatedAt == "" || c.Name != r.Meta.Name {
			t.Fatalf("mirrored own card: %+v (root key want %s)", c, want)
		}
	}

	// GBrain changes behind us: another machine's two cards (one written
	// with local paths), a person's edit of one of ours, a tagged page
	// under our prefix that names no machine, a page outside our prefix.
	e.fake.Put(t, testSource, e.slug("cg_aaaaaaaaaaaaaaaa"), otherCard(t, "cg_aaaaaaaaaaaaaaaa", "m_other", "quasar", "the quasar ingest service", false))
	e.fake.Put(t, testSource, e.slug("cg_bbbbbbbbbbbbbbbb"), otherCard(t, "cg_bbbbbbbbbbbbbbbb", "m_other", "pulsar", "the pulsar queue", true))
	edited := recs[1]
	content := e.fake.Content(t, testSource, e.slug(edited.ID))
	e.fake.Put(t, testSource, e.slug(edited.ID), strings.Replace(content, "widget service number 1", "a person's better words", 1))
	e.fake.Put(t, testSource, e.slug("cg_cccccccccccccccc"), "---\ntype: note\ntitle: scratch\ntags: [cgcat-card]\n---\n\nnotes\n")
	e.fake.Put(t, testSource, "people/alice", "---\ntype: person\ntitle: Alice\ntags: [cgcat-card]\n---\n\nhi\n")
	// Another machine's card that a person edited in GBrain (the words in
	// its frontmatter no longer match its body).
	e.fake.Put(t, testSource, e.slug("cg_gggggggggggggggg"), strings.Replace(
		otherCard(t, "cg_gggggggggggggggg", "m_other", "nebula", "the nebula renderer", false),
		`description: "the nebula renderer"`, `description: "the nebula renderer, rewritten by hand"`, 1))

	e.fake.ResetCalls(t)
	rep := e.refresh(p)
	// The first refresh of a mirror without a mark derives its rows again
	// (an upgrade from a release without one): this machine's own from
	// their records, without a read.
	if rep.Listed != 7 || rep.Kept+rep.FromRecord != 2 || rep.Read != 5 || rep.Edited != 2 || rep.Undecodable != 1 || rep.Written != 4+rep.FromRecord || rep.Deleted != 0 {
		t.Fatalf("refresh: %+v", rep)
	}
	if c := e.fake.Calls(t); c["get_page"] != 5 || c["put_page"] != 0 || c["delete_page"] != 0 {
		t.Fatalf("a refresh only reads changed pages: %v", c)
	}
	m = e.mirror()
	if len(m) != 6 {
		t.Fatalf("mirror rows: %d", len(m))
	}
	if nb := m[e.slug("cg_gggggggggggggggg")]; nb == nil || !nb.Edited || nb.Description != "the nebula renderer, rewritten by hand" {
		t.Fatalf("another machine's card edited by a person: %+v", nb)
	}
	q := m[e.slug("cg_aaaaaaaaaaaaaaaa")]
	if q == nil || q.MachineID != "m_other" || q.Edited || q.Description != "the quasar ingest service" || q.RootKey == "" {
		t.Fatalf("another machine's card: %+v", q)
	}
	if pl := m[e.slug("cg_bbbbbbbbbbbbbbbb")]; pl == nil || pl.Edited {
		t.Fatalf("a local-paths card of another machine is cgcat's shape: %+v", pl)
	}
	if ed := m[e.slug(edited.ID)]; ed == nil || !ed.Edited || !strings.Contains(ed.Description, "a person's better words") {
		t.Fatalf("the person's edit is mirrored as edited: %+v", ed)
	}
	if _, ok := m["people/alice"]; ok {
		t.Fatal("a page outside the slug prefix was mirrored")
	}
	// The mirror never holds a path, whatever a card carries.
	if err := e.st.View(e.ctx, func(r *store.Reader) error {
		return r.Cards(func(c *local.Card) error {
			v, _ := json.Marshal(c) // the row as the store encodes it
			if strings.Contains(string(v), "/home/someone/secret") || strings.Contains(string(v), e.root) {
				t.Errorf("mirror row %s holds a path: %s", c.Slug, v)
			}
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}

	// Nothing changed: a refresh lists and reads nothing.
	e.fake.ResetCalls(t)
	if rep := e.refresh(p); rep.Read != 0 || rep.Written != 0 || rep.Kept != 6 {
		t.Fatalf("an idle refresh: %+v", rep)
	}
	if c := e.fake.Calls(t); c["get_page"] != 0 {
		t.Fatalf("an idle refresh read pages: %v", c)
	}

	// A page deleted in GBrain leaves the mirror at the next full
	// refresh: a soft delete does not move updated_at, so what changed
	// since the last refresh does not show it.
	e.fake.Delete(t, testSource, e.slug("cg_aaaaaaaaaaaaaaaa"))
	if rep := e.refresh(p); rep.Deleted != 0 || rep.Full {
		t.Fatalf("an incremental refresh after a deletion: %+v", rep)
	}
	if rep, err := p.RefreshMirror(e.ctx, MirrorOptions{Full: true}); err != nil || rep.Deleted != 1 {
		t.Fatalf("deleted page: %+v %v", rep, err)
	}
	if _, ok := e.mirror()[e.slug("cg_aaaaaaaaaaaaaaaa")]; ok {
		t.Fatal("a deleted page stays mirrored")
	}

	// A mirror lost (or never made) is rebuilt without reading this
	// machine's unedited cards: the record and the recorded hashes say
	// what they hold.
	rows := e.mirror()
	if err := e.st.Update(e.ctx, func(tx *store.Tx) error {
		for slug := range rows {
			tx.DeleteCard(slug)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	e.fake.ResetCalls(t)
	rep = e.refresh(p)
	if rep.FromRecord != 2 || rep.Read != 3 || len(e.mirror()) != 5 {
		t.Fatalf("rebuilt mirror: %+v (%d rows)", rep, len(e.mirror()))
	}
}

// Pages that shift while the listing pages through them are re-scanned and
// de-duplicated; a shifting listing never drops mirror rows.
func TestMirrorRefreshUnderShiftingPages(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 7)
	p := e.projector()
	p.listLimit = 3
	e.drain(p)
	added := 0
	p.listHook = func(offset int) {
		if offset > 0 && added < 2 {
			added++
			id := fmt.Sprintf("cg_%016d", added) // sorts first: shifts every page
			e.fake.Put(t, testSource, e.slug(id), otherCard(t, id, "m_other", fmt.Sprintf("shift%d", added), "d", false))
		}
	}
	rep := e.refresh(p)
	if rep.Rescans < 1 {
		t.Fatalf("the shift was not noticed: %+v", rep)
	}
	p.listHook = nil
	rep = e.refresh(p)
	if len(e.mirror()) != 9 || rep.Listed != 9 {
		t.Fatalf("after the shifts: %d rows, %+v", len(e.mirror()), rep)
	}
}

func TestDeniedAfterProjectionIsRetractedAndSharedAgain(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 3)
	p := e.projector()
	pol := e.pol
	p.pol = policyFunc(func() catalog.Policy { return pol })
	e.drain(p)
	denied, editedDenied := e.record("pkg-0001"), e.record("pkg-0002")
	deniedSlug, editedSlug := e.slug(denied.ID), e.slug(editedDenied.ID)
	// A person edits one card; then both projects are denied here.
	content := e.fake.Content(t, testSource, editedSlug)
	personal := strings.Replace(content, "widget service number 2", "kept by a person", 1)
	e.fake.Put(t, testSource, editedSlug, personal)
	personal = e.fake.Content(t, testSource, editedSlug)
	cfg := *e.cfg
	cfg.Sharing.DenyRoots = []string{filepath.Dir(denied.Root) + "/p0001", filepath.Dir(denied.Root) + "/p0002"}
	pol = catalog.PolicyFrom(&cfg)

	sw, err := p.Sweep(e.ctx)
	if err != nil || sw.Retract != 2 {
		t.Fatalf("sweep: %+v %v", sw, err)
	}
	rep := e.drain(p)
	if rep.Retracted != 1 || rep.Conflicts != 1 {
		t.Fatalf("drain after deny: %+v", rep)
	}
	if pg := e.fake.Page(t, testSource, deniedSlug); pg == nil || pg.DeletedAt == "" {
		t.Fatalf("the denied project's card is still in GBrain: %+v", pg)
	}
	if got := e.fake.Content(t, testSource, editedSlug); got != personal {
		t.Fatalf("an edited card was touched:\n%s", got)
	}
	if _, ok := e.mirror()[deniedSlug]; ok {
		t.Fatal("the retracted card stays in the mirror")
	}
	if st := e.state(editedDenied.ID); st == nil || st.Conflict == nil || !strings.Contains(st.Conflict.Why, "edited") {
		t.Fatalf("the edited card's conflict: %+v", st)
	}
	status, _ := ReadStatus(e.ctx, e.st)
	if len(status.Conflicts) != 1 || status.Conflicts[0].Slug != editedSlug {
		t.Fatalf("status conflicts: %+v", status.Conflicts)
	}
	// Nothing left to do: a second sweep queues nothing.
	if sw, _ := p.Sweep(e.ctx); sw.Retract != 0 || sw.Reshare != 0 {
		t.Fatalf("second sweep: %+v", sw)
	}
	// Shared again: the card comes back.
	pol = e.pol
	if sw, _ := p.Sweep(e.ctx); sw.Reshare != 1 {
		t.Fatalf("sweep after the deny is lifted: %+v", sw)
	}
	if rep := e.drain(p); rep.Written != 1 {
		t.Fatalf("drain after the deny is lifted: %+v", rep)
	}
	if pg := e.fake.Page(t, testSource, deniedSlug); pg == nil || pg.DeletedAt != "" {
		t.Fatalf("the card did not come back: %+v", pg)
	}
}

func TestForgottenProjectsCardIsRetracted(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 2)
	p := e.projector()
	e.drain(p)
	gone := e.record("pkg-0000")
	if err := e.st.Update(e.ctx, func(tx *store.Tx) error { return tx.DeleteProject(gone.ID) }); err != nil {
		t.Fatal(err)
	}
	e.fake.ResetCalls(t)
	rep := e.drain(p)
	if rep.Retracted != 1 || rep.Remaining != 0 {
		t.Fatalf("drain after forget: %+v", rep)
	}
	// One delete, and one put: of this machine's page, which lists the
	// card taken back for the other machines (no card is written).
	if c := e.fake.Calls(t); c["delete_page"] != 1 || c["put_page"] != 1 {
		t.Fatalf("calls: %v", c)
	}
	slug, _ := gbrain.MachineSlug(e.set.SlugPrefix, e.set.MachineID)
	if mp, err := gbrain.DecodeMachine(e.fake.Content(t, testSource, slug)); err != nil || len(mp.Retracted) != 1 || mp.Retracted[0].ProjectID != gone.ID {
		t.Fatalf("this machine's page: %+v %v", mp, err)
	}
	if pg := e.fake.Page(t, testSource, e.slug(gone.ID)); pg == nil || pg.DeletedAt == "" {
		t.Fatalf("card of a forgotten project: %+v", pg)
	}
	if e.state(gone.ID) != nil {
		t.Fatal("the forgotten project's state stays")
	}
	if len(e.listed()) != 1 {
		t.Fatalf("cards left: %v", e.listed())
	}
}

func TestPruneTouchesOnlyThisMachinesUneditedOrphans(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 2)
	p := e.projector()
	e.drain(p)
	me := e.set.MachineID
	own := func(id, name string) string {
		s, err := gbrain.Encode(gbrain.Card{ProjectID: id, MachineID: me, Name: name, RecordRevision: 2}, gbrain.EncodeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	orphan, editedOrphan, other := "cg_dddddddddddddddd", "cg_eeeeeeeeeeeeeeee", "cg_ffffffffffffffff"
	e.fake.Put(t, testSource, e.slug(orphan), own(orphan, "lost one"))
	e.fake.Put(t, testSource, e.slug(editedOrphan), strings.Replace(own(editedOrphan, "edited one"), "# edited one", "# edited one\n\nA person's note.", 1))
	e.fake.Put(t, testSource, e.slug(other), otherCard(t, other, "m_other", "theirs", "d", false))

	e.fake.ResetCalls(t)
	dry, err := p.Prune(e.ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(dry.Orphans) != 1 || dry.Orphans[0].ProjectID != orphan || len(dry.Edited) != 1 || dry.OtherMachines != 1 || dry.Queued != 0 || e.depth() != 0 {
		t.Fatalf("dry prune: %+v depth %d", dry, e.depth())
	}
	if c := e.fake.Calls(t); c["put_page"] != 0 || c["delete_page"] != 0 {
		t.Fatalf("dry prune wrote: %v", c)
	}
	rep, err := p.Prune(e.ctx, false)
	if err != nil || rep.Queued != 1 {
		t.Fatalf("prune: %+v %v", rep, err)
	}
	if d := e.drain(p); d.Retracted != 1 {
		t.Fatalf("drain after prune: %+v", d)
	}
	for id, wantGone := range map[string]bool{orphan: true, editedOrphan: false, other: false} {
		pg := e.fake.Page(t, testSource, e.slug(id))
		if gone := pg == nil || pg.DeletedAt != ""; gone != wantGone {
			t.Errorf("%s: deleted %v, want %v", id, gone, wantGone)
		}
	}
	if got := len(e.listed()); got != 4 {
		t.Fatalf("cards left: %d", got)
	}
}

// A catalog deleted (the identity file kept): the mirror is refreshed
// before the first scan, the scan takes every id back by root key, and the
// drain adopts this machine's cards: no id lost, no duplicate card.
func TestLostCatalogKeepsIdsAndDuplicatesNoCard(t *testing.T) {
	t.Parallel()
	const n = 4
	e := newEnv(t, n)
	p := e.projector()
	e.drain(p)
	before := map[string]string{}
	for _, r := range e.records() {
		before[r.Meta.Name] = r.ID
	}
	// A metadata change after the last write, so that one card is stale
	// (older words than the project has) when the catalog is lost.
	writePkg(t, e.record("pkg-0001").Root, "pkg-0001", "words written after the last sync")
	p.Release()
	e.conn.Close()

	e.loseCatalog()
	p = e.projector()
	if rep := e.refresh(p); rep.Listed != n || rep.Read != n || rep.Edited != 0 {
		t.Fatalf("the first refresh of a fresh store: %+v", rep)
	}
	e.rescan()
	kept := 0
	for _, r := range e.records() {
		if before[r.Meta.Name] == r.ID {
			kept++
		}
	}
	if kept != n {
		t.Fatalf("ids kept after a deleted catalog: %d of %d", kept, n)
	}
	rep := e.drain(p)
	if rep.Conflicts != 0 || rep.Rows != n || rep.Written != 1 {
		t.Fatalf("drain after the lost catalog: %+v", rep)
	}
	if c := e.fake.Content(t, testSource, e.slug(before["pkg-0001"])); !strings.Contains(c, "words written after the last sync") {
		t.Fatalf("the stale card of this machine was not updated:\n%s", c)
	}
	if got := e.listed(); len(got) != n {
		t.Fatalf("duplicate cards after a lost catalog: %d cards for %d projects", len(got), n)
	}
	// A card a person edited meanwhile is still a conflict, never adopted.
	id := before["pkg-0002"]
	c := e.fake.Content(t, testSource, e.slug(id))
	e.fake.Put(t, testSource, e.slug(id), strings.Replace(c, "widget service number 2", "hand edited", 1))
	if err := e.st.Update(e.ctx, func(tx *store.Tx) error { deleteState(tx, id); tx.EnqueueCard(id, 1, false); return nil }); err != nil {
		t.Fatal(err)
	}
	if rep := e.drain(p); rep.Conflicts != 1 {
		t.Fatalf("an edited card of this machine after a lost catalog: %+v", rep)
	}
}

// GBrain down after a refresh: answers keep the mirrored cards, with
// gbrainState degraded; and a card of a project hidden here is never shown,
// however its words match.
func TestMirrorAnswersWithGBrainDownAndHidesHiddenProjects(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 2, "p0001")
	p := e.projector()
	e.drain(p)
	hidden := e.record("pkg-0001")
	// Its card from before the deny, written by a release without root
	// keys: only the binding of its id keeps it hidden.
	content, err := gbrain.Encode(gbrain.Card{ProjectID: hidden.ID, MachineID: e.set.MachineID, Name: "pkg-0001",
		Description: "secret nebula words"}, gbrain.EncodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.fake.Put(t, testSource, e.slug(hidden.ID), content)
	e.fake.Put(t, testSource, e.slug("cg_aaaaaaaaaaaaaaaa"), otherCard(t, "cg_aaaaaaaaaaaaaaaa", "m_other", "quasar", "the quasar ingest service", false))
	e.refresh(p)
	if len(e.mirror()) != 3 {
		t.Fatalf("mirror: %d rows", len(e.mirror()))
	}
	// GBrain goes down; the holder's next round says so.
	p.Release()
	e.conn.Close()
	e.fake.SetControl(t, gbraintest.Control{ExitAtStart: "crash"})
	if err := e.st.Update(e.ctx, func(tx *store.Tx) error {
		tx.PutGBrainContact(local.GBrainContact{OK: false, At: time.Now().UTC(), Error: "gbrain process exited"})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	f := e.frontendWith(e.cfg)
	got, err := f.Projects(e.ctx, server.ProjectsArgs{Query: "quasar ingest", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if got.GBrainState != server.GBrainDegraded || len(got.Projects) != 1 || got.Projects[0].Availability != server.AvailabilityHistorical || got.Projects[0].MachineID != "m_other" {
		t.Fatalf("search with GBrain down: %s %+v", got.GBrainState, got.Projects)
	}
	for _, q := range []string{"secret nebula words", "pkg-0001"} {
		got, err = f.Projects(e.ctx, server.ProjectsArgs{Query: q, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		for _, pr := range got.Projects {
			if pr.ProjectID == hidden.ID || strings.Contains(pr.Description, "nebula") {
				t.Fatalf("a hidden project's card was shown for %q: %+v", q, pr)
			}
		}
	}
	r, err := f.Resolve(e.ctx, server.ResolveArgs{ProjectID: hidden.ID})
	if err != nil || r.Status != server.StatusNotAvailable || len(r.Projects) != 0 {
		t.Fatalf("resolve of the hidden project: %+v %v", r, err)
	}
}
