package projection

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cgcat/cgcat/gbrain"
	"github.com/cgcat/cgcat/gbrain/gbraintest"
	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/catalog"
	"github.com/cgcat/cgcat/local/config"
	"github.com/cgcat/cgcat/local/store"
	"github.com/cgcat/cgcat/server"
)

// frontend builds the real frontend over the env's store with recall r.
// Without recall it stands for a process whose config has GBrain off.
func (e *env) frontend(r server.Recall, budget time.Duration) *server.Frontend {
	cfg := e.cfg
	if r == nil {
		off := *e.cfg
		off.GBrain.Enabled = false
		cfg = &off
	} else {
		// A frontend asks recall only with gbrain.semanticSearch (keyword
		// matches come from the card mirror, locally).
		on := *e.cfg
		on.GBrain.SemanticSearch = true
		cfg = &on
	}
	f := server.NewFrontend(server.Options{
		Config:       config.Fixed(cfg),
		Recall:       r,
		RecallBudget: budget,
		Open: func(ctx context.Context, _ *config.Config) (*catalog.Catalog, server.Discovery, error) {
			cat, err := catalog.Load(ctx, e.st)
			return cat, nil, err
		},
	})
	if err := f.Ready(e.ctx); err != nil {
		e.t.Fatal(err)
	}
	return f
}

type shown struct {
	id, path string
	reasons  string
}

func (e *env) search(f *server.Frontend, q string) ([]shown, string) {
	e.t.Helper()
	env, err := f.Projects(e.ctx, server.ProjectsArgs{Query: q, Limit: 50})
	if err != nil {
		e.t.Fatal(err)
	}
	var out []shown
	for _, p := range env.Projects {
		s := shown{id: p.ProjectID, reasons: strings.Join(p.Reason, "; ")}
		if p.ProjectPath != nil {
			s.path = *p.ProjectPath
		}
		out = append(out, s)
	}
	return out, env.GBrainState
}

// contactOK records that GBrain answered just now, as the lease holder's
// round does: gbrainState is that shared truth, which recall only adds to.
func (e *env) contactOK() {
	e.t.Helper()
	if err := e.st.Update(e.ctx, func(tx *store.Tx) error {
		tx.PutGBrainContact(local.GBrainContact{OK: true, At: time.Now().UTC()})
		return nil
	}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) recaller() *Recaller {
	return &Recaller{Conn: e.conn, Store: e.st, Settings: e.set}
}

func shownIDs(s []shown) []string {
	var out []string
	for _, x := range s {
		out = append(out, x.id+"="+x.path)
	}
	return out
}

func TestRecallMapsACardHitToTheLocalRecord(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 3)
	p := e.projector()
	e.drain(p)
	target := e.record("pkg-0001")
	if _, err := e.conn.Client(e.ctx); err != nil {
		t.Fatal(err)
	}
	hits, err := e.recaller().Recall(e.ctx, "kw0001", 20)
	if err != nil || len(hits) != 1 || hits[0].ProjectID != target.ID || hits[0].MachineID != e.st.MachineID() {
		t.Fatalf("recall kw0001: %+v %v", hits, err)
	}

	e.contactOK()
	// Through the frontend: "reference" is only in the cards' bodies, so
	// the local lexical search finds nothing and recall finds every card;
	// each maps to its local record, with the local path and a reason.
	f := e.frontend(e.recaller(), time.Minute) // a budget no loaded machine runs out of
	got, state := e.search(f, "reference")
	if state != server.GBrainOK || len(got) != 3 {
		t.Fatalf("recall through the frontend: %s %+v", state, got)
	}
	for _, g := range got {
		recs := e.records()
		rec := recs[slices.IndexFunc(recs, func(r *local.Project) bool { return r.ID == g.id })]
		if g.path != rec.Root || !strings.Contains(g.reasons, "GBrain recall") {
			t.Fatalf("recall hit %+v does not map to its record %s", g, rec.Root)
		}
	}
	// Lexical hits come first, recall only adds.
	got, _ = e.search(f, "kw0002 reference")
	if len(got) != 3 || got[0].id != e.record("pkg-0002").ID || strings.Contains(got[0].reasons, "GBrain") {
		t.Fatalf("merge order: %+v", got)
	}
}

