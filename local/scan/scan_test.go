package scan

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cgcat/cgcat/local"
)

// TestDiscoveryRules builds the tree of R8/R9/R33 and checks that exactly the
// right directories become projects, each its own exact root.
func TestDiscoveryRules(t *testing.T) {
	root := canon(t, t.TempDir())
	home := filepath.Join(root, "home", "me")
	t.Setenv("HOME", home)

	mkProject(t, filepath.Join(root, "with space", "订单 服务"))     // spaces and Chinese
	mkProject(t, filepath.Join(root, "mono"))                    // a project…
	mkProject(t, filepath.Join(root, "mono", "packages", "sdk")) // …with a nested project
	mkProject(t, filepath.Join(root, "a", "same"))
	mkProject(t, filepath.Join(root, "b", "same"))
	write(t, filepath.Join(root, "a", "same", "package.json"), `{"name":"@co/same"}`)
	write(t, filepath.Join(root, "b", "same", "package.json"), `{"name":"@co/same"}`)
	mkProject(t, home)                                                                             // index in the home directory: never a project
	write(t, filepath.Join(root, "daemon-only", ".codegraph", "daemon.pid"), "123")                // not a project
	write(t, filepath.Join(root, "other-db", ".codegraph", "cache.db"), string(make([]byte, 500))) // other *.db: not a project
	write(t, filepath.Join(root, "tiny-db", ".codegraph", "codegraph.db"), "SQLite format 3\x00")  // too small
	write(t, filepath.Join(root, "not-sqlite", ".codegraph", "codegraph.db"), string(make([]byte, 500)))
	write(t, filepath.Join(root, "file-marker", ".codegraph"), "not a dir")
	mkProject(t, filepath.Join(root, "node_modules", "dep"))                    // excluded by name
	mkProject(t, filepath.Join(root, "proj", ".codegraph", "inner"))            // never descend into .codegraph
	mkProject(t, filepath.Join(root, "d1", "d2", "d3", "d4", "d5", "d6"))       // depth 6: found
	mkProject(t, filepath.Join(root, "e1", "e2", "e3", "e4", "e5", "e6", "e7")) // depth 7: below maxDepth
	mkProject(t, filepath.Join(root, "..", filepath.Base(root)+"-outside", "target"))
	outside := filepath.Join(filepath.Dir(root), filepath.Base(root)+"-outside", "target")
	t.Cleanup(func() { os.RemoveAll(filepath.Dir(outside)) })
	if err := os.Symlink(outside, filepath.Join(root, "link-to-project")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "mono"), filepath.Join(root, "link-to-mono")); err != nil {
		t.Fatal(err)
	}

	st := newStore(t)
	recs := scanAll(t, st, testOptions(root))
	got := rel(root, presentRoots(recs))
	want := []string{"a/same", "b/same", "d1/d2/d3/d4/d5/d6", "mono", "mono/packages/sdk", "with space/订单 服务"}
	if !slices.Equal(got, want) {
		t.Fatalf("projects\n got  %q\n want %q", got, want)
	}
	ids := map[string]bool{}
	for _, p := range recs {
		if ids[p.ID] {
			t.Fatalf("duplicate id %s", p.ID)
		}
		ids[p.ID] = true
		if p.IndexState != local.MarkerPresent || p.RecordRevision != 1 {
			t.Errorf("%s: state %s rev %d", p.Root, p.IndexState, p.RecordRevision)
		}
	}
	if a, b := recs[filepath.Join(root, "a", "same")], recs[filepath.Join(root, "b", "same")]; a.Meta.Name != b.Meta.Name || a.ID == b.ID {
		t.Fatalf("same-name packages must stay separate records: %+v %+v", a, b)
	}
}

func TestFollowSymlinksWhenConfigured(t *testing.T) {
	root := canon(t, t.TempDir())
	mkProject(t, filepath.Join(root, "real", "p"))
	if err := os.Symlink(filepath.Join(root, "real"), filepath.Join(root, "alias")); err != nil {
		t.Fatal(err)
	}
	opt := testOptions(root)
	opt.FollowSymlinks = true
	recs := scanAll(t, newStore(t), opt)
	if got := rel(root, presentRoots(recs)); !slices.Equal(got, []string{"real/p"}) {
		t.Fatalf("a followed symlink must resolve to one canonical root, got %q", got)
	}
}

func TestWorktreesAndClonesAreSeparate(t *testing.T) {
	root := canon(t, t.TempDir())
	repo := filepath.Join(root, "repo")
	write(t, filepath.Join(repo, "go.mod"), "module example.com/repo\n")
	git(t, root, "init", "-q", "-b", "main", repo)
	git(t, repo, "add", ".")
	git(t, repo, "commit", "-qm", "init")
	git(t, repo, "remote", "add", "origin", "https://example.com/org/repo.git")
	git(t, repo, "worktree", "add", "-q", "-b", "feature", filepath.Join(root, "wt-feature"))
	git(t, repo, "worktree", "add", "-q", "-b", "fix", filepath.Join(root, "wt-fix"))
	git(t, root, "clone", "-q", repo, filepath.Join(root, "clone2"))
	for _, d := range []string{"repo", "wt-feature", "wt-fix", "clone2"} {
		mkProject(t, filepath.Join(root, d))
	}
	recs := scanAll(t, newStore(t), testOptions(root))
	if got := rel(root, presentRoots(recs)); !slices.Equal(got, []string{"clone2", "repo", "wt-feature", "wt-fix"}) {
		t.Fatalf("got %q", got)
	}
	if b := recs[filepath.Join(root, "wt-feature")].Meta.Git; !b.Worktree || b.Branch != "feature" {
		t.Errorf("worktree identity not read: %+v", b)
	}
}

