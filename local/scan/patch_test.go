package scan

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cgcat/cgcat/local"
)

// A patch for what file events named finds what a whole pass would find
// there: a new project (walked whole), a moved one (the old record
// missing with movedTo), a deleted one (missing), a rejected index file
// (named, not skipped), a project whose index appeared in an existing
// directory — and writes nothing for a change that changes nothing.
func TestPatchFindsWhatAPassWould(t *testing.T) {
	root := canon(t, t.TempDir())
	for _, p := range []string{"a/one", "a/two", "b/three"} {
		mkProject(t, filepath.Join(root, p))
	}
	if err := os.MkdirAll(filepath.Join(root, "c/plain"), 0o755); err != nil {
		t.Fatal(err)
	}
	st := newStore(t)
	opt := testOptions(root)
	before := scanAll(t, st, opt)
	two := before[filepath.Join(root, "a/two")]

	// Made: c/new (deep); moved: a/two → c/two; deleted: b/three; an index
	// appears in c/plain; a rejected index in c/bad.
	mkProject(t, filepath.Join(root, "c/new/inner"))
	if err := os.Rename(filepath.Join(root, "a/two"), filepath.Join(root, "c/two")); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(root, "b/three")); err != nil {
		t.Fatal(err)
	}
	mkProject(t, filepath.Join(root, "c/plain"))
	write(t, filepath.Join(root, "c/bad/.codegraph/codegraph.db"), "tiny")
	run := func(p Patch) PatchResult {
		t.Helper()
		s, err := StartPatch(st, opt)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		r, err := s.RunPatch(context.Background(), p, time.Now().Add(time.Minute))
		if err != nil || !r.Finished {
			t.Fatalf("patch: %+v %v", r, err)
		}
		return r
	}
	j := func(rel string) string { return filepath.Join(root, rel) }
	run(Patch{
		Shallow: []string{j("a"), j("b"), j("c"), j("c/plain")},
		Deep:    []string{j("c/new"), j("c/two"), j("c/bad")},
		Gone:    []string{j("a/two"), j("b/three")},
	})
	recs := records(t, st)
	if got, want := presentRoots(recs), []string{j("a/one"), j("c/new/inner"), j("c/plain"), j("c/two")}; !slices.Equal(got, want) {
		t.Fatalf("present after the patch: %q, want %q", got, want)
	}
	if p := recs[j("b/three")]; p.Availability != local.Missing {
		t.Errorf("deleted project: %+v", p)
	}
	moved := recs[j("c/two")]
	if old := recs[j("a/two")]; old.ID != two.ID || old.Availability != local.Missing || old.MovedTo != moved.ID {
		t.Errorf("moved project's old record: %+v (new id %s)", old, moved.ID)
	}
	s := readStateT(t, st)
	if len(s.Rejected) != 1 || s.Rejected[0].Path != j("c/bad/.codegraph/codegraph.db") || s.Rejected[0].Why == "" {
		t.Errorf("rejected index files: %+v", s.Rejected)
	}
	// Nothing changed since: the same patch writes nothing.
	if r := run(Patch{Shallow: []string{j("a"), j("c")}, Deep: []string{j("c/new")}}); r.Written != 0 {
		t.Errorf("a patch over unchanged directories wrote %d records", r.Written)
	}
	// A whole pass agrees with what the patches made.
	after := scanAll(t, st, opt)
	if got := presentRoots(after); !slices.Equal(got, presentRoots(recs)) {
		t.Errorf("a pass finds %q, the patches %q", got, presentRoots(recs))
	}
}

// A project under a discovery root that went away (an unplugged volume)
// is inaccessible, not missing, when a patch re-checks it.
func TestPatchTellsAnOfflineRootFromADeletion(t *testing.T) {
	base := canon(t, t.TempDir())
	root := filepath.Join(base, "disk")
	mkProject(t, filepath.Join(root, "p"))
	st := newStore(t)
	opt := testOptions(root)
	scanAll(t, st, opt)
	if err := os.Rename(root, filepath.Join(base, "elsewhere")); err != nil {
		t.Fatal(err)
	}
	s, err := StartPatch(st, opt)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.RunPatch(context.Background(), Patch{Gone: []string{root}}, time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if p := records(t, st)[filepath.Join(root, "p")]; p.Availability != local.Inaccessible {
		t.Errorf("project under an absent discovery root: %+v", p)
	}
}