func TestGBrainDownDuringSearchIsDegradedWithTheSameLocalResults(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 4)
	p := e.projector()
	e.drain(p)
	base, state := e.search(e.frontend(nil, 0), "widget")
	if state != server.GBrainDisabled || len(base) != 4 {
		t.Fatalf("baseline: %s %+v", state, base)
	}
	if _, err := e.conn.Client(e.ctx); err != nil {
		t.Fatal(err)
	}
	e.contactOK()
	// GBrain up, with a budget no loaded machine runs out of (300 ms did,
	// beside two busy loops): answered and not degraded.
	up := e.frontend(e.recaller(), time.Minute)
	if got, state := e.search(up, "widget"); state != server.GBrainOK || !slices.Equal(shownIDs(got), shownIDs(base)) {
		t.Fatalf("GBrain up: %s %+v", state, got)
	}
	f := e.frontend(e.recaller(), 300*time.Millisecond)
	for _, tc := range []struct {
		name string
		ctl  gbraintest.Control
	}{
		{"garbage", gbraintest.Control{Garbage: []string{"search"}}},
		{"slow", gbraintest.Control{HoldTools: []string{"search"}}}, // answers only once released
		{"dies mid-search", gbraintest.Control{DropBeforeApply: []string{"search"}}},
		{"down", gbraintest.Control{ExitAtStart: "crash"}}, // the connection is gone now
	} {
		e.fake.SetControl(t, tc.ctl)
		// A search answers within its recall budget: for "slow", GBrain's
		// search is held until after the answer (an answer that waited
		// for GBrain would never come).
		got, state := e.search(f, "widget")
		if tc.name == "slow" {
			e.fake.SetControl(t, gbraintest.Control{}) // released
		}
		if state != server.GBrainDegraded || !slices.Equal(shownIDs(got), shownIDs(base)) {
			t.Fatalf("%s: want degraded with the local results %v, got %s %v", tc.name, shownIDs(base), state, shownIDs(got))
		}
	}
	if e.conn.Current() != nil {
		t.Fatal("the connection should be gone")
	}
	// Not connected, GBrain down: recall dials its connection again, and
	// says why it failed (not "still connecting").
	dials := e.conn.Dials()
	if _, err := e.recaller().Recall(e.ctx, "widget", 5); err == nil || errors.Is(err, local.ErrRecallNotReady) || e.conn.Dials() != dials+1 {
		t.Fatalf("recall without a connection: %v (dials %d → %d)", err, dials, e.conn.Dials())
	}
}

func TestTamperedCardsChangeNothingLocal(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 4)
	p := e.projector()
	e.drain(p)
	a, b, c, d := e.record("pkg-0000"), e.record("pkg-0001"), e.record("pkg-0002"), e.record("pkg-0003")
	before := e.snapshotRecords()
	me := e.st.MachineID()

	// a: the card names another machine.
	other := CardOf(a, e.set)
	other.MachineID = "m_someoneelse0000"
	otherContent, err := gbrain.Encode(other, gbrain.EncodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.fake.Put(t, testSource, e.slug(a.ID), otherContent)
	// b: forged locator.
	bc := e.fake.Content(t, testSource, e.slug(b.ID))
	e.fake.Put(t, testSource, e.slug(b.ID), strings.Replace(bc, "locator: local-codegraph://"+me+"/"+b.ID, "locator: local-codegraph://"+me+"/"+d.ID, 1))
	// c: a path in a reference-only card.
	cc := e.fake.Content(t, testSource, e.slug(c.ID))
	e.fake.Put(t, testSource, e.slug(c.ID), strings.Replace(cc, "projection: reference-only\n", "projection: reference-only\npath: \"/etc\"\n", 1))
	// An unknown id with our machine id and a path-bearing local-paths card.
	unknown := "cg_aaaaaaaaaaaaaaaa"
	uc, err := gbrain.Encode(gbrain.Card{ProjectID: unknown, MachineID: me, Name: "ghost", Description: "reference ghost", Path: "/etc", RecordRevision: 9},
		gbrain.EncodeOptions{Projection: gbrain.ProjectionLocalPaths})
	if err != nil {
		t.Fatal(err)
	}
	e.fake.Put(t, testSource, e.slug(unknown), uc)
	for _, id := range []string{a.ID, b.ID, c.ID} {
		if _, err := gbrain.Decode(e.fake.Content(t, testSource, e.slug(id))); err == nil && id != a.ID {
			t.Fatalf("tampered card %s still decodes", id)
		}
	}

	if _, err := e.conn.Client(e.ctx); err != nil {
		t.Fatal(err)
	}
	hits, err := e.recaller().Recall(e.ctx, "reference", 20)
	if err != nil || len(hits) != 1 || hits[0].ProjectID != d.ID {
		t.Fatalf("only the untouched card may count: %+v %v", hits, err)
	}
	f := e.frontend(e.recaller(), time.Minute) // a budget no loaded machine runs out of
	got, _ := e.search(f, "reference ghost")
	if len(got) != 1 || got[0].id != d.ID || got[0].path != d.Root {
		t.Fatalf("frontend with tampered cards: %+v", got)
	}
	for _, g := range got {
		if g.path == "/etc" || g.id == unknown {
			t.Fatalf("a tampered card leaked into the answer: %+v", g)
		}
	}

	// The projector treats them as conflicts and overwrites none; the
	// unknown id is an orphan.
	rr, err := p.Reconcile(e.ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if rr.OrphanCount != 1 || rr.Orphans[0].ProjectID != unknown || len(rr.Changed) != 3 {
		t.Fatalf("reconcile: %+v", rr)
	}
	tampered := map[string]string{}
	for _, id := range []string{a.ID, b.ID, c.ID} {
		tampered[id] = e.fake.Content(t, testSource, e.slug(id))
	}
	rep := e.drain(p)
	if rep.Conflicts != 3 || rep.Written != 0 {
		t.Fatalf("drain over tampered cards: %+v", rep)
	}
	for id, content := range tampered {
		if e.fake.Content(t, testSource, e.slug(id)) != content {
			t.Fatalf("tampered card %s was overwritten", id)
		}
	}
	if after := e.snapshotRecords(); after != before {
		t.Fatalf("records or policy changed:\nbefore %s\nafter  %s", before, after)
	}
	// And resolve of the unknown id knows nothing of it.
	r, err := f.Resolve(e.ctx, server.ResolveArgs{ProjectID: unknown})
	if err != nil || r.Status != server.StatusUnknownProject || len(r.Projects) != 0 {
		t.Fatalf("resolve of a card-only id: %+v %v", r, err)
	}
}
