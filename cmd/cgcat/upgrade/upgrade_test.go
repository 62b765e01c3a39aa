// Package upgrade holds the upgrade suite (issue 23 item 5, R43): data dirs
// written by real earlier releases of cgcat, built from their commits at
// test time, are taken over by this build. Every project keeps its id, and
// every answer equals the answer of a fresh data dir of this build — the
// metadata, listings and search index an earlier release derived are
// derived again. An earlier release's serve running beside this build
// afterwards damages nothing. It has no code of its own.
//
//	go test ./cmd/cgcat/upgrade -v     # skipped under -short; builds each release once per run
package upgrade

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cgcat/cgcat/local/fixture"
)

// The releases an upgrade starts from: the first release (the end of the
// first plan's session) and the previous one (what main was when derived
// data got its versions). Both are commits of this repository's history.
var releases = []struct{ name, commit string }{
	{"first release", "2cade5f1cd12596dd59fd6a46bb071ec656a9984"},
	{"previous release", "afa4807"},
}

var (
	repoRoot = func() string {
		_, file, _, _ := runtime.Caller(0)
		return filepath.Join(filepath.Dir(file), "..", "..", "..")
	}()
	buildDir string
	builds   sync.Map // commit ("" for this build) → *built
)

type built struct {
	once sync.Once
	path string
	err  error
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "cgcat-upgrade-")
	if err != nil {
		panic(err)
	}
	buildDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// binary builds cgcat at commit ("" for this tree) once per test run.
func binary(t *testing.T, commit string) string {
	t.Helper()
	v, _ := builds.LoadOrStore(commit, &built{})
	b := v.(*built)
	b.once.Do(func() { b.path, b.err = build(commit) })
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

func build(commit string) (string, error) {
	name := "cgcat-" + commit
	if commit == "" {
		out := filepath.Join(buildDir, "cgcat-this")
		cmd := fixture.BuildCommand(out)
		cmd.Dir = repoRoot
		if b, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("build this cgcat: %v\n%s", err, b)
		}
		return out, nil
	}
	src := filepath.Join(buildDir, "src-"+commit)
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", err
	}
	archive := exec.Command("git", "-C", repoRoot, "archive", commit)
	untar := exec.Command("tar", "-x", "-C", src)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		return "", err
	}
	untar.Stdin = pipe
	var aerr bytes.Buffer
	archive.Stderr = &aerr
	if err := untar.Start(); err != nil {
		return "", err
	}
	if err := archive.Run(); err != nil {
		return "", fmt.Errorf("git archive %s: %v %s", commit, err, aerr.String())
	}
	if err := untar.Wait(); err != nil {
		return "", fmt.Errorf("untar %s: %v", commit, err)
	}
	out := filepath.Join(buildDir, name)
	// -mod=mod: the first release's go.mod listed every requirement as
	// indirect, which it built with then.
	cmd := exec.Command("go", "build", "-mod=mod", "-o", out, "./cmd/cgcat")
	cmd.Dir = src
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s: %v\n%s", commit, err, b)
	}
	return out, nil
}

// haveCommit skips where the history is not there (a shallow clone).
func haveCommit(t *testing.T, commit string) {
	t.Helper()
	if err := exec.Command("git", "-C", repoRoot, "cat-file", "-e", commit+"^{commit}").Run(); err != nil {
		t.Skipf("commit %s is not in this clone's history (a shallow clone? fetch with --unshallow): %v", commit, err)
	}
}

// ---- the tree and its data dirs ---------------------------------------------

const sqliteMagic = "SQLite format 3\x00"

