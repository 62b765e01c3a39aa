package meta_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/meta"
	"github.com/cgcat/cgcat/local/pathid"
)

func TestReadGitFiles(t *testing.T) {
	tests := []struct {
		name     string
		files    map[string]string
		want     local.GitInfo
		problems []string
	}{{
		name: "branch and origin with credentials",
		files: map[string]string{
			".git/HEAD": "ref: refs/heads/feature/x\n",
			".git/config": `[core]
	bare = false
[remote "upstream"]
	url = https://example.com/up.git
[Remote "origin"]
	url = "https://user:s3cret@github.com/acme/widget.git" ; comment
	fetch = +refs/heads/*:refs/remotes/origin/*
[include]
	path = /etc/gitconfig
`,
		},
		want: local.GitInfo{Remote: "https://github.com/acme/widget.git", Branch: "feature/x"},
	}, {
		name: "token as user, no origin",
		files: map[string]string{
			".git/HEAD":   "ref: refs/heads/main",
			".git/config": "[remote \"mirror\"]\n\turl = https://ghp_abc123@github.com/acme/w.git?token=x\n",
		},
		want: local.GitInfo{Remote: "https://github.com/acme/w.git", Branch: "main"},
	}, {
		name: "ssh user kept, password dropped",
		files: map[string]string{
			".git/HEAD":   "ref: refs/heads/main\n",
			".git/config": "[remote.origin]\nurl = ssh://git:pw@host:2222/r.git\n",
		},
		want: local.GitInfo{Remote: "ssh://host:2222/r.git", Branch: "main"},
	}, {
		name: "detached",
		files: map[string]string{
			".git/HEAD":   "0123456789abcdef0123456789abcdef01234567\n",
			".git/config": "[remote \"origin\"]\n\turl = git@github.com:acme/w.git\n",
		},
		want: local.GitInfo{Remote: "git@github.com:acme/w.git", Head: "0123456789abcdef0123456789abcdef01234567"},
	}, {
		name: "garbage HEAD: nothing else is read",
		files: map[string]string{
			".git/HEAD":   "\x00\x01 not a ref \x1b[2J",
			".git/config": "[remote \"origin\"]\n\turl = https://example.com/x.git\n",
		},
		problems: []string{"git HEAD: neither a ref nor a commit id"},
	}, {
		name:     ".git file pointing nowhere",
		files:    map[string]string{".git": "gitdir: ../missing/.git/worktrees/x\n"},
		problems: []string{".git: gitdir: no such file or directory"},
	}, {
		name:     ".git file without gitdir",
		files:    map[string]string{".git": "hello\n"},
		problems: []string{".git: no gitdir line"},
	}, {
		name:  "no config",
		files: map[string]string{".git/HEAD": "ref: refs/heads/trunk\n"},
		want:  local.GitInfo{Branch: "trunk"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := read(t, tree(t, "proj", tt.files), meta.Limits{})
			if m.Git != tt.want {
				t.Errorf("git %+v, want %+v", m.Git, tt.want)
			}
			if strings.Join(m.Problems, "\n") != strings.Join(tt.problems, "\n") {
				t.Errorf("problems %q, want %q", m.Problems, tt.problems)
			}
		})
	}
}

// TestReadGitWorktree uses the real git to make a repository and a linked
// worktree; meta itself only reads their files.
func TestReadGitWorktree(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	base := t.TempDir()
	main := filepath.Join(base, "main repo")
	wt := filepath.Join(base, "wt 工作树")
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	if err := os.Mkdir(main, 0o755); err != nil {
		t.Fatal(err)
	}
	git(main, "init", "-q", "-b", "main")
	git(main, "config", "user.name", "Test")
	git(main, "config", "user.email", "test@example.com")
	git(main, "remote", "add", "origin", "https://bob:hunter2@git.example.com/acme/app.git")
	if err := os.WriteFile(filepath.Join(main, "go.mod"), []byte("module example.com/app\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(main, "add", ".")
	git(main, "commit", "-q", "-m", "init")
	git(main, "worktree", "add", "-q", "-b", "topic", wt)

	m := read(t, main, meta.Limits{})
	if want := (local.GitInfo{Remote: "https://git.example.com/acme/app.git", Branch: "main"}); m.Git != want {
		t.Errorf("main: %+v, want %+v", m.Git, want)
	}

	m = read(t, wt, meta.Limits{})
	common, err := pathid.Canonical(filepath.Join(main, ".git"))
	if err != nil {
		t.Fatal(err)
	}
	want := local.GitInfo{Remote: "https://git.example.com/acme/app.git", Branch: "topic", Worktree: true, CommonDir: common}
	if m.Git != want || len(m.Problems) != 0 {
		t.Errorf("worktree: %+v, want %+v; problems %q", m.Git, want, m.Problems)
	}
	if m.Name != "app" {
		t.Errorf("worktree name %q", m.Name)
	}

	git(wt, "checkout", "-q", "--detach")
	if m = read(t, wt, meta.Limits{}); m.Git.Branch != "" || len(m.Git.Head) != 40 || !m.Git.Worktree {
		t.Errorf("detached worktree: %+v", m.Git)
	}
}
