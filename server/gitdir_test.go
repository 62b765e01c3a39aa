package server_test

import (
	"path/filepath"
	"strings"
	"testing"
)

// A shared project whose .git file names a denied repository's git dir
// does not show that repository's branch (issue 23, case 9c): a git dir
// outside the sharing view lends no branch. One naming a shared
// repository's git dir still does.
func TestGitDirOutsideTheViewLendsNoBranch(t *testing.T) {
	base := tempDir(t)
	code := filepath.Join(base, "code")
	secret := filepath.Join(code, "secret")
	writeFile(t, filepath.Join(secret, ".git", "HEAD"), "ref: refs/heads/secret-merger-2027\n")
	writeFile(t, filepath.Join(secret, ".git", "config"), "[remote \"origin\"]\n\turl = git@example.com:acme/secret-merger.git\n")
	shared := filepath.Join(code, "shared-repo")
	writeFile(t, filepath.Join(shared, ".git", "HEAD"), "ref: refs/heads/shared-main\n")
	project(t, shared, "shared-repo", "a shared repository")

	project(t, filepath.Join(code, "pub"), "pub", "a shared project")
	writeFile(t, filepath.Join(code, "pub", ".git"), "gitdir: "+filepath.Join(secret, ".git")+"\n")
	project(t, filepath.Join(code, "friend"), "friend", "a shared project on a shared repository")
	writeFile(t, filepath.Join(code, "friend", ".git"), "gitdir: "+filepath.Join(shared, ".git")+"\n")

	config := cfg{DataDir: filepath.Join(base, "data"), Roots: []string{code}, Deny: []string{secret}}.write(t)
	p := serve(t, config)
	a := p.waitScanned()
	pub, friend := a.byName("pub"), a.byName("friend")
	if pub == nil || friend == nil {
		t.Fatalf("projects %v", a.names())
	}
	if pub.Branch != "" {
		t.Errorf("pub shows branch %q of the denied repository it points at", pub.Branch)
	}
	if strings.Contains(a.text, "secret-merger") {
		t.Errorf("the text names the denied repository's branch:\n%s", a.text)
	}
	if friend.Branch != "shared-main" {
		t.Errorf("friend's git dir is shared, yet its branch is %q, want shared-main", friend.Branch)
	}
}
