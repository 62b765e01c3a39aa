package server_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cgcat/cgcat/server"
)

// lookalikeTree makes, under base, the candidates an agent could take for
// one another (seed section 7): two checkouts of @acme/sdk at 1.4.0 and
// 2.1.0, two clones of @acme/widgets at one commit, and a repository with
// a linked worktree on another branch. It needs the real git.
type lookalikeTree struct {
	base, sdkOld, sdkNew, widgets, widgetsCopy, app, appTopic string
	git                                                       func(dir string, args ...string) string
}

func newLookalikeTree(t *testing.T) *lookalikeTree {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	base := tempDir(t)
	lt := &lookalikeTree{base: base,
		sdkOld: filepath.Join(base, "sdk"), sdkNew: filepath.Join(base, "vendor", "acme-sdk"),
		widgets: filepath.Join(base, "widgets"), widgetsCopy: filepath.Join(base, "copies", "widgets"),
		app: filepath.Join(base, "app"), appTopic: filepath.Join(base, "app-topic")}
	lt.git = func(dir string, args ...string) string {
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
	repo := func(dir, pkg string) {
		writeFile(t, filepath.Join(dir, "package.json"), pkg)
		writeFile(t, filepath.Join(dir, ".gitignore"), ".codegraph/\n")
		lt.git(dir, "init", "-q", "-b", "main")
		lt.git(dir, "add", ".")
		lt.git(dir, "commit", "-q", "-m", "init")
	}
	repo(lt.sdkOld, `{"name": "@acme/sdk", "version": "1.4.0", "description": "Acme client SDK"}`)
	writeFile(t, filepath.Join(lt.sdkNew, "package.json"), `{"name": "@acme/sdk", "version": "2.1.0", "description": "Acme client SDK"}`)
	repo(lt.widgets, `{"name": "@acme/widgets", "version": "3.0.0", "description": "UI widgets"}`)
	os.MkdirAll(filepath.Dir(lt.widgetsCopy), 0o755)
	lt.git(base, "clone", "-q", lt.widgets, lt.widgetsCopy)
	repo(lt.app, `{"name": "shop-app", "version": "0.1.0", "description": "The shop"}`)
	lt.git(lt.app, "worktree", "add", "-q", "-b", "topic", lt.appTopic)
	for _, d := range []string{lt.sdkOld, lt.sdkNew, lt.widgets, lt.widgetsCopy, lt.app, lt.appTopic} {
		server.MakeProjectDir(t, d)
	}
	return lt
}

// TestLookalikesSideBySide: candidates that share a name, a package or a
// repository come with what tells them apart — the manifest's version, the
// branch or worktree, the commit — and clones of one commit are marked as
// equivalent code, in structuredContent and in the text alike.
func TestLookalikesSideBySide(t *testing.T) {
	t.Parallel()
	lt := newLookalikeTree(t)
	p := serve(t, cfg{DataDir: filepath.Join(tempDir(t), "data"), Roots: []string{lt.base}}.write(t))
	defer p.Close()
	p.waitScanned()

	// Two checkouts of one package: the version tells them apart.
	a := p.projects(map[string]any{"query": "@acme/sdk", "limit": 2})
	if len(a.env.Projects) != 2 {
		t.Fatalf("@acme/sdk: %d candidates, want 2:\n%s", len(a.env.Projects), a.text)
	}
	versions := map[string]string{}
	for i, pr := range a.env.Projects {
		versions[*pr.ProjectPath] = pr.Version
		other := a.env.Projects[1-i]
		l := pr.Lookalike
		if l == nil || !slices.Equal(l.Of, []string{other.ProjectID}) || !slices.Contains(l.DiffersBy, "version") || len(l.SameCommitAs) != 0 {
			t.Fatalf("@acme/sdk candidate %s: lookalike %+v, want of %s differing by version\n%s", pr.ProjectID, l, other.ProjectID, a.text)
		}
	}
	if versions[lt.sdkOld] != "1.4.0" || versions[lt.sdkNew] != "2.1.0" {
		t.Fatalf("versions by path: %v", versions)
	}
	mustText(t, a.text, `version: "1.4.0"`, `version: "2.1.0"`, "look-alike of #2: differs by version, branch\n", "look-alike of #1: differs by version, branch\n",
		"choose by package, purpose, version, branch and path, never at random")

	// Two clones of one commit: equivalent code.
	a = p.projects(map[string]any{"query": "@acme/widgets", "limit": 2})
	if len(a.env.Projects) != 2 {
		t.Fatalf("@acme/widgets: %d candidates:\n%s", len(a.env.Projects), a.text)
	}
	head := lt.git(lt.widgets, "rev-parse", "HEAD")
	for i, pr := range a.env.Projects {
		other := a.env.Projects[1-i]
		l := pr.Lookalike
		if pr.Commit != head || l == nil || !slices.Equal(l.SameCommitAs, []string{other.ProjectID}) || slices.Contains(l.DiffersBy, "commit") {
			t.Fatalf("clone %s: commit %q lookalike %+v, want commit %s and the same commit as %s\n%s", pr.ProjectID, pr.Commit, l, head, other.ProjectID, a.text)
		}
	}
	mustText(t, a.text, "look-alike of #2: same commit as #2 (equivalent code)\n", "look-alike of #1: same commit as #1 (equivalent code)\n", "commit="+head[:12])

	// A commit in one clone parts them at once: the commit is read live.
	writeFile(t, filepath.Join(lt.widgetsCopy, "new.txt"), "x")
	lt.git(lt.widgetsCopy, "add", ".")
	lt.git(lt.widgetsCopy, "commit", "-q", "-m", "two")
	a = p.projects(map[string]any{"query": "@acme/widgets", "limit": 2})
	for _, pr := range a.env.Projects {
		if l := pr.Lookalike; l == nil || !slices.Equal(l.DiffersBy, []string{"commit"}) || len(l.SameCommitAs) != 0 {
			t.Fatalf("after a commit in one clone: %+v\n%s", l, a.text)
		}
	}
	mustText(t, a.text, "look-alike of #2: differs by commit\n")

	// A repository and its linked worktree: the branch and the worktree
	// tell them apart, and at one commit they hold the same code.
	a = p.projects(map[string]any{"query": "shop-app", "limit": 2})
	if len(a.env.Projects) != 2 {
		t.Fatalf("shop-app: %d candidates:\n%s", len(a.env.Projects), a.text)
	}
	for i, pr := range a.env.Projects {
		l := pr.Lookalike
		if l == nil || !slices.Equal(l.DiffersBy, []string{"branch", "worktree"}) || !slices.Equal(l.SameCommitAs, []string{a.env.Projects[1-i].ProjectID}) {
			t.Fatalf("worktree pair %s: %+v\n%s", pr.ProjectID, l, a.text)
		}
	}

	// A candidate with no look-alike in the answer carries none.
	a = p.projects(map[string]any{"query": "widgets", "limit": 1})
	if len(a.env.Projects) != 1 || a.env.Projects[0].Lookalike != nil || a.env.Projects[0].Commit != "" || strings.Contains(a.text, "look-alike") {
		t.Fatalf("a single candidate: %s", a.text)
	}
}

func mustText(t *testing.T, text string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(text, p) {
			t.Fatalf("the text lacks %q:\n%s", p, text)
		}
	}
}

