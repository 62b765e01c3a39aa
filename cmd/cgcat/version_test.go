package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
)

func TestBuildOf(t *testing.T) {
	stamped := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/cgcat/cgcat", Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs", Value: "git"},
		{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
		{Key: "vcs.time", Value: "2026-07-01T10:00:00Z"},
		{Key: "vcs.modified", Value: "true"},
	}}
	for _, tt := range []struct {
		name                string
		version, commit, dt string
		info                *debug.BuildInfo
		want                build
	}{
		{"vcs stamping", "dev", "unknown", "unknown", stamped,
			build{Version: "dev+0123456789ab.dirty", Commit: "0123456789abcdef0123456789abcdef01234567", Date: "2026-07-01T10:00:00Z", Modified: true, Go: "go1.26.8"}},
		{"ldflags win", "v1.2.0", "abc1234", "2026-08-01T00:00:00Z", stamped,
			build{Version: "v1.2.0", Commit: "abc1234", Date: "2026-08-01T00:00:00Z", Modified: true, Go: "go1.26.8"}},
		{"go install of a release", "dev", "unknown", "unknown", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.3.0"}},
			build{Version: "v1.3.0", Commit: "unknown", Date: "unknown", Go: "go1.26.8"}},
		{"nothing known", "dev", "unknown", "unknown", nil,
			build{Version: "dev", Commit: "unknown", Date: "unknown"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := buildOf(tt.version, tt.commit, tt.dt, tt.info)
			got.OS, got.Arch = "", ""
			if tt.info == nil {
				got.Go = ""
			}
			if got != tt.want {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
	if s := buildOf("dev", "unknown", "unknown", stamped).oneLine(); s != "dev+0123456789ab.dirty (commit 0123456789abcdef0123456789abcdef01234567, with uncommitted changes, built 2026-07-01T10:00:00Z)" {
		t.Errorf("oneLine: %s", s)
	}
}

// TestVersionFromVCS builds cgcat from a git repository with VCS stamping
// and no -ldflags: `cgcat version` names that repository's commit and time,
// and says when the tree had uncommitted changes.
func TestVersionFromVCS(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cgcat twice; skipped with -short")
	}
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	repo := filepath.Join(t.TempDir(), "cgcat")
	copyModule(t, moduleRoot(), repo)
	// The new repository only: never the checkout the module was copied
	// from (a linked worktree's .git file would lead git there).
	gitEnv := append(os.Environ(), "GIT_DIR="+filepath.Join(repo, ".git"), "GIT_WORK_TREE="+repo, "GIT_CEILING_DIRECTORIES="+filepath.Dir(repo),
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com",
		"GIT_AUTHOR_DATE=2001-02-03T04:05:06Z", "GIT_COMMITTER_DATE=2001-02-03T04:05:06Z")
	runIn := func(dir string, env []string, name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if _, err := os.Lstat(filepath.Join(repo, ".git")); !os.IsNotExist(err) {
		t.Fatalf("the copy has a .git (%v)", err)
	}
	runIn(repo, gitEnv, git, "init", "-q")
	if d := runIn(repo, gitEnv, git, "rev-parse", "--absolute-git-dir"); d != filepath.Join(repo, ".git") {
		t.Fatalf("git would use %s, not the new repository", d)
	}
	runIn(repo, gitEnv, git, "add", "-A")
	runIn(repo, gitEnv, git, "commit", "-q", "-m", "snapshot")
	head := runIn(repo, gitEnv, git, "rev-parse", "HEAD")
	// This machine may turn stamping off (GOFLAGS=-buildvcs=false): ask for it.
	goEnv := append(slices.Clone(origEnv), "GOFLAGS=-buildvcs=true")
	bin := filepath.Join(t.TempDir(), "cgcat")
	version := func() build {
		t.Helper()
		runIn(repo, goEnv, "go", "build", "-o", bin, "./cmd/cgcat")
		var b build
		if err := json.Unmarshal([]byte(runIn(repo, nil, bin, "version", "--json")), &b); err != nil {
			t.Fatal(err)
		}
		return b
	}
	b := version()
	if b.Commit != head || b.Date != "2001-02-03T04:05:06Z" || b.Modified {
		t.Fatalf("a clean checkout at %s: %+v", head, b)
	}
	// Issue 25: the module's pseudo-version, and the same string from
	// doctor and the MCP serverInfo (they said "dev").
	if want := "v0.0.0-20010203040506-" + head[:12]; b.Version != want {
		t.Fatalf("version %q, want the module's pseudo-version %q", b.Version, want)
	}
	if v := checkOneVersion(t, bin); v != b.Version {
		t.Fatalf("%q != %q", v, b.Version)
	}
	text := runIn(repo, nil, bin, "version")
	if !strings.Contains(text, "commit "+head+"\nbuilt 2001-02-03T04:05:06Z\n") {
		t.Fatalf("cgcat version:\n%s", text)
	}
	writeTestFile(t, filepath.Join(repo, "cmd", "cgcat", "zz_change.go"), "package main\n")
	if b := version(); b.Commit != head || !b.Modified {
		t.Fatalf("with an uncommitted change: %+v", b)
	}
	if text := runIn(repo, nil, bin, "--version"); !strings.Contains(text, head+", with uncommitted changes") {
		t.Fatalf("cgcat --version: %s", text)
	}
}

// copyModule copies the module's source files (not .git, caches or build
// output) from src to dst.
func copyModule(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.Name() == ".git" { // a directory, or a linked worktree's file
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			switch d.Name() {
			case ".cache", "node_modules", "bin", "dist":
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		info, err := d.Info()
		if err != nil || !info.Mode().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, info.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
}
