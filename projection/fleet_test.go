package projection

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cgcat/cgcat/gbrain"
	"github.com/cgcat/cgcat/gbrain/gbraintest"
	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/catalog"
	"github.com/cgcat/cgcat/local/store"
	"github.com/cgcat/cgcat/server"
)

// Several machines on one brain: each env is a machine (its own data dir,
// store and machine id) and they share one fake GBrain.

// anotherMachine is a second machine on e's brain, with n projects of its
// own (named other-NNNN).
func (e *env) anotherMachine(t testing.TB, n int) *env {
	t.Helper()
	o := newEnvWith(t, e.fake, 0)
	for i := range n {
		mkProject(t, filepath.Join(o.root, fmt.Sprintf("q%04d", i)), fmt.Sprintf("other-%04d", i),
			fmt.Sprintf("gadget daemon number %d of the other machine", i), "gadget")
	}
	o.rescan()
	return o
}

// A project moved on machine A (its folder renamed): A's card of the old
// id says missing and moved_to, and machine B shows one candidate — the
// new one, folded from the old — and resolves the old id with movedTo.
func TestMoveIsSeenFromAnotherMachine(t *testing.T) {
	t.Parallel()
	a := newEnv(t, 3)
	pa := a.projector()
	a.drain(pa)
	old := a.record("pkg-0001")
	if err := os.Rename(old.Root, filepath.Join(a.root, "renamed-p0001")); err != nil {
		t.Fatal(err)
	}
	a.rescan()
	var gone, moved *local.Project
	for _, r := range a.records() {
		switch {
		case r.ID == old.ID:
			gone = r
		case filepath.Base(r.Root) == "renamed-p0001":
			moved = r
		}
	}
	if moved == nil {
		t.Fatal("no record at the new root")
	}
	if gone == nil || gone.MovedTo != moved.ID || moved.ID == old.ID {
		t.Fatalf("the move was not recorded on A: old %+v new %s", gone, moved.ID)
	}
	if rep := a.drain(pa); rep.Written != 2 {
		t.Fatalf("A writes the old card (moved) and the new one: %+v", rep)
	}
	c, err := gbrain.Decode(a.fake.Content(t, testSource, a.slug(old.ID)))
	if err != nil || c.Availability != "missing" || c.MovedTo != moved.ID {
		t.Fatalf("the old card in GBrain: %+v %v", c, err)
	}

	b := a.anotherMachine(t, 1)
	pb := b.projector()
	if _, err := pb.RefreshMirror(b.ctx, MirrorOptions{}); err != nil {
		t.Fatal(err)
	}
	on := *b.cfg // GBrain on for B's frontend, no recall
	f := b.frontendWith(&on)
	got, _ := b.search(f, "widget service number 1")
	var hist []shown
	for _, s := range got {
		if s.path == "" {
			hist = append(hist, s)
		}
	}
	if len(hist) == 0 || hist[0].id != moved.ID || !strings.Contains(hist[0].reasons, "moved on its machine from "+old.ID) {
		t.Fatalf("B's candidates: %+v (want %s folded from %s first)", hist, moved.ID, old.ID)
	}
	for _, s := range hist {
		if s.id == old.ID {
			t.Fatalf("the old candidate is shown beside the new one: %+v", hist)
		}
	}
	r, err := f.Resolve(b.ctx, server.ResolveArgs{ProjectID: old.ID})
	if err != nil || len(r.Projects) != 1 || r.Projects[0].MovedTo != moved.ID || !strings.Contains(r.Message, moved.ID) {
		t.Fatalf("B resolves the old id: %+v %v", r, err)
	}
}