func TestIDsStableAcrossRescanAndReindex(t *testing.T) {
	root := canon(t, t.TempDir())
	a := filepath.Join(root, "a")
	b := filepath.Join(root, "b")
	mkProject(t, a)
	mkProject(t, b)
	st := newStore(t)
	first := scanAll(t, st, testOptions(root))
	again := scanAll(t, st, testOptions(root))
	if first[a].ID != again[a].ID || again[a].RecordRevision != 1 {
		t.Fatalf("re-scan changed the record: %+v -> %+v", first[a], again[a])
	}
	// Re-index: CodeGraph deletes and recreates the database.
	if err := os.RemoveAll(filepath.Join(a, ".codegraph")); err != nil {
		t.Fatal(err)
	}
	mkProject(t, a)
	reindexed := scanAll(t, st, testOptions(root))
	if reindexed[a].ID != first[a].ID {
		t.Fatalf("re-index at the same root changed the id: %s -> %s", first[a].ID, reindexed[a].ID)
	}
	if n := outboxDepth(t, st); n != 2 {
		t.Fatalf("two new records must enqueue two cards, got %d", n)
	}
	// A metadata change bumps recordRevision, nothing else.
	write(t, filepath.Join(a, "package.json"), `{"name":"a-pkg","description":"now described"}`)
	changed := scanAll(t, st, testOptions(root))
	if changed[a].ID != first[a].ID || changed[a].RecordRevision != 2 || changed[a].Meta.Description != "now described" {
		t.Fatalf("metadata change: %+v", changed[a])
	}
	if n := outboxDepth(t, st); n != 2 {
		t.Fatalf("a change of a pending card must coalesce, got %d rows", n)
	}
	// Move b: a new record at the new root; the old record goes missing, never deleted.
	moved := filepath.Join(root, "moved-b")
	if err := os.Rename(b, moved); err != nil {
		t.Fatal(err)
	}
	after := scanAll(t, st, testOptions(root))
	if after[b] == nil || after[b].Availability != local.Missing || after[b].ID != first[b].ID {
		t.Fatalf("old record must stay, missing: %+v", after[b])
	}
	if after[moved] == nil || after[moved].ID == first[b].ID || after[moved].Availability != local.Present {
		t.Fatalf("moved project must be a new record: %+v", after[moved])
	}
	// Index removed but folder kept: missing too (marker gone).
	if err := os.RemoveAll(filepath.Join(a, ".codegraph")); err != nil {
		t.Fatal(err)
	}
	gone := scanAll(t, st, testOptions(root))
	if gone[a].Availability != local.Missing || gone[a].IndexState != local.MarkerMissing {
		t.Fatalf("removed index: %+v", gone[a])
	}
	// And back again: same id, present.
	mkProject(t, a)
	back := scanAll(t, st, testOptions(root))
	if back[a].ID != first[a].ID || back[a].Availability != local.Present {
		t.Fatalf("returning index: %+v", back[a])
	}
}

func TestPartialScanDoesNotMakeProjectsMissing(t *testing.T) {
	root := canon(t, t.TempDir())
	for _, d := range []string{"a", "b", "c", "d"} {
		mkProject(t, filepath.Join(root, d, "p"))
	}
	st := newStore(t)
	full := scanAll(t, st, testOptions(root))
	if len(full) != 4 {
		t.Fatalf("want 4 projects, got %d", len(full))
	}
	// A round that stops after 3 directories does not finish the pass and
	// must not mark anything missing.
	opt := testOptions(root)
	opt.SliceDirs, opt.RoundDirs = 3, 3
	s, err := Start(context.Background(), st, opt)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.RunRound(context.Background())
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	if r.Finished || r.Truncated != "maxDirectoriesPerRound" || r.Dirs != 3 {
		t.Fatalf("round: %+v", r)
	}
	for root, p := range records(t, st) {
		if p.Availability != local.Present {
			t.Fatalf("%s went %s after a partial round", root, p.Availability)
		}
	}
	state := readStateT(t, st)
	if !state.PassRunning || state.Queued == 0 {
		t.Fatalf("state after truncated round: %+v", state)
	}
	// The next rounds resume the queue and finish the pass.
	scanAll(t, st, testOptions(root))
	if s := readStateT(t, st); s.PassRunning || covOf(s).Coverage != CoverageComplete || s.Queued != 0 {
		t.Fatalf("state after finishing: %+v", s)
	}
}

func TestNonUTF8NameIsAGap(t *testing.T) {
	root := canon(t, t.TempDir())
	mkProject(t, filepath.Join(root, "ok"))
	mkProject(t, filepath.Join(root, "bad\xff\xfename"))
	st := newStore(t)
	recs := scanAll(t, st, testOptions(root))
	if got := rel(root, presentRoots(recs)); !slices.Equal(got, []string{"ok"}) {
		t.Fatalf("a non-UTF-8 path can never be handed out exactly; got %q", got)
	}
	if s := readStateT(t, st); covOf(s).GapCount != 1 || covOf(s).Coverage != CoveragePartial {
		t.Fatalf("the skipped directory must be a recorded gap: %+v", s)
	}
}