func write(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func project(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	write(t, filepath.Join(dir, ".codegraph", "codegraph.db"), sqliteMagic+strings.Repeat("\x00", 240))
	for name, body := range files {
		write(t, filepath.Join(dir, name), body)
	}
}

// tree makes projects of every manifest kind cgcat reads, with words the
// tokenizer and stemmer shape (plurals, compounds, CJK).
func tree(t *testing.T, root string) {
	project(t, filepath.Join(root, "web", "checkout-ui"), map[string]string{
		"package.json": `{"name":"@shop/checkout-ui","description":"Checkout pages and payment forms","keywords":["payments","react","routers"]}`,
		"README.md":    "# Checkout UI\n\nThe web checkout: carts, payment forms and order routing.\n"})
	project(t, filepath.Join(root, "services", "payments"), map[string]string{
		"go.mod":    "module github.com/shop/payments\n\ngo 1.22\n",
		"README.md": "# Payments service\n\nCharges cards and refunds orders (订单退款).\n"})
	project(t, filepath.Join(root, "services", "billing-worker"), map[string]string{
		"Cargo.toml": "[package]\nname = \"billing-worker\"\ndescription = \"Invoices and billing jobs\"\nkeywords = [\"billing\", \"invoices\"]\n"})
	project(t, filepath.Join(root, "tools", "deploy"), map[string]string{
		"pyproject.toml": "[project]\nname = \"deploy-tools\"\ndescription = \"Deployment scripts for the services\"\n"})
	project(t, filepath.Join(root, "libs", "router"), map[string]string{
		"package.json": `{"name":"tiny-router","description":"A small client-side router","keywords":["routing"]}`})
	project(t, filepath.Join(root, "libs", "router", "examples", "demo"), map[string]string{
		"package.json": `{"name":"router-demo","description":"Demo of the router"}`})
	project(t, filepath.Join(root, "docs-only"), map[string]string{
		"README.md": "# Handbook\n\nHow the team ships: releases, reviews, 订单系统 runbooks.\n"})
	project(t, filepath.Join(root, "mobile", "app"), map[string]string{
		"pubspec.yaml": "name: shop_app\ndescription: The shop's mobile app\n"})
	project(t, filepath.Join(root, "legacy", "orders"), map[string]string{
		"pom.xml": "<project><groupId>com.shop</groupId><artifactId>orders-core</artifactId><description>Order processing core</description></project>"})
}

// pastRacyWindow returns once every file under dir changed more than the
// stamp's racy window (meta.RacyStamp, 2 s) ago.
func pastRacyWindow(t *testing.T, dir string) {
	t.Helper()
	var newest time.Time
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil {
			if fi, err := os.Lstat(p); err == nil && fi.ModTime().After(newest) {
				newest = fi.ModTime()
			}
		}
		return nil
	})
	if wait := time.Until(newest.Add(2*time.Second + 100*time.Millisecond)); wait > 0 {
		time.Sleep(wait)
	}
}

type env struct {
	vars []string
	cfg  string
	data string
}

// newEnv is an isolated user with a config over code and its own data dir.
func newEnv(t *testing.T, base, code, name string) env {
	t.Helper()
	home := filepath.Join(base, "home-"+name)
	data := filepath.Join(base, "data-"+name)
	cfg := filepath.Join(base, "cfg-"+name+".json")
	doc := map[string]any{
		"version": 1, "dataDir": data,
		"discovery": map[string]any{"roots": []string{code}, "maxDirectoriesPerSlice": 2000, "maxDirectoriesPerRound": 100000,
			"refreshIntervalSeconds": 3600, "maxDepth": 8},
		"sharing": map[string]any{"roots": []string{}, "denyRoots": []string{}, "exposeAbsolutePaths": true},
	}
	b, _ := json.MarshalIndent(doc, "", "  ")
	write(t, cfg, string(b))
	vars := append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_DATA_HOME="+filepath.Join(home, ".local", "share"), "CGCAT_CONFIG="+cfg, "CODEX_HOME="+filepath.Join(home, ".codex"))
	return env{vars: vars, cfg: cfg, data: data}
}

func (e env) run(t *testing.T, bin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append(args, "--config", e.cfg)...)
	cmd.Env = e.vars
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\nstdout: %s\nstderr: %s", filepath.Base(bin), strings.Join(args, " "), err, out.String(), errb.String())
	}
	if s := out.String() + errb.String(); strings.Contains(s, "panic:") {
		t.Fatalf("%s %s panicked:\n%s", filepath.Base(bin), strings.Join(args, " "), s)
	}
	return out.String()
}

// hit is what an answer says of a project, apart from its id (which a
// fresh data dir gives anew).
type hit struct {
	ProjectID    string   `json:"projectId"`
	Name         string   `json:"name"`
	Description  string   `json:"description"`
	ProjectPath  string   `json:"projectPath"`
	Availability string   `json:"availability"`
	Packages     []string `json:"packages"`
}

func (h hit) key() string {
	return fmt.Sprintf("%s|%s|%s|%s|%s", h.ProjectPath, h.Name, h.Description, h.Availability, strings.Join(h.Packages, ","))
}