// A machine retired from another one: its machine page says so, its
// unedited cards leave GBrain, a person's edit stays; every other machine
// leaves its cards out of search at its next refresh; the retired machine
// writes no card (and says why) until the retirement is undone.
func TestRetireIsSeenFromAnotherMachine(t *testing.T) {
	t.Parallel()
	a := newEnv(t, 3)
	pa := a.projector()
	a.drain(pa)
	edited := a.record("pkg-0002")
	content := a.fake.Content(t, testSource, a.slug(edited.ID))
	a.fake.Put(t, testSource, a.slug(edited.ID), strings.Replace(content, "widget service number 2", "a person's words", 1))
	b := a.anotherMachine(t, 2)
	pb := b.projector()
	b.drain(pb)
	c := a.anotherMachine(t, 0)
	pc := c.projector()
	if _, err := pc.RefreshMirror(c.ctx, MirrorOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := machineRows(c, a.st.MachineID()); n != 3 {
		t.Fatalf("C mirrors %d of A's cards before, want 3", n)
	}

	dry, err := pb.Retire(b.ctx, a.st.MachineID(), false, true)
	if err != nil || dry.Deleted != 2 || len(dry.Edited) != 1 || a.fake.Page(t, testSource, a.slug(a.record("pkg-0000").ID)).DeletedAt != "" {
		t.Fatalf("dry run: %+v %v", dry, err)
	}
	rep, err := pb.Retire(b.ctx, a.st.MachineID(), false, false)
	if err != nil || rep.Deleted != 2 || len(rep.Edited) != 1 {
		t.Fatalf("retire: %+v %v", rep, err)
	}
	if pg := a.fake.Page(t, testSource, a.slug(edited.ID)); pg == nil || pg.DeletedAt != "" {
		t.Fatal("a card a person edited was deleted")
	}
	if _, err := pb.Retire(b.ctx, b.st.MachineID(), false, false); err == nil {
		t.Fatal("a machine retired itself")
	}

	// C sees it at its next refresh, incremental: the machine page moved.
	mrep, err := pc.RefreshMirror(c.ctx, MirrorOptions{})
	if err != nil || mrep.Full || mrep.Retired != 1 {
		t.Fatalf("C's refresh: %+v %v", mrep, err)
	}
	if n := machineRows(c, a.st.MachineID()); n != 0 {
		t.Fatalf("C still mirrors %d of the retired machine's cards", n)
	}
	on := *c.cfg
	got, _ := c.search(c.frontendWith(&on), "widget")
	if len(got) != 0 {
		t.Fatalf("C's search shows the retired machine's projects: %+v", got)
	}

	// A writes nothing while retired, and says why.
	if _, err := pa.RefreshMirror(a.ctx, MirrorOptions{}); err != nil {
		t.Fatal(err)
	}
	a.enqueue(a.record("pkg-0000").ID)
	if _, err := pa.Drain(a.ctx); !errors.Is(err, ErrRetired) || !strings.Contains(err.Error(), "--undo") {
		t.Fatalf("the retired machine's drain: %v", err)
	}
	if err := pa.Heartbeat(a.ctx); !errors.Is(err, ErrRetired) {
		t.Fatalf("a heartbeat undid the retirement: %v", err)
	}
	if _, err := pa.Retire(a.ctx, a.st.MachineID(), true, false); err != nil {
		t.Fatal(err)
	}
	if rep := a.drain(pa); rep.Rows != 1 {
		t.Fatalf("after the undo: %+v", rep)
	}
}

func machineRows(e *env, machine string) int {
	n := 0
	for _, c := range e.mirror() {
		if c.MachineID == machine {
			n++
		}
	}
	return n
}

// A machine silent longer than staleMachineDays: its cards are marked
// stale in every answer, never deleted; a heartbeat of it clears the mark.
func TestStaleMachineIsMarkedNotDeleted(t *testing.T) {
	t.Parallel()
	a := newEnv(t, 2)
	pa := a.projector()
	a.drain(pa)
	b := a.anotherMachine(t, 0)
	b.set.StaleMachineDays = 30
	pb := b.projector()
	long := time.Now().Add(-40 * 24 * time.Hour).UTC()
	for _, r := range a.records() {
		a.fake.Edit(t, testSource, a.slug(r.ID), func(p *gbraintest.Page) {
			p.UpdatedAt, p.UpdatedMicro = long.Format("2006-01-02T15:04:05.000Z"), long.UnixMicro()
		})
	}
	rep, err := pb.RefreshMirror(b.ctx, MirrorOptions{})
	if err != nil || rep.Stale != 1 {
		t.Fatalf("B's refresh: %+v %v", rep, err)
	}
	for _, c := range b.mirror() {
		if c.StaleSince != long.Format("2006-01-02") {
			t.Fatalf("a card of the silent machine: %+v", c)
		}
	}
	on := *b.cfg
	got, _ := b.search(b.frontendWith(&on), "widget")
	if len(got) != 2 || !strings.Contains(got[0].reasons, "stale: machine "+a.st.MachineID()) {
		t.Fatalf("B's answers: %+v", got)
	}
	for _, r := range a.records() {
		if pg := a.fake.Page(t, testSource, a.slug(r.ID)); pg == nil || pg.DeletedAt != "" {
			t.Fatal("a stale machine's card was deleted")
		}
	}
	// A is back: its heartbeat (machine page) reaches B's next refresh.
	if err := pa.Heartbeat(a.ctx); err != nil {
		t.Fatal(err)
	}
	if rep, err := pb.RefreshMirror(b.ctx, MirrorOptions{}); err != nil || rep.Stale != 0 || rep.Full {
		t.Fatalf("B's refresh after A's heartbeat: %+v %v", rep, err)
	}
	for _, c := range b.mirror() {
		if c.StaleSince != "" {
			t.Fatalf("still stale after a heartbeat: %+v", c)
		}
	}
}

// The mirror refresh costs what changed: with 300 cards of other machines
// mirrored, an idle refresh is two list_pages calls and no read; five
// changed cards cost five reads; only a full refresh lists everything.
func TestMirrorRefreshCostsWhatChanged(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0)
	pages := map[string]string{}
	for i := range 300 {
		id := fmt.Sprintf("cg_%016d", i)
		pages[e.slug(id)] = otherCard(t, id, "m_other", fmt.Sprintf("svc-%03d", i), "a service", false)
	}
	e.fake.PutMany(t, testSource, pages)
	p := e.projector()
	if rep := e.refresh(p); !rep.Full || rep.Read != 300 {
		t.Fatalf("the first refresh: %+v", rep)
	}
	// Older than the margin: an idle refresh must not list them again.
	aged := time.Now().Add(-time.Hour).UTC()
	for slug := range pages {
		e.fake.Edit(t, testSource, slug, func(pg *gbraintest.Page) {
			pg.UpdatedAt, pg.UpdatedMicro = aged.Format("2006-01-02T15:04:05.000Z"), aged.UnixMicro()
		})
	}
	if rep, err := p.RefreshMirror(e.ctx, MirrorOptions{Full: true}); err != nil || rep.Read != 300 {
		t.Fatalf("a full refresh after the pages moved: %+v %v", rep, err)
	}
	e.fake.ResetCalls(t)
	if rep := e.refresh(p); rep.Full || rep.Read != 0 || rep.Listed != 0 {
		t.Fatalf("an idle refresh: %+v", rep)
	}
	if c := e.fake.Calls(t); c["list_pages"] != 2 || c["get_page"] != 0 {
		t.Fatalf("an idle refresh made %v (want two list_pages)", c)
	}
	for i := range 5 {
		id := fmt.Sprintf("cg_%016d", i*7)
		e.fake.Put(t, testSource, e.slug(id), otherCard(t, id, "m_other", "renamed", "changed", false))
	}
	e.fake.ResetCalls(t)
	if rep := e.refresh(p); rep.Read != 5 || rep.Written != 5 {
		t.Fatalf("five changes: %+v", rep)
	}
	if c := e.fake.Calls(t); c["list_pages"] != 2 || c["get_page"] != 5 {
		t.Fatalf("five changes made %v", c)
	}
	e.fake.ResetCalls(t)
	if rep, err := p.RefreshMirror(e.ctx, MirrorOptions{FullEvery: time.Nanosecond}); err != nil || !rep.Full || rep.Listed != 300 || rep.Read != 0 {
		t.Fatalf("a refresh past FullEvery: %+v %v", rep, err)
	}
}

