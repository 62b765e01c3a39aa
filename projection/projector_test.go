package projection

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cgcat/cgcat/gbrain"
	"github.com/cgcat/cgcat/gbrain/gbraintest"
	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/catalog"
	"github.com/cgcat/cgcat/local/lease"
)

func TestFirstSyncWritesAllSecondWritesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 5)
	if d := e.depth(); d != 5 {
		t.Fatalf("the scan should queue 5 cards, outbox has %d", d)
	}
	p := e.projector()
	e.fake.ResetCalls(t)
	rep := e.drain(p)
	if rep.Written != 5 || rep.Rows != 5 || rep.Remaining != 0 {
		t.Fatalf("first sync: %+v", rep)
	}
	if get, put := e.calls(); get != 10 || put != 5 {
		t.Fatalf("a new card costs one read, one write, one read-back: get_page %d put_page %d for 5 cards", get, put)
	}
	for _, r := range e.records() {
		s := e.state(r.ID)
		content := e.fake.Content(t, testSource, e.slug(r.ID))
		if s == nil || s.PageHash != gbrain.ContentHash(content) || s.RecordRevision != r.RecordRevision || s.Slug != e.slug(r.ID) {
			t.Fatalf("state of %s does not match the page: %+v", r.ID, s)
		}
		c, err := gbrain.Decode(content)
		if err != nil || c.ProjectID != r.ID || c.MachineID != e.st.MachineID() || c.Path != "" {
			t.Fatalf("card of %s: %+v %v", r.ID, c, err)
		}
	}
	if got := e.listed(); len(got) != 5 {
		t.Fatalf("list_pages shows %d cards, want 5", len(got))
	}

	// Second sync: nothing pending, nothing read, nothing written.
	e.fake.ResetCalls(t)
	rep = e.drain(p)
	if rep.Rows != 0 {
		t.Fatalf("second sync: %+v", rep)
	}
	if get, put := e.calls(); get != 0 || put != 0 {
		t.Fatalf("second sync made calls: get_page %d put_page %d", get, put)
	}

	// A rescan of unchanged projects queues nothing.
	e.rescan()
	if d := e.depth(); d != 0 {
		t.Fatalf("an unchanged rescan queued %d cards", d)
	}

	// Re-queued but unchanged: one read each, no write.
	var ids []string
	for _, r := range e.records() {
		ids = append(ids, r.ID)
	}
	e.enqueue(ids...)
	e.fake.ResetCalls(t)
	rep = e.drain(p)
	if rep.Unchanged != 5 || rep.Written != 0 {
		t.Fatalf("re-queued unchanged cards: %+v", rep)
	}
	if get, put := e.calls(); get != 5 || put != 0 {
		t.Fatalf("an unchanged card costs one read: get_page %d put_page %d", get, put)
	}
}

func TestMetadataChangeWritesOneCard(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 4)
	p := e.projector()
	e.drain(p)
	target := e.record("pkg-0002")
	writePkg(t, target.Root, "pkg-0002", "now a gizmo for the shipping team", "gizmo")
	e.rescan()
	if d := e.depth(); d != 1 {
		t.Fatalf("one changed project should queue one card, got %d", d)
	}
	e.fake.ResetCalls(t)
	rep := e.drain(p)
	if rep.Written != 1 || rep.Rows != 1 {
		t.Fatalf("metadata change: %+v", rep)
	}
	if get, put := e.calls(); get != 2 || put != 1 {
		t.Fatalf("a changed card costs one read + one write + one read-back: get_page %d put_page %d", get, put)
	}
	content := e.fake.Content(t, testSource, e.slug(target.ID))
	c, err := gbrain.Decode(content)
	if err != nil || c.Description != "now a gizmo for the shipping team" || c.RecordRevision != 2 {
		t.Fatalf("updated card: %+v %v", c, err)
	}
	if s := e.state(target.ID); s.PageHash != gbrain.ContentHash(content) || s.RecordRevision != 2 {
		t.Fatalf("state after update: %+v", s)
	}
}

