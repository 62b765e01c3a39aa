package projection

import (
	"testing"

	"github.com/cgcat/cgcat/gbrain"
	"github.com/cgcat/cgcat/gbrain/gbraintest"
	"github.com/cgcat/cgcat/local/store"
)

func TestReconcilePagesShiftsAndRequeues(t *testing.T) {
	t.Parallel()
	const n = 25
	e := newEnv(t, n)
	p := e.projector()
	p.listLimit = 10 // three list pages and more (GBrain's real page is 100)
	if rep := e.drain(p); rep.Written != n {
		t.Fatalf("first sync: %+v", rep)
	}
	recs := e.records()
	gone, stale := recs[7], recs[18]
	// A card deleted behind our back, a record whose state went stale, and
	// an orphan that sorts first.
	e.fake.Edit(t, testSource, e.slug(gone.ID), func(pg *gbraintest.Page) { pg.DeletedAt = "2026-01-01T00:00:00.000Z" })
	if err := e.st.Update(e.ctx, func(tx *store.Tx) error {
		s, _ := readState(tx, stale.ID)
		s.RecordRevision = 0
		putState(tx, stale.ID, s)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	orphan := "cg_2222222222222222"
	oc, _ := gbrain.Encode(gbrain.Card{ProjectID: orphan, MachineID: "m_elsewhere", Name: "elsewhere"}, gbrain.EncodeOptions{})

	// Pages shift during the enumeration: a card appears before the offset
	// while the second page is being read.
	shifted := false
	p.listHook = func(offset int) {
		if offset > 0 && !shifted {
			shifted = true
			e.fake.Put(t, testSource, e.slug(orphan), oc)
		}
	}
	e.fake.ResetCalls(t)
	rr, err := p.Reconcile(e.ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if rr.Rescans < 1 {
		t.Fatalf("the shift was not noticed: %+v", rr)
	}
	if rr.Cards != n-1+1 || rr.Local != n || rr.Missing != 1 || rr.Stale != 1 || rr.Enqueued != 2 {
		t.Fatalf("reconcile: cards %d local %d missing %d stale %d enqueued %d", rr.Cards, rr.Local, rr.Missing, rr.Stale, rr.Enqueued)
	}
	// Another machine's card is never an orphan; not mirrored yet, it is
	// read once to tell whose it is.
	if rr.OrphanCount != 0 || rr.OtherMachines != 1 {
		t.Fatalf("orphans: %+v, other machines %d", rr.Orphans, rr.OtherMachines)
	}
	if c := e.fake.Calls(t); c["get_page"] != 1 || c["put_page"] != 0 || c["list_pages"] < 4 {
		t.Fatalf("reconcile lists, and reads only the unmirrored card of an unbound id: %v", c)
	}
	if e.depth() != 2 {
		t.Fatalf("queued: %d", e.depth())
	}
	rep := e.drain(p)
	if rep.Written != 1 || rep.Unchanged != 1 {
		t.Fatalf("drain after reconcile: %+v", rep)
	}
	got := e.listed()
	if len(got) != n+1 {
		t.Fatalf("after reconcile %d cards listed, want %d + the orphan", len(got), n)
	}
	seen := map[string]bool{}
	for _, s := range got {
		if seen[s] {
			t.Fatalf("duplicate card %s", s)
		}
		seen[s] = true
	}
	// Dry run writes nothing and queues nothing.
	p.listHook = nil
	e.fake.Edit(t, testSource, e.slug(gone.ID), func(pg *gbraintest.Page) { pg.DeletedAt = "2026-01-01T00:00:00.000Z" })
	rr, err = p.Reconcile(e.ctx, true)
	if err != nil || rr.Missing != 1 || e.depth() != 0 {
		t.Fatalf("dry-run reconcile: %+v %v depth %d", rr, err, e.depth())
	}
	st, _ := ReadStatus(e.ctx, e.st)
	if st.LastReconcile == nil || st.LastReconcile.DryRun || st.LastReconcile.OtherMachines != 1 {
		t.Fatalf("the last real reconcile is kept for status: %+v", st.LastReconcile)
	}
}