// busy keeps the CPU busy (two loops a core) until stop is called.
func busy() (stop func()) {
	var done atomic.Bool
	var wg sync.WaitGroup
	for range 2 * runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x := 0
			for !done.Load() {
				for i := range 100000 {
					x += i
				}
			}
			_ = x
		}()
	}
	return func() { done.Store(true); wg.Wait() }
}

// A catalog lost on a busy machine whose brain holds hundreds of other
// machines' cards: recovery reads this machine's cards (listed by its
// tag) and no other machine's, with no time budget; every id comes back
// and no card is written twice.
func TestLostCatalogUnderContentionWithForeignCards(t *testing.T) {
	for _, overHTTP := range []bool{false, true} {
		t.Run(fmt.Sprintf("http=%v", overHTTP), func(t *testing.T) {
			t.Parallel()
			lostCatalogUnderContention(t, overHTTP)
		})
	}
}

func lostCatalogUnderContention(t *testing.T, overHTTP bool) {
	const n = 40
	e := newEnv(t, n)
	if overHTTP {
		e.overHTTP(gbraintest.HTTPOptions{}, testSource)
	}
	pages := map[string]string{}
	for i := range 400 {
		id := fmt.Sprintf("cg_%016d", i)
		pages[e.slug(id)] = otherCard(t, id, fmt.Sprintf("m_other%d", i%7), fmt.Sprintf("svc-%03d", i), "another machine's service", false)
	}
	e.fake.PutMany(t, testSource, pages)
	p := e.projector()
	e.drain(p)
	before := map[string]string{}
	for _, r := range e.records() {
		before[r.Root] = r.ID
	}
	p.Release()
	e.loseCatalog()
	stop := busy()
	defer stop()
	e.fake.SetControl(t, gbraintest.Control{DelayMs: 5, DelayTools: []string{"get_page"}})
	e.fake.ResetCalls(t)
	p = e.projector()
	rs, err := p.Recover(e.ctx, nil)
	stop()
	e.fake.SetControl(t, gbraintest.Control{})
	if err != nil || !rs.Done || !rs.Fresh || rs.Own != n || rs.Old != 0 {
		t.Fatalf("recovery: %+v %v", rs, err)
	}
	if c := e.fake.Calls(t); c["get_page"] != n {
		t.Fatalf("recovery read %d pages for %d own cards among 400 others", c["get_page"], n)
	}
	e.rescan()
	for _, r := range e.records() {
		if before[r.Root] != r.ID {
			t.Fatalf("%s came back as %s, not %s", r.Root, r.ID, before[r.Root])
		}
	}
	e.fake.ResetCalls(t)
	rep := e.drain(p)
	if rep.Written != 0 || rep.Conflicts != 0 || rep.Rows != n {
		t.Fatalf("the drain after the recovery: %+v", rep)
	}
	if got := len(e.listed()); got != n+400 {
		t.Fatalf("%d cards for %d + 400 projects", got, n)
	}
}

