//go:build unix

package scan

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// The metadata stamp decides whether a re-seen project's metadata is read
// again (and, with the known records, whether its record is written at
// all): an edit it does not see stays out of the catalog until something
// else in the project changes, while a scan into a fresh data dir reads it
// at once. These tests edit a project between two passes on one store the
// way an unlucky user does, and want the catalog a fresh data dir gets.

// wantFreshMeta checks that the record of root in got holds the metadata a
// pass on a fresh store (no directory cache, no known records) reads now.
func wantFreshMeta(t *testing.T, what string, got passResult, opt Options, root string) {
	t.Helper()
	want := uncached(t, opt).recs[root]
	p := got.recs[root]
	if p == nil || want == nil {
		t.Fatalf("%s: no record of %s (got %v, fresh %v)", what, root, p != nil, want != nil)
	}
	if p.MetaHash != want.MetaHash {
		t.Fatalf("%s: the record keeps stale metadata\n got  name %q readme %q packages %v branch %q\n want name %q readme %q packages %v branch %q",
			what, p.Meta.Name, p.Meta.Readme, p.Meta.Packages, p.Meta.Git.Branch,
			want.Meta.Name, want.Meta.Readme, want.Meta.Packages, want.Meta.Git.Branch)
	}
}

// TestMetaStampSeesEditKeepingSizeAndMtime: package.json rewritten in place
// with another name of the same length and its modification time put back
// (touch -r, cp -p, rsync -t, an editor that keeps times) still changed its
// status-change time, which nothing can set back. A stamp of size and
// mtime alone never sees the edit.
func TestMetaStampSeesEditKeepingSizeAndMtime(t *testing.T) {
	root := canon(t, t.TempDir())
	proj := filepath.Join(root, "svc")
	mkProject(t, proj)
	manifest := filepath.Join(proj, "package.json")
	write(t, manifest, `{"name":"alpha","description":"first words"}`)
	opt := testOptions(root)
	st := newStore(t)
	first := runPass(t, st, opt, nil)
	if got := first.recs[proj].Meta.Packages; !slices.Equal(got, []string{"alpha"}) {
		t.Fatalf("first pass: packages %v", got)
	}
	fi, err := os.Stat(manifest)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // a later clock tick for the ctime
	write(t, manifest, `{"name":"omega","description":"first words"}`)
	if err := os.Chtimes(manifest, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if fi2, _ := os.Stat(manifest); fi2.Size() != fi.Size() || !fi2.ModTime().Equal(fi.ModTime()) {
		t.Fatal("the edit did not keep size and mtime")
	}
	wantFreshMeta(t, "same size, mtime put back", runPass(t, st, opt, nil), opt, proj)
}

// TestMetaStampSeesSymlinkedReadmeEdit: README.md is a symlink to
// docs/README.md (a common layout); metadata is read through the link, so
// an edit of the target is an edit of the README. A stamp that looks at
// the link alone (Lstat) never moves.
func TestMetaStampSeesSymlinkedReadmeEdit(t *testing.T) {
	root := canon(t, t.TempDir())
	proj := filepath.Join(root, "svc")
	mkProject(t, proj)
	write(t, filepath.Join(proj, "docs", "README.md"), "# svc\n\nA first paragraph that describes the service.\n")
	if err := os.Symlink("docs/README.md", filepath.Join(proj, "README.md")); err != nil {
		t.Fatal(err)
	}
	opt := testOptions(root)
	st := newStore(t)
	if got := runPass(t, st, opt, nil).recs[proj].Meta.Readme; got != "A first paragraph that describes the service." {
		t.Fatalf("first pass: readme %q", got)
	}
	write(t, filepath.Join(proj, "docs", "README.md"), "# svc\n\nA second, longer description.\n")
	wantFreshMeta(t, "README's target edited", runPass(t, st, opt, nil), opt, proj)
}

// TestMetaStampSeesWorktreeBranchSwitch: in a linked worktree .git is a
// file and HEAD lives in the main repository's .git/worktrees/<name>; a
// branch switched there (git checkout in the worktree) is the worktree's
// metadata, but a stamp that looks at <root>/.git/HEAD alone never moves.
func TestMetaStampSeesWorktreeBranchSwitch(t *testing.T) {
	root := canon(t, t.TempDir())
	repo, wt := filepath.Join(root, "repo"), filepath.Join(root, "wt")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, repo, "init", "-q", "-b", "main")
	git(t, repo, "commit", "-q", "--allow-empty", "-m", "init")
	git(t, repo, "branch", "feat")
	git(t, repo, "worktree", "add", "-q", wt, "feat")
	mkProject(t, repo)
	mkProject(t, wt)
	opt := testOptions(root)
	st := newStore(t)
	if got := runPass(t, st, opt, nil).recs[wt].Meta.Git.Branch; got != "feat" {
		t.Fatalf("first pass: worktree branch %q", got)
	}
	git(t, wt, "checkout", "-q", "-b", "other")
	wantFreshMeta(t, "branch switched in the worktree", runPass(t, st, opt, nil), opt, wt)
}