func TestForeignEditIsAConflictAndNotOverwritten(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 3)
	p := e.projector()
	e.drain(p)
	a, b := e.record("pkg-0000"), e.record("pkg-0001")

	// a: edited in place (gbraintest Edit), then its project changes.
	e.fake.Edit(t, testSource, e.slug(a.ID), func(pg *gbraintest.Page) {
		pg.Body += "\n\nNote added by a person: do not delete."
	})
	edited := e.fake.Content(t, testSource, e.slug(a.ID))
	writePkg(t, a.Root, "pkg-0000", "changed locally after the edit")
	e.rescan()
	// b: overwritten through GBrain by someone else (a human note).
	human := "---\ntype: note\ntitle: Billing notes\n---\n\nThis page was rewritten by a person.\n"
	if st := e.fake.Put(t, testSource, e.slug(b.ID), human); st != gbrain.StatusWritten {
		t.Fatalf("foreign put: %s", st)
	}
	humanRead := e.fake.Content(t, testSource, e.slug(b.ID))
	e.enqueue(b.ID)

	e.fake.ResetCalls(t)
	rep := e.drain(p)
	if rep.Conflicts != 2 || rep.Written != 0 {
		t.Fatalf("two foreign edits: %+v", rep)
	}
	if _, put := e.calls(); put != 0 {
		t.Fatalf("a conflicted card must not be written: put_page %d", put)
	}
	if got := e.fake.Content(t, testSource, e.slug(a.ID)); got != edited {
		t.Fatalf("the edited card was overwritten:\n%s", got)
	}
	if got := e.fake.Content(t, testSource, e.slug(b.ID)); got != humanRead {
		t.Fatalf("the person's page was overwritten:\n%s", got)
	}
	st, err := ReadStatus(e.ctx, e.st)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Conflicts) != 2 || st.OutboxDepth != 0 {
		t.Fatalf("status must show both conflicts: %+v", st)
	}
	for _, c := range st.Conflicts {
		if c.ProjectID == b.ID && !strings.Contains(c.Why, "not a cgcat card") {
			t.Fatalf("b's conflict: %s", c.Why)
		}
		if c.ProjectID == a.ID && !strings.Contains(c.Why, "edited in GBrain") {
			t.Fatalf("a's conflict: %s", c.Why)
		}
	}
	// Still conflicted on the next attempt; resolved once the page is gone.
	e.enqueue(a.ID)
	if rep := e.drain(p); rep.Conflicts != 1 {
		t.Fatalf("conflict must persist: %+v", rep)
	}
	e.fake.Edit(t, testSource, e.slug(a.ID), func(pg *gbraintest.Page) { pg.DeletedAt = "2026-01-01T00:00:00.000Z" })
	e.enqueue(a.ID)
	if rep := e.drain(p); rep.Written != 1 {
		t.Fatalf("after the person deleted the page the card is written again: %+v", rep)
	}
	if s := e.state(a.ID); s.Conflict != nil {
		t.Fatalf("conflict not cleared: %+v", s)
	}
}

func TestAmbiguousPutAfterApplyIsNotRewrittenBlindly(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 2)
	p := e.projector()
	p.InFlight = 1 // one drop per card (two in flight would share one)
	e.fake.SetControl(t, gbraintest.Control{DropAfterApply: []string{"put_page"}})
	e.fake.ResetCalls(t)
	rep := e.drain(p)
	if rep.Adopted != 2 || rep.Written != 0 || rep.Remaining != 0 {
		t.Fatalf("writes that landed before the connection dropped: %+v", rep)
	}
	if _, put := e.calls(); put != 2 {
		t.Fatalf("each card must be put once (read back, not retried): put_page %d", put)
	}
	if e.conn.Dials() < 3 {
		t.Fatalf("each drop needs a new connection; dials %d", e.conn.Dials())
	}
	for _, r := range e.records() {
		content := e.fake.Content(t, testSource, e.slug(r.ID))
		if s := e.state(r.ID); s == nil || s.PageHash != gbrain.ContentHash(content) {
			t.Fatalf("state of %s is not consistent with the page: %+v", r.ID, s)
		}
	}
	// Consistent: re-queued, each costs one read and no write.
	e.fake.SetControl(t, gbraintest.Control{})
	e.enqueue(e.records()[0].ID, e.records()[1].ID)
	e.fake.ResetCalls(t)
	if rep := e.drain(p); rep.Unchanged != 2 {
		t.Fatalf("after adoption: %+v", rep)
	}
	if get, put := e.calls(); get != 2 || put != 0 {
		t.Fatalf("after adoption get_page %d put_page %d", get, put)
	}
	if got := e.listed(); len(got) != 2 {
		t.Fatalf("cards: %v", got)
	}
}

func TestDroppedBeforeApplyKeepsTheRow(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	p := e.projector()
	p.MaxAmbiguous = 2
	e.fake.SetControl(t, gbraintest.Control{DropBeforeApply: []string{"put_page"}})
	rep, err := p.Drain(e.ctx)
	if err == nil || !gbrain.IsAmbiguous(err) {
		t.Fatalf("a put that never lands must stop the drain as ambiguous: %v %+v", err, rep)
	}
	if e.depth() != 1 {
		t.Fatal("the row must stay in the outbox")
	}
	if got := e.listed(); len(got) != 0 {
		t.Fatalf("nothing landed, yet: %v", got)
	}
	e.fake.SetControl(t, gbraintest.Control{})
	if rep := e.drain(p); rep.Written != 1 {
		t.Fatalf("once GBrain behaves the card is written: %+v", rep)
	}
}