// GBrain unreachable when a lost catalog is scanned: the ids are pending,
// no card is written (nothing could be duplicated), and once GBrain
// answers the cards that named the roots are taken back — none stays as a
// duplicate — and said so.
func TestLostCatalogWithGBrainDownKeepsCardsUntilSettled(t *testing.T) {
	t.Parallel()
	const n = 3
	e := newEnv(t, n)
	p := e.projector()
	e.drain(p)
	p.Release()
	e.loseCatalog()
	e.fake.SetControl(t, gbraintest.Control{ExitAtStart: "crash"})
	p = e.projector()
	if _, err := p.prime(e.ctx, nil); err == nil {
		t.Fatal("recovery with GBrain down must fail")
	}
	e.rescan()
	rs, err := ReadRecovery(e.ctx, e.st)
	if err != nil || !rs.Blocks() || rs.Pending != n || !strings.Contains(rs.PendingError().Error(), fmt.Sprintf("%d project ids", n)) {
		t.Fatalf("pending: %+v %v", rs, err)
	}
	e.fake.SetControl(t, gbraintest.Control{})
	e.fake.ResetCalls(t)
	if _, err := p.Drain(e.ctx); !errors.Is(err, ErrIDsPending) {
		t.Fatalf("a drain with ids pending: %v", err)
	}
	if c := e.fake.Calls(t); c["put_page"] != 0 {
		t.Fatalf("a card was written with ids pending: %v", c)
	}
	rs, err = p.Recover(e.ctx, nil)
	if err != nil || !rs.Done || len(rs.NotTakenBack) != n {
		t.Fatalf("settling: %+v %v", rs, err)
	}
	e.drain(p)
	if got := len(e.listed()); got != n {
		t.Fatalf("%d cards for %d projects after settling", got, n)
	}
}

