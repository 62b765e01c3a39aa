package main

// Real end-to-end tests (seed 13.2, R34): the real CodeGraph and the real
// hosts from npm, driven headless, with the real cgcat binary.
//
//   - TestE2ECodeGraphHandoff: cgcat finds B, C and a nested D; each
//     projectPath it returns, handed to the real codegraph_explore from one
//     neutral working directory, answers with that project's own symbols;
//     and cgcat never returns a subdirectory (which CodeGraph would silently
//     answer from the parent's index).
//   - TestAgentTurns (agent_turn_test.go): Codex, OpenCode, Claude Code and
//     Gemini CLI each run a real prompt against a scripted model, through
//     the entry `cgcat install` wrote, to the real codegraph_explore.
//
// The tools come from the npm prefix $CGCAT_E2E_NPM_PREFIX (default
// <repo>/.cache/npm, installed by .ci/run). When they are missing the tests
// skip and say how to install them: `go test ./...` installs nothing by
// itself (about 1.1 GB), unless CGCAT_E2E_INSTALL=1 asks it to run `npm
// install` there once. -short skips these tests.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cgcat/cgcat/cmd/cgcat/hostlaunch"
	"github.com/cgcat/cgcat/server"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// The npm packages the end-to-end tests use, pinned to the versions the
// protocols below were measured with.
var e2ePackages = []string{"@colbymchenry/codegraph@1.6.1", "@openai/codex@0.171.0", "opencode-ai@1.18.33",
	"@anthropic-ai/claude-code@2.1.332", "@google/gemini-cli@0.61.0"}

// codegraphEnv keeps CodeGraph quiet and in-process.
var codegraphEnv = []string{"CODEGRAPH_TELEMETRY=0", "CODEGRAPH_NO_UPDATE_CHECK=1", "CODEGRAPH_NO_DAEMON=1"}

var (
	npmOnce sync.Once
	npmErr  string
)

func npmPrefix() string {
	if p := os.Getenv("CGCAT_E2E_NPM_PREFIX"); p != "" {
		if abs, err := filepath.Abs(p); err == nil {
			return abs
		}
		return p
	}
	return filepath.Join(moduleRoot(), ".cache", "npm")
}

// e2eTool returns the path of an npm-installed command (codegraph, codex,
// opencode, claude, gemini), installing the packages once if needed, or
// skips the test.
func e2eTool(t *testing.T, name string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test: skipped with -short")
	}
	prefix := npmPrefix()
	bin := filepath.Join(prefix, "node_modules", ".bin", name)
	if isExecutable(bin) {
		return bin
	}
	npmOnce.Do(func() {
		if os.Getenv("CGCAT_E2E_INSTALL") != "1" {
			npmErr = "go test installs nothing by itself; set CGCAT_E2E_INSTALL=1 to let it install them (about 1.1 GB)"
			return
		}
		npm, err := exec.LookPath("npm")
		if err != nil {
			npmErr = "npm is not on PATH"
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		args := append([]string{"install", "--prefix", prefix, "--no-audit", "--no-fund"}, e2ePackages...)
		cmd := exec.CommandContext(ctx, npm, args...)
		cmd.Env = origEnv
		out, err := cmd.CombinedOutput()
		if err != nil {
			npmErr = fmt.Sprintf("`npm %s` failed (%v): %s", strings.Join(args, " "), err, npmFailure(string(out)))
		}
	})
	if isExecutable(bin) {
		return bin
	}
	t.Skipf("end-to-end test needs %q from npm (%s) in %s, which is missing: %s; run .ci/run or `npm install --prefix %s --no-audit --no-fund %s`",
		name, strings.Join(e2ePackages, " "), prefix, npmErr, prefix, strings.Join(e2ePackages, " "))
	return ""
}

// npmFailure picks the informative lines of npm's error output.
func npmFailure(out string) string {
	var keep []string
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(strings.TrimPrefix(l, "npm error"))
		if strings.HasPrefix(l, "code ") || strings.Contains(l, "Error:") || strings.HasPrefix(l, "404") {
			keep = append(keep, l)
		}
	}
	if len(keep) == 0 {
		keep = hostlaunch.LastLines(strings.TrimSpace(out), 3)
	}
	return strings.Join(keep, "; ")
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode().Perm()&0o111 != 0
}