func TestGBrainDownKeepsTheOutbox(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 3)
	e.fake.SetControl(t, gbraintest.Control{ExitAtStart: "crash"})
	p := e.projector()
	rep, err := p.Drain(e.ctx)
	if err == nil {
		t.Fatalf("drain with GBrain down: %+v", rep)
	}
	if e.depth() != 3 || rep.Rows != 0 {
		t.Fatalf("nothing may be lost: depth %d report %+v", e.depth(), rep)
	}
	st, _ := ReadStatus(e.ctx, e.st)
	if len(st.PendingErrors) == 0 {
		t.Fatalf("the failure should be noted on the row: %+v", st)
	}
	e.fake.SetControl(t, gbraintest.Control{})
	if rep := e.drain(p); rep.Written != 3 {
		t.Fatalf("after GBrain is back: %+v", rep)
	}
}

func TestDenyRootIsNeverProjected(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 3, "p0001")
	denied := e.record("pkg-0001")
	p := e.projector()
	e.fake.ResetCalls(t)
	rep := e.drain(p)
	if rep.Written != 2 || rep.NotShared != 1 || rep.Remaining != 0 {
		t.Fatalf("deny root: %+v", rep)
	}
	if get, put := e.calls(); get != 4 || put != 2 {
		t.Fatalf("the denied project must cost no call at all: get_page %d put_page %d", get, put)
	}
	if pg := e.fake.Page(t, testSource, e.slug(denied.ID)); pg != nil {
		t.Fatalf("a denied project's card reached GBrain: %+v", pg)
	}
	// Reconcile neither queues it nor lists it as missing.
	rr, err := p.Reconcile(e.ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if rr.Enqueued != 0 || rr.Local != 2 || rr.Missing != 0 {
		t.Fatalf("reconcile with a deny root: %+v", rr)
	}
	// Dry run: says skip, sends nothing for it.
	e.enqueue(denied.ID)
	e.fake.ResetCalls(t)
	plan, err := p.Plan(e.ctx)
	if err != nil || len(plan) != 1 || plan[0].Action != NotShared {
		t.Fatalf("plan: %+v %v", plan, err)
	}
	if get, put := e.calls(); get != 0 || put != 0 {
		t.Fatalf("dry run of a denied project made calls: %d %d", get, put)
	}
}

func TestReferenceOnlyByDefaultLocalPathsOnRequest(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	p := e.projector()
	e.drain(p)
	r := e.records()[0]
	content := e.fake.Content(t, testSource, e.slug(r.ID))
	if strings.Contains(content, filepath.Dir(r.Root)) {
		t.Fatalf("a reference-only card carries the path:\n%s", content)
	}
	p.set.Projection = gbrain.ProjectionLocalPaths
	e.enqueue(r.ID)
	if rep := e.drain(p); rep.Written != 1 {
		t.Fatalf("local-paths: %+v", rep)
	}
	c, err := gbrain.Decode(e.fake.Content(t, testSource, e.slug(r.ID)))
	if err != nil || c.Path != r.Root {
		t.Fatalf("local-paths card: %+v %v", c, err)
	}
}

func TestLeaseAndDryRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 2)
	p := e.projector()
	other := NewProjector(e.st, e.pol, e.set, e.conn, nil)
	if err := other.TryAcquire(e.ctx); !errors.Is(err, lease.ErrHeld) {
		t.Fatalf("a second projector must not get the lease: %v", err)
	}
	if _, err := other.Drain(e.ctx); !errors.Is(err, ErrNoLease) {
		t.Fatalf("drain without the lease: %v", err)
	}
	e.fake.ResetCalls(t)
	plan, err := other.Plan(e.ctx)
	if err != nil || len(plan) != 2 || plan[0].Action != Written || plan[0].Detail != "new card" {
		t.Fatalf("plan: %+v %v", plan, err)
	}
	if get, put := e.calls(); get != 2 || put != 0 {
		t.Fatalf("dry run writes nothing: get %d put %d", get, put)
	}
	if e.depth() != 2 || len(e.listed()) != 0 {
		t.Fatal("dry run changed something")
	}
	e.drain(p)
}

func TestUnregisteredSourceWritesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 2)
	e.conn = e.newConn(gbrain.Options{ExpectedSource: "not-registered"})
	p := e.projector()
	rep, err := p.Drain(e.ctx)
	if !errors.Is(err, gbrain.ErrSourceMissing) || rep.Rows != 0 {
		t.Fatalf("an unregistered source must stop the drain before any write: %v %+v", err, rep)
	}
	if c := e.fake.Calls(t); c["put_page"] != 0 || c["get_page"] != 0 {
		t.Fatalf("calls with an unregistered source: %v", c)
	}
	if e.depth() != 2 {
		t.Fatal("the cards must wait")
	}
}