// The whole data dir lost (identity file and all) on the same machine and
// user: the identity comes back from outside the data dir, recovery reads
// this machine's cards, every id comes back and no card is written.
func TestWholeDataDirLost(t *testing.T) {
	t.Setenv(store.IdentityDirEnv, filepath.Join(t.TempDir(), "identities"))
	t.Setenv(store.OSMachineIDEnv, "machine-under-test")
	const n = 5
	e := newEnv(t, n)
	me := e.st.MachineID()
	p := e.projector()
	e.drain(p)
	// One project's metadata changed once: its record revision is 2.
	writePkg(t, e.record("pkg-0003").Root, "pkg-0003", "words written later")
	e.rescan()
	e.drain(p)
	before, revs := map[string]string{}, map[string]uint64{}
	for _, r := range e.records() {
		before[r.Root], revs[r.Root] = r.ID, r.RecordRevision
	}
	if revs[e.record("pkg-0003").Root] != 2 {
		t.Fatalf("revision before: %v", revs)
	}
	p.Release()
	if err := os.RemoveAll(e.cfg.DataDir); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(e.ctx, e.cfg.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	e.st, e.set = st, SettingsFrom(e.cfg, st)
	if st.MachineID() != me || !st.Identity().Restored {
		t.Fatalf("machine id after losing the data dir: %s, want %s", st.MachineID(), me)
	}
	e.conn = e.newConn(e.opts)
	p = e.projector()
	if rs, err := p.Recover(e.ctx, nil); err != nil || rs.Own != n {
		t.Fatalf("recovery: %+v %v", rs, err)
	}
	e.rescan()
	for _, r := range e.records() {
		if before[r.Root] != r.ID {
			t.Fatalf("%s came back as %s, not %s", r.Root, r.ID, before[r.Root])
		}
		if r.RecordRevision < revs[r.Root] {
			t.Fatalf("%s: record revision went back from %d to %d", r.Meta.Name, revs[r.Root], r.RecordRevision)
		}
	}
	e.fake.ResetCalls(t)
	if rep := e.drain(p); rep.Written != 0 || rep.Rows != n {
		t.Fatalf("drain after the data dir came back: %+v", rep)
	}
	if got := len(e.listed()); got != n {
		t.Fatalf("%d cards for %d projects", got, n)
	}
}

// Recall works in every serve of a data dir, with the projector lease or
// without it, over stdio (the in-process fake stands for a child) and over
// HTTP: each recalls over a connection of its own, and two answers given
// at the same moment say the same gbrainState.
func TestRecallWithAndWithoutTheLease(t *testing.T) {
	for _, overHTTP := range []bool{false, true} {
		t.Run(fmt.Sprintf("http=%v", overHTTP), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, 3)
			if overHTTP {
				e.overHTTP(gbraintest.HTTPOptions{}, testSource)
			}
			e.cfg.GBrain.SemanticSearch = true
			p := e.projector()
			e.drain(p)
			p.Release()
			ctx, cancel := context.WithCancel(e.ctx)
			defer cancel()
			holder := StartWith(ctx, e.cfg, e.st, e.pol, nil, e.service(fastService()))
			waitFor(t, "the projector lease", 15*time.Second, func() bool { return holder.Status().Projecting })
			other := StartWith(ctx, e.cfg, e.st, e.pol, nil, e.service(fastService()))
			fh, fo := e.frontend(holder.Recall(), 2*time.Second), e.frontend(other.Recall(), 2*time.Second)
			// "reference" is only in the cards' bodies: what a search
			// finds of it, recall found.
			recalled := func(f *server.Frontend) bool {
				got, _ := e.search(f, "reference")
				return len(got) == 3 && strings.Contains(got[0].reasons, "GBrain recall")
			}
			waitFor(t, "recall in the serve without the lease", 15*time.Second, func() bool { return recalled(fo) })
			waitFor(t, "recall in the serve with the lease", 15*time.Second, func() bool { return recalled(fh) })
			if other.Status().Projecting {
				t.Fatal("both services hold the projector lease")
			}
			for range 5 {
				_, sh := e.search(fh, "widget")
				_, so := e.search(fo, "widget")
				if sh != server.GBrainOK || so != server.GBrainOK {
					t.Fatalf("gbrainState with and without the lease: %s, %s (want ok on both)", sh, so)
				}
			}
			cancel()
			<-holder.Done()
			<-other.Done()
		})
	}
}