// answer is what `projects QUERY --json` answers (up to 50 hits).
func (e env) answer(t *testing.T, bin, query string) []hit {
	t.Helper()
	args := []string{"projects", "--json", "--limit", "50"}
	if query != "" {
		args = append(args, query)
	}
	var env struct {
		Status   string `json:"status"`
		Projects []hit  `json:"projects"`
	}
	out := e.run(t, bin, args...)
	if err := json.Unmarshal([]byte(out), &env); err != nil {
		t.Fatalf("projects %q: %v\n%s", query, err, out)
	}
	return env.Projects
}

// ids maps each project's path to its id, from the full listing.
func (e env) ids(t *testing.T, bin string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, h := range e.answer(t, bin, "") {
		out[h.ProjectPath] = h.ProjectID
	}
	return out
}

var queries = []string{"", "payments", "payment", "router", "routing", "billing invoices", "checkout", "deploy", "订单", "paymnts", "shop app", "orders-core", "handbook"}

func keys(hs []hit) []string {
	var out []string
	for _, h := range hs {
		out = append(out, h.key())
	}
	return out
}

// TestUpgradeKeepsIDsAndAnswers: a data dir made by each earlier release,
// then used by this build: ids kept, answers those of a fresh data dir;
// then the release's own serve runs beside (and writes in its own format)
// and this build still answers the same, ids kept.
func TestUpgradeKeepsIDsAndAnswers(t *testing.T) {
	if testing.Short() {
		t.Skip("builds earlier releases and runs them")
	}
	for _, rel := range releases {
		t.Run(rel.name, func(t *testing.T) {
			haveCommit(t, rel.commit)
			old, cur := binary(t, rel.commit), binary(t, "")
			base := t.TempDir()
			code := filepath.Join(base, "code")
			tree(t, code)

			// Files changed within the last 2 s give no metadata stamp (the
			// racy rule): every record would be read again anyway, and the
			// test would prove nothing about versions. Real trees are older.
			pastRacyWindow(t, code)

			up := newEnv(t, base, code, "upgraded")
			up.run(t, old, "scan")
			before := up.ids(t, old)
			if len(before) != 9 {
				t.Fatalf("the %s lists %d projects, want 9: %v", rel.name, len(before), before)
			}

			fresh := newEnv(t, base, code, "fresh")
			fresh.run(t, cur, "scan")
			want := map[string][]string{}
			for _, q := range queries {
				want[q] = keys(fresh.answer(t, cur, q))
			}

			check := func(when string) {
				t.Helper()
				if got := up.ids(t, cur); !sameMap(got, before) {
					t.Fatalf("%s: ids changed:\n got  %v\n want %v", when, got, before)
				}
				for _, q := range queries {
					if got := keys(up.answer(t, cur, q)); strings.Join(got, "\n") != strings.Join(want[q], "\n") {
						t.Fatalf("%s: %q answers differ from a fresh data dir's:\n got  %q\n want %q", when, q, got, want[q])
					}
				}
			}
			// The first command of this build answers from the store while
			// the views are of another format; a scan re-derives what
			// changed (metadata read by other code, listings, the index).
			up.run(t, cur, "scan")
			check("after this build's scan")

			// The release's serve beside this build: it answers one call,
			// runs its discovery, and stops; this build is unharmed.
			runOldServe(t, old, up)
			check("after the " + rel.name + "'s serve ran beside")
			up.run(t, cur, "scan")
			check("after this build's next scan")
			if out := up.run(t, cur, "doctor"); !strings.Contains(out, "published catalog verified end to end: 9 records") {
				t.Fatalf("doctor after the upgrade:\n%s", out)
			}
		})
	}
}

func sameMap(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// runOldServe runs `serve` of an earlier release on e's data dir for one
// initialize and one call (a real MCP exchange over stdio), then stops it.
func runOldServe(t *testing.T, bin string, e env) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "serve", "--config", e.cfg)
	cmd.Env = e.vars
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"upgrade-test","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"local_codegraph_projects","arguments":{"query":"payments","refresh":true}}}`,
	}, "\n") + "\n"
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out, errb lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if _, err := stdin.Write([]byte(in)); err != nil {
		t.Fatal(err)
	}
	// Wait for the call's answer, then close stdin (the serve exits).
	deadline := time.Now().Add(50 * time.Second)
	for !strings.Contains(out.String(), `"id":2`) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	stdin.Close()
	_ = cmd.Wait()
	if !strings.Contains(out.String(), `"id":2`) {
		t.Fatalf("the earlier release's serve did not answer:\nstdout: %s\nstderr: %s", out.String(), errb.String())
	}
	if strings.Contains(errb.String(), "panic:") {
		t.Fatalf("the earlier release's serve panicked:\n%s", errb.String())
	}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