// lateOwnWrite writes a's card twice (two metadata versions), then puts the
// first version back as GBrain does when it applies a write after cgcat
// gave up waiting for it (the fake's delayed calls land the same way).
func lateOwnWrite(t *testing.T, e *env, p *Projector, a *local.Project) {
	t.Helper()
	first := e.fake.Content(t, testSource, e.slug(a.ID))
	writePkg(t, a.Root, a.Meta.Name, "second version of the description")
	e.rescan()
	if rep := e.drain(p); rep.Written != 1 {
		t.Fatalf("second version: %+v", rep)
	}
	if st := e.fake.Put(t, testSource, e.slug(a.ID), first); st != gbrain.StatusWritten {
		t.Fatalf("late put: %s", st)
	}
}

// An earlier write of cgcat's own that lands late is cgcat's, not a
// person's edit: the next version overwrites it. (Found chasing the
// lifecycle test's seed 892282670, step 734, where a denied project's card
// stayed in GBrain through six settles.)
func TestLateOwnWriteIsOverwrittenNotAConflict(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 2)
	p := e.projector()
	e.drain(p)
	a := e.record("pkg-0000")
	lateOwnWrite(t, e, p, a)
	writePkg(t, a.Root, "pkg-0000", "third version of the description")
	e.rescan()
	if rep := e.drain(p); rep.Written != 1 || rep.Conflicts != 0 {
		t.Fatalf("after a late write of cgcat's own: %+v (state %+v)", rep, e.state(a.ID))
	}
	c, err := gbrain.Decode(e.fake.Content(t, testSource, e.slug(a.ID)))
	if err != nil || c.Description != "third version of the description" {
		t.Fatalf("card: %+v %v", c, err)
	}
}

// ... and when the project is hidden, its card is retracted (R40) instead of
// staying in GBrain, name and description included, as a "conflict".
func TestLateOwnWriteOfAHiddenProjectIsRetracted(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 2)
	p := e.projector()
	pol := e.pol
	p.pol = policyFunc(func() catalog.Policy { return pol })
	e.drain(p)
	a := e.record("pkg-0000")
	lateOwnWrite(t, e, p, a)
	cfg := *e.cfg
	cfg.Sharing.DenyRoots = []string{a.Root}
	pol = catalog.PolicyFrom(&cfg)
	if sw, err := p.Sweep(e.ctx); err != nil || sw.Retract != 1 {
		t.Fatalf("sweep: %+v %v", sw, err)
	}
	if rep := e.drain(p); rep.Retracted != 1 || rep.Conflicts != 0 {
		t.Fatalf("drain after deny: %+v (state %+v)", rep, e.state(a.ID))
	}
	if pg := e.fake.Page(t, testSource, e.slug(a.ID)); pg == nil || pg.DeletedAt == "" {
		t.Fatalf("the hidden project's card is still in GBrain: %+v", pg)
	}
}

// A put_page that timed out may still land (a slow GBrain applies it after
// cgcat gave up). If the project is hidden before a read confirms the
// write, the retraction must read GBrain and take the card back — not
// decide from "no hash recorded" that no card was ever written.
func TestUnconfirmedWriteOfAHiddenProjectIsRetracted(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	e.conn = e.newConn(gbrain.Options{ExpectedSource: testSource, CallTimeout: 200 * time.Millisecond})
	p := e.projector()
	pol := e.pol
	p.pol = policyFunc(func() catalog.Policy { return pol })
	p.MaxAmbiguous = 1 // give up after the first lost answer
	a := e.records()[0]
	// put_page is held past the client's call timeout, then applied.
	e.fake.SetControl(t, gbraintest.Control{HoldTools: []string{"put_page"}})
	if _, err := p.Drain(e.ctx); err == nil {
		t.Fatal("a put that timed out must leave the row pending")
	}
	e.fake.SetControl(t, gbraintest.Control{})
	for deadline := time.Now().Add(5 * time.Second); e.fake.Page(t, testSource, e.slug(a.ID)) == nil; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the delayed put never landed")
		}
	}
	e.fake.SetControl(t, gbraintest.Control{})
	cfg := *e.cfg
	cfg.Sharing.DenyRoots = []string{a.Root}
	pol = catalog.PolicyFrom(&cfg)
	if rep := e.drain(p); rep.Retracted != 1 {
		t.Fatalf("drain after deny: %+v (state %+v)", rep, e.state(a.ID))
	}
	if pg := e.fake.Page(t, testSource, e.slug(a.ID)); pg == nil || pg.DeletedAt == "" {
		t.Fatalf("the hidden project's card is still in GBrain: %+v", pg)
	}
}
