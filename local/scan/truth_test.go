package scan

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/meta"
	"github.com/cgcat/cgcat/local/pathid"
	"github.com/cgcat/cgcat/local/store"
)

// A directory not entered because of maxDepth is a gap that names the
// setting; the root is not complete.
func TestDepthLimitIsAGap(t *testing.T) {
	root := canon(t, t.TempDir())
	mkProject(t, filepath.Join(root, "a", "b", "shallow"))
	mkProject(t, filepath.Join(root, "a", "b", "c", "deep"))
	st := newStore(t)
	opt := testOptions(root)
	opt.MaxDepth = 3
	recs := scanAll(t, st, opt)
	if _, ok := recs[filepath.Join(root, "a", "b", "c", "deep")]; ok {
		t.Fatal("a project below maxDepth was found: the fixture proves nothing")
	}
	c := covOf(readStateT(t, st))
	if c.Coverage != CoveragePartial || c.GapCount == 0 {
		t.Fatalf("a depth limit must be a gap: %+v", c)
	}
	g := c.Gaps[0]
	if g.Kind != local.GapDepth || !strings.Contains(g.Why, "maxDepth 3") || g.Path != filepath.Join(root, "a", "b", "c") {
		t.Fatalf("gap %+v must name maxDepth 3 at a/b/c", g)
	}
	// Deep enough: no gap, and the project is found.
	opt.MaxDepth = 6
	recs = scanAll(t, st, opt)
	if _, ok := recs[filepath.Join(root, "a", "b", "c", "deep")]; !ok {
		t.Fatal("raising maxDepth did not find the deep project")
	}
	if c := covOf(readStateT(t, st)); c.Coverage != CoverageComplete {
		t.Fatalf("coverage after raising maxDepth: %+v", c)
	}
}