// baseEnv is a minimal environment for host and tool processes: the
// original PATH and locale, everything else pointed into home.
func baseEnv(home string, extra ...string) []string {
	env := []string{"HOME=" + home, "LANG=C.UTF-8", "TMPDIR=" + os.TempDir()}
	for _, kv := range origEnv {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "PATH", "SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS":
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// ---- the fixture: real CodeGraph projects --------------------------------

type e2eProjects struct {
	root    string // the discovery root
	b, c, d string // project roots (d is nested inside b)
	bSrc    string // a plain subdirectory of b
	decoy   string // a subdirectory of b whose .codegraph has no codegraph.db
	// Two checkouts of one package, @acme/sdk 1.4.0 and 2.1.0: same name,
	// told apart only by what cgcat reads (the version).
	sdk1, sdk2 string
	// a is the agents' own workspace, outside the discovery root. a, b and
	// c each define formatReceipt: the source distinction of seed 13.2.
	a    string
	home string
}

// e2eIndexed lists the catalogued projects: every indexed root but a.
func (p *e2eProjects) e2eIndexed() []string { return []string{p.b, p.c, p.d, p.sdk1, p.sdk2} }

var (
	fixtureOnce sync.Once
	fixture     *e2eProjects
	fixtureErr  error
	fixtureDir  string
)

func cleanupE2E() {
	if fixtureDir != "" {
		os.RemoveAll(fixtureDir)
	}
}

// e2eFixture makes (once per test run) B, C, nested D, two checkouts of
// @acme/sdk and the workspace A, with distinct symbols (and formatReceipt
// in A, B and C), and indexes each with the real `codegraph init -y`.
func e2eFixture(t *testing.T) *e2eProjects {
	t.Helper()
	codegraph := e2eTool(t, "codegraph")
	fixtureOnce.Do(func() {
		fixtureDir, fixtureErr = os.MkdirTemp("", "cgcat-e2e-")
		if fixtureErr != nil {
			return
		}
		base, _ := filepath.EvalSymlinks(fixtureDir)
		p := &e2eProjects{root: filepath.Join(base, "code"), home: filepath.Join(base, "home")}
		p.b = filepath.Join(p.root, "banana-sdk")
		p.c = filepath.Join(p.root, "cherry ledger 樱桃账本") // a space and Chinese in the path
		p.d = filepath.Join(p.b, "plugins", "durian")
		p.bSrc = filepath.Join(p.b, "src")
		p.decoy = filepath.Join(p.b, "tools", "decoy")
		p.sdk1 = filepath.Join(p.root, "acme-sdk")
		p.sdk2 = filepath.Join(p.root, "vendor", "acme-sdk")
		p.a = filepath.Join(base, "workspace-a")
		files := map[string]string{
			filepath.Join(p.b, "package.json"):                 `{"name": "@fruit/banana-sdk", "description": "Client for the banana order service", "version": "1.0.0"}`,
			filepath.Join(p.b, "src", "orders.ts"):             "export class BananaOrdersClient {\n  createBananaOrder(id: string): string { return \"banana-\" + id; }\n}\nexport function bananaHelper(): number { return 42; }\nexport function formatReceipt(order: string): string { return \"banana receipt \" + order; }\n",
			filepath.Join(p.c, "package.json"):                 `{"name": "@fruit/cherry-ledger", "description": "Cherry ledger service", "version": "1.0.0"}`,
			filepath.Join(p.c, "src", "ledger.ts"):             "export class CherryLedgerService {\n  postCherryEntry(amount: number): number { return amount * 2; }\n}\nexport function cherryHelper(): number { return 7; }\nexport function formatReceipt(entry: number): string { return \"cherry receipt \" + entry; }\n",
			filepath.Join(p.sdk1, "package.json"):              `{"name": "@acme/sdk", "description": "Acme API client", "version": "1.4.0"}`,
			filepath.Join(p.sdk1, "src", "client.ts"):          "export class AcmeClient {\n  legacyConnect(url: string): boolean { return url.length > 0; }\n}\n",
			filepath.Join(p.sdk2, "package.json"):              `{"name": "@acme/sdk", "description": "Acme API client", "version": "2.1.0"}`,
			filepath.Join(p.sdk2, "src", "client.ts"):          "export class AcmeClient {\n  openSession(token: string): string { return \"session-\" + token; }\n}\n",
			filepath.Join(p.a, "package.json"):                 `{"name": "workspace-a", "description": "The agent's own workspace", "version": "0.1.0"}`,
			filepath.Join(p.a, "src", "app.ts"):                "export function formatReceipt(total: number): string { return \"workspace receipt \" + total; }\n",
			filepath.Join(p.d, "package.json"):                 `{"name": "@fruit/durian-plugin", "description": "Durian plugin registry", "version": "1.0.0"}`,
			filepath.Join(p.d, "src", "durian.ts"):             "export class DurianPluginRegistry {\n  registerDurianPlugin(name: string): boolean { return name.length > 0; }\n}\n",
			filepath.Join(p.decoy, "tool.ts"):                  "export const decoyTool = 1;\n",
			filepath.Join(p.decoy, ".codegraph", "daemon.pid"): "12345\n",
			filepath.Join(p.decoy, ".codegraph", "old.db"):     strings.Repeat("x", 4096),
		}
		for path, body := range files {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				fixtureErr = err
				return
			}
			if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
				fixtureErr = err
				return
			}
		}
		if err := os.MkdirAll(p.home, 0o755); err != nil {
			fixtureErr = err
			return
		}
		var wg sync.WaitGroup
		indexed := append(p.e2eIndexed(), p.a)
		errs := make([]error, len(indexed))
		for i, dir := range indexed {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				cmd := exec.CommandContext(ctx, codegraph, "init", "-y", dir)
				cmd.Env = baseEnv(p.home, codegraphEnv...)
				cmd.Dir = base
				out, err := cmd.CombinedOutput()
				if err != nil {
					errs[i] = fmt.Errorf("codegraph init -y %s: %v\n%s", dir, err, out)
					return
				}
				if fi, err := os.Stat(filepath.Join(dir, ".codegraph", "codegraph.db")); err != nil || fi.Size() < 100 {
					errs[i] = fmt.Errorf("codegraph init -y %s made no .codegraph/codegraph.db: %v\n%s", dir, err, out)
				}
			}()
		}
		wg.Wait()
		if fixtureErr = errors.Join(errs...); fixtureErr != nil {
			return
		}
		fixture = p
	})
	if fixtureErr != nil {
		t.Fatal(fixtureErr)
	}
	return fixture
}