// TestLookalikeCommitFromADeniedGitDir: the commit is read only from git
// directories the caller's view holds, as the branch is (issue 23, case
// 9c): a look-alike whose .git file names a denied repository shows no
// commit, also when the .git file was swapped to point there after the
// scan (the commit is read live).
func TestLookalikeCommitFromADeniedGitDir(t *testing.T) {
	t.Parallel()
	const denied, own = "1111111111111111111111111111111111111111", "2222222222222222222222222222222222222222"
	base := tempDir(t)
	code := filepath.Join(base, "code")
	secret := filepath.Join(code, "secret")
	writeFile(t, filepath.Join(secret, ".git", "HEAD"), "ref: refs/heads/main\n")
	writeFile(t, filepath.Join(secret, ".git", "refs", "heads", "main"), denied+"\n")
	a, b := filepath.Join(code, "a"), filepath.Join(code, "b")
	for _, d := range []string{a, b} {
		server.MakeProjectDir(t, d)
		writeFile(t, filepath.Join(d, "package.json"), `{"name": "twin", "version": "1.0.0"}`)
	}
	writeFile(t, filepath.Join(a, ".git"), "gitdir: "+filepath.Join(secret, ".git")+"\n")
	writeFile(t, filepath.Join(b, ".git", "HEAD"), "ref: refs/heads/main\n")
	writeFile(t, filepath.Join(b, ".git", "refs", "heads", "main"), own+"\n")
	p := serve(t, cfg{DataDir: filepath.Join(base, "data"), Roots: []string{code}, Deny: []string{secret}}.write(t))
	defer p.Close()
	p.waitScanned()

	check := func(wantB string) {
		t.Helper()
		ans := p.projects(map[string]any{"query": "twin", "limit": 2})
		if len(ans.env.Projects) != 2 || strings.Contains(ans.text, denied[:12]) || strings.Contains(string(ans.res.RawStructuredContent), denied) {
			t.Fatalf("the denied repository's commit is shown:\n%s", ans.text)
		}
		for _, pr := range ans.env.Projects {
			want := map[string]string{a: "", b: wantB}[*pr.ProjectPath]
			if pr.Commit != want || pr.Lookalike == nil {
				t.Fatalf("%s: commit %q lookalike %+v, want commit %q\n%s", *pr.ProjectPath, pr.Commit, pr.Lookalike, want, ans.text)
			}
		}
	}
	check(own)
	// b's .git swapped for a file naming the denied repository.
	if err := os.RemoveAll(filepath.Join(b, ".git")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(b, ".git"), "gitdir: "+filepath.Join(secret, ".git")+"\n")
	check("")
}