// A card taken back on its machine (the project hidden there) leaves every
// other machine's mirror at its next refresh, however incremental: a soft
// delete does not move updated_at, so the machine lists it on its page.
// The same project shared again comes back.
func TestRetractionReachesOtherMachinesAtOnce(t *testing.T) {
	t.Parallel()
	a := newEnv(t, 3)
	pa := a.projector()
	pol := a.pol
	pa.pol = policyFunc(func() catalog.Policy { return pol })
	a.drain(pa)
	b := a.anotherMachine(t, 0)
	pb := b.projector()
	if _, err := pb.RefreshMirror(b.ctx, MirrorOptions{}); err != nil {
		t.Fatal(err)
	}
	hidden := a.record("pkg-0001")
	cfg := *a.cfg
	cfg.Sharing.DenyRoots = []string{hidden.Root}
	pol = catalog.PolicyFrom(&cfg)
	if _, err := pa.Sweep(a.ctx); err != nil {
		t.Fatal(err)
	}
	if rep := a.drain(pa); rep.Retracted != 1 {
		t.Fatalf("A's drain after the deny: %+v", rep)
	}
	rep, err := pb.RefreshMirror(b.ctx, MirrorOptions{})
	if err != nil || rep.Full || rep.Deleted != 1 {
		t.Fatalf("B's incremental refresh after A took a card back: %+v %v", rep, err)
	}
	if _, ok := b.mirror()[a.slug(hidden.ID)]; ok {
		t.Fatal("B still mirrors the card A took back")
	}
	// Shared again: written again, later than the tombstone: it stays.
	pol = a.pol
	if _, err := pa.Sweep(a.ctx); err != nil {
		t.Fatal(err)
	}
	if rep := a.drain(pa); rep.Written != 1 {
		t.Fatalf("A's drain after sharing again: %+v", rep)
	}
	if _, err := pb.RefreshMirror(b.ctx, MirrorOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, ok := b.mirror()[a.slug(hidden.ID)]; !ok {
		t.Fatal("the card written again is not mirrored")
	}
	// A takes another card back: its page (with both tombstones) moves
	// again, and the card written again after its tombstone stays.
	other := a.record("pkg-0002")
	cfg.Sharing.DenyRoots = []string{other.Root}
	pol = catalog.PolicyFrom(&cfg)
	if _, err := pa.Sweep(a.ctx); err != nil {
		t.Fatal(err)
	}
	if rep := a.drain(pa); rep.Retracted != 1 {
		t.Fatalf("A's second deny: %+v", rep)
	}
	if _, err := pb.RefreshMirror(b.ctx, MirrorOptions{}); err != nil {
		t.Fatal(err)
	}
	m := b.mirror()
	if _, ok := m[a.slug(hidden.ID)]; !ok {
		t.Fatal("an old tombstone took the card written again after it")
	}
	if _, ok := m[a.slug(other.ID)]; ok {
		t.Fatal("B still mirrors the second card A took back")
	}
}

// A machine id made just now cannot be named by any card: its recovery is
// done at once, without a GBrain call.
func TestRecoveryOfANewMachineCostsNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 2)
	if !e.st.Identity().New {
		t.Fatal("the env's identity should be new")
	}
	p := e.projector()
	e.fake.ResetCalls(t)
	rs, err := p.Recover(e.ctx, nil)
	if err != nil || !rs.Done {
		t.Fatalf("recovery: %+v %v", rs, err)
	}
	if c := e.fake.Calls(t); len(c) != 0 {
		t.Fatalf("a new machine's recovery called GBrain: %v", c)
	}
}

// A catalog that binds its projects already (an upgrade, or GBrain turned
// on later) reads nothing to recover: once a full refresh made the mirror
// complete, this machine's duplicate cards of its roots (left by an older
// lost catalog) are taken back.
func TestRecoveryOfAnUpgradedStoreSettlesDuplicates(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 2)
	p := e.projector()
	e.drain(p)
	rec := e.record("pkg-0000")
	dup := "cg_aaaaaaaaaaaaaaaa" // an id an older catalog gave the same root
	card := CardOf(rec, e.set)
	card.ProjectID = dup
	content, err := gbrain.Encode(card, gbrain.EncodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.fake.Put(t, testSource, e.slug(dup), content)
	p.Release()
	// Another process: the identity is read from its file, not new.
	st, err := store.Open(e.ctx, e.cfg.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	e.st = st
	p = e.projector()
	if rs, err := p.Recover(e.ctx, nil); err != nil || rs.Done {
		t.Fatalf("recovery before the mirror is complete: %+v %v", rs, err)
	}
	if _, err := p.RefreshMirror(e.ctx, MirrorOptions{}); err != nil {
		t.Fatal(err)
	}
	rs, err := p.Recover(e.ctx, nil)
	if err != nil || !rs.Done || len(rs.NotTakenBack) != 1 || rs.NotTakenBack[0].ProjectID != dup {
		t.Fatalf("recovery after a full refresh: %+v %v", rs, err)
	}
	if rep := e.drain(p); rep.Retracted != 1 {
		t.Fatalf("the duplicate was not taken back: %+v", rep)
	}
	if got := len(e.listed()); got != 2 {
		t.Fatalf("%d cards for 2 projects", got)
	}
}
