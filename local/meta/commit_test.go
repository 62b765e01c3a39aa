//go:build unix

package meta_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cgcat/cgcat/local/meta"
)

const (
	commitA = "0123456789abcdef0123456789abcdef01234567"
	commitB = "89abcdef0123456789abcdef0123456789abcdef"
)

func TestCommitFromFiles(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"detached", map[string]string{".git/HEAD": commitA + "\n"}, commitA},
		{"loose branch ref", map[string]string{".git/HEAD": "ref: refs/heads/feature/x\n", ".git/refs/heads/feature/x": commitB + "\n"}, commitB},
		{"packed ref", map[string]string{".git/HEAD": "ref: refs/heads/main\n",
			".git/packed-refs": "# pack-refs with: peeled fully-peeled sorted\n" + commitA + " refs/heads/other\n" + commitB + " refs/heads/main\n^" + commitA + "\n"}, commitB},
		{"loose ref wins over packed", map[string]string{".git/HEAD": "ref: refs/heads/main\n", ".git/refs/heads/main": commitA,
			".git/packed-refs": commitB + " refs/heads/main\n"}, commitA},
		{"unborn branch", map[string]string{".git/HEAD": "ref: refs/heads/main\n"}, ""},
		{"ref outside refs/heads", map[string]string{".git/HEAD": "ref: refs/remotes/origin/main\n", ".git/refs/remotes/origin/main": commitA}, ""},
		{"branch climbing out", map[string]string{".git/HEAD": "ref: refs/heads/../../../secret\n", "secret": commitA}, ""},
		{"garbage in the ref", map[string]string{".git/HEAD": "ref: refs/heads/main\n", ".git/refs/heads/main": "not a commit\n"}, ""},
		{"no git", map[string]string{"package.json": "{}"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, outside := meta.Commit(tree(t, "proj", tt.files)); got != tt.want || outside != nil {
				t.Errorf("Commit = %q %q, want %q and no git dir outside", got, outside, tt.want)
			}
		})
	}
}

// TestCommitHostile: a ref that is a FIFO is not read (and does not
// block), and a ref symlinked out of the project is not followed.
func TestCommitHostile(t *testing.T) {
	outside := tree(t, "outside", map[string]string{"ref": commitA + "\n"})
	root := tree(t, "proj", map[string]string{".git/HEAD": "ref: refs/heads/main\n", ".git/refs/heads/x": ""})
	if err := os.Symlink(filepath.Join(outside, "ref"), filepath.Join(root, ".git/refs/heads/main")); err != nil {
		t.Fatal(err)
	}
	if got, _ := meta.Commit(root); got != "" {
		t.Errorf("a ref symlinked out of the project gave %q", got)
	}
	fifo := tree(t, "fifo", map[string]string{".git/HEAD": "ref: refs/heads/main\n", ".git/refs/heads/x": ""})
	if err := syscall.Mkfifo(filepath.Join(fifo, ".git/refs/heads/main"), 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	if got, _ := meta.Commit(fifo); got != "" {
		t.Errorf("a FIFO ref gave %q", got)
	}
}

// TestCommitOfClonesAndWorktrees uses the real git: two clones of one
// commit agree, a worktree reads its branch from the main repository's
// refs, and a new commit is seen at once (nothing is cached).
func TestCommitOfClonesAndWorktrees(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	base := t.TempDir()
	git := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_CONFIG_NOSYSTEM=1",
			"GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	origin := filepath.Join(base, "origin")
	os.MkdirAll(origin, 0o755)
	git(origin, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(origin, "package.json"), []byte(`{"name":"@acme/sdk"}`), 0o644)
	git(origin, "add", ".")
	git(origin, "commit", "-q", "-m", "one")
	head := git(origin, "rev-parse", "HEAD")
	c1, c2 := filepath.Join(base, "clone one"), filepath.Join(base, "clone two")
	git(base, "clone", "-q", origin, c1)
	git(base, "clone", "-q", origin, c2)
	git(c2, "pack-refs", "--all") // one clone's branch packed, the other's loose
	wt := filepath.Join(base, "wt")
	git(origin, "worktree", "add", "-q", "-b", "topic", wt)
	for _, dir := range []string{origin, c1, c2} {
		if got, outside := meta.Commit(dir); got != head || outside != nil {
			t.Errorf("%s: Commit = %q %q, want %q read inside the clone", dir, got, outside, head)
		}
	}
	// The worktree's HEAD and branch live in the main repository's git
	// dir: it is named, for the caller to check against its view.
	originGit, _ := filepath.EvalSymlinks(filepath.Join(origin, ".git"))
	if got, outside := meta.Commit(wt); got != head || len(outside) != 2 || !strings.HasPrefix(outside[0], originGit+"/worktrees/") || outside[1] != originGit {
		t.Errorf("worktree: Commit = %q %q, want %q from %s", got, outside, head, originGit)
	}
	os.WriteFile(filepath.Join(wt, "x"), []byte("x"), 0o644)
	git(wt, "add", ".")
	git(wt, "commit", "-q", "-m", "two")
	if got, _ := meta.Commit(wt); got != git(wt, "rev-parse", "HEAD") || got == head {
		t.Errorf("after a commit in the worktree: %q, want the new head", got)
	}
	if got, _ := meta.Commit(origin); got != head {
		t.Errorf("origin after the worktree's commit: %q, want %q", got, head)
	}
}