// A root added while a pass runs joins it: the pass finishes only after
// walking the new root, and both roots are covered.
func TestRootAddedJoinsRunningPass(t *testing.T) {
	base := canon(t, t.TempDir())
	a, b := filepath.Join(base, "a"), filepath.Join(base, "b")
	for i := 0; i < 5; i++ {
		mkProject(t, filepath.Join(a, "p"+string(rune('0'+i))))
	}
	mkProject(t, filepath.Join(b, "new"))
	st := newStore(t)
	ctx := context.Background()
	opt := testOptions(a)
	opt.SliceDirs = 2
	s, err := Start(ctx, st, opt)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.RunSlice(ctx, 2, time.Now().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	opt.Roots = []string{a, b}
	recs := scanAll(t, st, opt)
	if _, ok := recs[filepath.Join(b, "new")]; !ok {
		t.Fatal("the added root was not walked")
	}
	state := readStateT(t, st)
	for _, r := range []string{a, b} {
		if rc := state.Roots[pathid.Key(r)]; rc.Completed.IsZero() {
			t.Fatalf("root %s not covered: %+v", r, state.Roots)
		}
	}
}

// A moved index: the old record goes missing with movedTo naming the new
// record (a new id); an unmoved project keeps its id.
func TestMovedProjectPointsToItsNewRecord(t *testing.T) {
	root := canon(t, t.TempDir())
	from := filepath.Join(root, "go", "snappy")
	stay := filepath.Join(root, "go", "uuid")
	mkProject(t, from)
	mkProject(t, stay)
	write(t, filepath.Join(from, "go.mod"), "module github.com/golang/snappy\n")
	st := newStore(t)
	first := scanAll(t, st, testOptions(root))
	old := first[from]
	if old.DBID == "" || len(old.Lineage) == 0 {
		t.Fatalf("identity not recorded: dbId=%q lineage=%v", old.DBID, old.Lineage)
	}
	to := filepath.Join(root, "go", "compress", "snappy")
	os.MkdirAll(filepath.Dir(to), 0o755)
	if err := os.Rename(from, to); err != nil {
		t.Fatal(err)
	}
	after := scanAll(t, st, testOptions(root))
	moved, was := after[to], after[from]
	if moved == nil || moved.ID == old.ID {
		t.Fatalf("the moved project must be a new record: %+v", moved)
	}
	if was.ID != old.ID || was.Availability != local.Missing || was.MovedTo != moved.ID || was.MissingSince.IsZero() {
		t.Fatalf("old record: availability=%s movedTo=%q (want %s) missingSince=%v", was.Availability, was.MovedTo, moved.ID, was.MissingSince)
	}
	if after[stay].ID != first[stay].ID {
		t.Fatal("an unmoved project changed its id")
	}
	// Moved back: the old record is present again, movedTo cleared.
	if err := os.Rename(to, from); err != nil {
		t.Fatal(err)
	}
	back := scanAll(t, st, testOptions(root))
	if b := back[from]; b.ID != old.ID || b.Availability != local.Present || b.MovedTo != "" || !b.MissingSince.IsZero() {
		t.Fatalf("moved back: %+v", b)
	}
}

// A manifest edited after the walk passed its project (or before a crash
// that the pass resumed from) is read again when the pass ends.
func TestEditDuringPassIsReadAtItsEnd(t *testing.T) {
	// The root itself is the project: the first directory any walk reads,
	// whatever order the file system lists names in.
	root := canon(t, t.TempDir())
	p := root
	mkProject(t, p)
	write(t, filepath.Join(p, "package.json"), `{"name":"svc","description":"first words"}`)
	for i := 0; i < 30; i++ {
		os.MkdirAll(filepath.Join(root, "z", "d"+string(rune('a'+i%26))+string(rune('a'+i/26))), 0o755)
	}
	st := newStore(t)
	ctx := context.Background()
	opt := testOptions(root)
	opt.SliceDirs = 1
	s, err := Start(ctx, st, opt)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.RunSlice(ctx, 1, time.Now().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if got := records(t, st)[p].Meta.Description; got != "first words" {
		t.Fatalf("fixture: %q", got)
	}
	s.Close() // a crash: the pass is left unfinished
	time.Sleep(10 * time.Millisecond)
	write(t, filepath.Join(p, "package.json"), `{"name":"svc","description":"second words, longer"}`)
	before := readStateT(t, st)
	recs := scanAll(t, st, opt) // resumes the pass; the walk never returns to svc
	if after := readStateT(t, st); after.Pass != before.Pass || !before.PassRunning {
		t.Fatalf("fixture: the pass was not resumed (pass %d running=%v → pass %d)", before.Pass, before.PassRunning, after.Pass)
	}
	if got := recs[p]; got.Meta.Description != "second words, longer" || got.RecordRevision != 2 {
		t.Fatalf("after the pass: %q rev %d, want the edit and revision 2", got.Meta.Description, got.RecordRevision)
	}
}

// An unchanged project is not read again: its stamp holds.
func TestUnchangedProjectIsNotReadAgain(t *testing.T) {
	noRacyStamps(t) // the files were all just made
	root := canon(t, t.TempDir())
	p := filepath.Join(root, "svc")
	mkProject(t, p)
	write(t, filepath.Join(p, "package.json"), `{"name":"svc"}`)
	st := newStore(t)
	first := scanAll(t, st, testOptions(root))[p]
	second := scanAll(t, st, testOptions(root))[p]
	if first.MetaStamp == 0 || second.MetaStamp != first.MetaStamp || second.Changed != first.Changed {
		t.Fatalf("an unchanged project was written again: stamp %x→%x changed %d→%d", first.MetaStamp, second.MetaStamp, first.Changed, second.Changed)
	}
}

// A lost catalog (the database deleted, the identity file kept) gives every
// root its old id back from this machine's GBrain cards in the mirror.
func TestLostCatalogTakesIDsBackFromCards(t *testing.T) {
	root := canon(t, t.TempDir())
	for _, n := range []string{"a", "b", "c"} {
		mkProject(t, filepath.Join(root, n))
	}
	dir := t.TempDir()
	st, err := store.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	first := scanAll(t, st, testOptions(root))
	// The cards the projector keeps mirrored: this machine's, with root keys.
	mirror := func(st *store.Store, recs map[string]*local.Project, machine string) {
		err := st.Update(context.Background(), func(tx *store.Tx) error {
			for _, p := range recs {
				if err := tx.PutCard(&local.Card{Slug: "catalog/codegraph/" + p.ID, ProjectID: p.ID, MachineID: machine,
					RootKey: st.Identity().RootKey(pathid.Key(p.Root))}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	os.RemoveAll(store.DBDir(dir))
	st2, err := store.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	mirror(st2, first, st2.MachineID())
	again := scanAll(t, st2, testOptions(root))
	for r, p := range first {
		if again[r] == nil || again[r].ID != p.ID {
			t.Fatalf("%s: id %s after a lost catalog, want %s back", r, again[r].ID, p.ID)
		}
	}
	// Another machine's cards give nothing back.
	other := t.TempDir()
	st3, _ := store.Open(context.Background(), other)
	mirror(st3, first, "m_aaaaaaaaaaaaaaaa")
	for r, p := range scanAll(t, st3, testOptions(root)) {
		if p.ID == first[r].ID {
			t.Fatalf("%s took another machine's id", r)
		}
	}
}

// noRacyStamps lets a test trust stamps of files it has just made (the
// racy-stamp rule has its own test).
func noRacyStamps(t *testing.T) {
	old := meta.RacyStamp
	meta.RacyStamp = 0
	t.Cleanup(func() { meta.RacyStamp = old })
}

// A project whose files changed within the clock tick of the pass keeps no
// stamp: an edit later in the same tick that keeps the size would leave
// the stamp as it was, and the record stale for good. The next pass reads
// its metadata again and stamps it once the files are older than that.
func TestRacyStampIsNotKept(t *testing.T) {
	old := meta.RacyStamp
	// A margin no pass of this test outlives, however loaded the machine:
	// the first two passes are within it by construction.
	meta.RacyStamp = time.Hour
	t.Cleanup(func() { meta.RacyStamp = old })
	root := canon(t, t.TempDir())
	p := filepath.Join(root, "svc")
	mkProject(t, p)
	write(t, filepath.Join(p, "package.json"), `{"name":"svc"}`)
	st := newStore(t)
	first := scanAll(t, st, testOptions(root))[p]
	if first == nil || first.MetaStamp != 0 || first.Meta.Name != "svc" {
		t.Fatalf("a project made just now: %+v; want its metadata read and no stamp kept", first)
	}
	// Read again while still racy, and unchanged: nothing is written.
	if again := scanAll(t, st, testOptions(root))[p]; again == nil || again.Changed != first.Changed {
		t.Fatalf("an unchanged project read again within the racy margin was written: changed %d → %+v", first.Changed, again)
	}
	// A margin the files are older than once this sleep is over.
	meta.RacyStamp = 100 * time.Millisecond
	time.Sleep(meta.RacyStamp + 50*time.Millisecond)
	second := scanAll(t, st, testOptions(root))[p]
	if second == nil || second.MetaStamp == 0 {
		t.Fatalf("a project whose files are older than the racy margin still has no stamp: %+v", second)
	}
}