// e2eConfig writes a cgcat config over the fixture with a fresh data dir.
func e2eConfig(t *testing.T, p *e2eProjects) string {
	t.Helper()
	dir := canonTemp(t)
	cfg := filepath.Join(dir, "cgcat.json")
	b, _ := json.Marshal(map[string]any{
		"version":   1,
		"dataDir":   filepath.Join(dir, "data"),
		"discovery": map[string]any{"roots": []string{p.root}},
	})
	writeTestFile(t, cfg, string(b))
	return cfg
}

// ---- MCP stdio clients ----------------------------------------------------

type stdioServer struct {
	c      *client.Client
	cmd    *exec.Cmd
	stderr *hostlaunch.TailBuffer
	cancel context.CancelFunc
}

// startMCP starts command as an MCP stdio server in dir with env and
// completes the initialize handshake.
func startMCP(t *testing.T, dir string, env []string, command string, args ...string) *stdioServer {
	t.Helper()
	s := &stdioServer{stderr: &hostlaunch.TailBuffer{Max: 64 << 10}}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	tr := transport.NewStdioWithOptions(command, nil, args,
		transport.WithCommandFunc(func(ctx context.Context, command string, _ []string, args []string) (*exec.Cmd, error) {
			cmd := exec.CommandContext(ctx, command, args...)
			cmd.Env, cmd.Dir, cmd.Stderr = env, dir, s.stderr
			s.cmd = cmd
			return cmd, nil
		}))
	s.c = client.NewClient(tr)
	t.Cleanup(func() {
		_ = s.c.Close() // stdin first, then a signal
		cancel()
	})
	if err := s.c.Start(ctx); err != nil {
		t.Fatalf("start %s: %v", command, err)
	}
	ictx, icancel := context.WithTimeout(ctx, 60*time.Second)
	defer icancel()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "cgcat-e2e", Version: "1"}
	if _, err := s.c.Initialize(ictx, init); err != nil {
		t.Fatalf("initialize %s: %v\nstderr:\n%s", command, err, s.stderr.String())
	}
	return s
}

func (s *stdioServer) call(t *testing.T, tool string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := s.c.CallTool(ctx, req)
	if err != nil {
		t.Fatalf("tools/call %s %v: %v\nstderr:\n%s", tool, args, err, s.stderr.String())
	}
	if res.IsError {
		t.Fatalf("tools/call %s %v: tool error %s\nstderr:\n%s", tool, args, resultText(res), s.stderr.String())
	}
	return res
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func envelopeOf(t *testing.T, structured any) *server.Envelope {
	t.Helper()
	b, err := json.Marshal(structured)
	if err != nil {
		t.Fatal(err)
	}
	var e server.Envelope
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatalf("structuredContent is not an envelope: %v\n%s", err, b)
	}
	return &e
}

// catalogListing asks cgcat for every project until a full pass is done.
func catalogListing(t *testing.T, cg *stdioServer, want int) *server.Envelope {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		res := cg.call(t, "local_codegraph_projects", map[string]any{"limit": 50})
		e := envelopeOf(t, res.StructuredContent)
		if e.Status == server.StatusOK && e.ScanState == "idle" && e.Coverage == "complete" && len(e.Projects) >= want {
			return e
		}
		if time.Now().After(deadline) {
			t.Fatalf("catalog never complete: %+v\n%s", e, resultText(res))
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// projectPathFor asks cgcat the way an agent would (one query) and returns
// the first project's projectPath, checking the handoff it carries.
func projectPathFor(t *testing.T, cg *stdioServer, query string) string {
	t.Helper()
	res := cg.call(t, "local_codegraph_projects", map[string]any{"query": query, "limit": 3})
	e := envelopeOf(t, res.StructuredContent)
	if e.Status != server.StatusOK || len(e.Projects) == 0 || e.Projects[0].ProjectPath == nil {
		t.Fatalf("query %q: %+v\n%s", query, e, resultText(res))
	}
	p := e.Projects[0]
	if p.Handoff == nil || p.Handoff.ToolName != "codegraph_explore" || p.Handoff.Arguments["projectPath"] != *p.ProjectPath {
		t.Fatalf("query %q: handoff %+v does not carry projectPath %s", query, p.Handoff, *p.ProjectPath)
	}
	if !strings.Contains(resultText(res), "projectPath: "+*p.ProjectPath) {
		t.Fatalf("query %q: the text content does not show the same path:\n%s", query, resultText(res))
	}
	return *p.ProjectPath
}

// ---- R34: the real handoff ---------------------------------------------

func TestE2ECodeGraphHandoff(t *testing.T) {
	start := time.Now()
	p := e2eFixture(t)
	codegraph := e2eTool(t, "codegraph")
	t.Logf("fixture with %d real CodeGraph indexes ready in %s", len(p.e2eIndexed())+1, time.Since(start).Round(time.Millisecond))

	cfg := e2eConfig(t, p)
	neutral := canonTemp(t)
	cg := startMCP(t, neutral, baseEnv(p.home), cgcatBin(t), "serve", "--config", cfg)
	listing := catalogListing(t, cg, len(p.e2eIndexed()))

	// Exactly the three project roots; never a subdirectory, the decoy,
	// .codegraph or a database file.
	var paths []string
	for _, pr := range listing.Projects {
		if pr.ProjectPath == nil {
			t.Fatalf("project without path: %+v", pr)
		}
		pp := *pr.ProjectPath
		paths = append(paths, pp)
		if !filepath.IsAbs(pp) || filepath.Clean(pp) != pp || strings.Contains(pp, ".codegraph") {
			t.Fatalf("projectPath %q is not a clean absolute root", pp)
		}
		if real, err := filepath.EvalSymlinks(pp); err != nil || real != pp {
			t.Fatalf("projectPath %q is not canonical (%s, %v)", pp, real, err)
		}
		// CodeGraph answers from the nearest .codegraph at or above the
		// path: for a root that holds its own index, that is the root.
		if fi, err := os.Stat(filepath.Join(pp, ".codegraph", "codegraph.db")); err != nil || !fi.Mode().IsRegular() {
			t.Fatalf("projectPath %q has no index of its own: CodeGraph would fall back to a parent", pp)
		}
		// resolve gives the same path back.
		r := envelopeOf(t, cg.call(t, "local_codegraph_resolve", map[string]any{"projectId": pr.ProjectID}).StructuredContent)
		if len(r.Projects) != 1 || r.Projects[0].ProjectPath == nil || *r.Projects[0].ProjectPath != pp {
			t.Fatalf("resolve %s: %+v", pr.ProjectID, r)
		}
	}
	slices.Sort(paths)
	want := p.e2eIndexed()
	slices.Sort(want)
	if !slices.Equal(paths, want) {
		t.Fatalf("catalog paths = %q\nwant %q", paths, want)
	}

	bPath := projectPathFor(t, cg, "@fruit/banana-sdk")
	cPath := projectPathFor(t, cg, "@fruit/cherry-ledger")
	dPath := projectPathFor(t, cg, "durian plugin")
	if bPath != p.b || cPath != p.c || dPath != p.d {
		t.Fatalf("paths by query: %s %s %s", bPath, cPath, dPath)
	}

	// The real CodeGraph, started from a neutral empty directory (a
	// directory with .git or a manifest would make it adopt a default
	// project), answers each path with that project's own code.
	native := startMCP(t, neutral, baseEnv(p.home, codegraphEnv...), codegraph, "serve", "--mcp")
	tools, err := native.c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(tools.Tools, func(tl mcp.Tool) bool {
		b, _ := json.Marshal(tl.InputSchema)
		rb, _ := json.Marshal(tl.RawInputSchema)
		return tl.Name == "codegraph_explore" && (strings.Contains(string(b), "projectPath") || strings.Contains(string(rb), "projectPath"))
	}) {
		t.Fatal("codegraph_explore with a projectPath argument is not in CodeGraph's tool list")
	}
	explore := func(projectPath, query string) string {
		t.Helper()
		return resultText(native.call(t, "codegraph_explore", map[string]any{"query": query, "projectPath": projectPath}))
	}
	for _, step := range []struct {
		path, query, has string
		hasNot           []string
	}{
		{bPath, "BananaOrdersClient createBananaOrder", "BananaOrdersClient", []string{"CherryLedgerService", "DurianPluginRegistry"}},
		{cPath, "CherryLedgerService postCherryEntry", "CherryLedgerService", []string{"BananaOrdersClient", "DurianPluginRegistry"}},
		{dPath, "DurianPluginRegistry registerDurianPlugin", "DurianPluginRegistry", []string{"BananaOrdersClient", "CherryLedgerService"}},
	} {
		text := explore(step.path, step.query)
		if !strings.Contains(text, step.has) {
			t.Fatalf("codegraph_explore(%s) lacks %s:\n%s", step.path, step.has, text)
		}
		for _, no := range step.hasNot {
			if strings.Contains(text, no) {
				t.Fatalf("codegraph_explore(%s) holds %s from another project:\n%s", step.path, no, text)
			}
		}
	}

	// Why a subdirectory must never be handed out: CodeGraph silently
	// answers it from the parent's index (here B's), with no error.
	for _, sub := range []string{p.bSrc, p.decoy} {
		text := explore(sub, "BananaOrdersClient")
		if !strings.Contains(text, "BananaOrdersClient") {
			t.Fatalf("CodeGraph 1.6.1 no longer falls back from %s to the parent index (good to know; update this test):\n%s", sub, text)
		}
		if slices.Contains(paths, sub) {
			t.Fatalf("cgcat handed out the subdirectory %s", sub)
		}
	}
	// No proxy: cgcat started no process of its own (no CodeGraph child).
	if kids := childPIDs(cg.cmd.Process.Pid); len(kids) > 0 {
		t.Fatalf("cgcat serve has child processes %v", kids)
	}
	t.Logf("R34 handoff B, C, nested D from one working directory: %s in all", time.Since(start).Round(time.Millisecond))
}

// childPIDs lists the children of pid (Linux /proc; nil elsewhere).
func childPIDs(pid int) []string {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	var kids []string
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		kids = append(kids, strings.Fields(string(b))...)
	}
	return kids
}
