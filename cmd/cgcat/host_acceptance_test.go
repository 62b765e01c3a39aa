//go:build unix

package main

// The eight acceptance steps of seed 000 section 13.2 in each real host
// (Codex, OpenCode, Claude Code, Gemini CLI from npm), with the scripted
// model (internal/scriptedmodel) and the real CodeGraph, on the shared
// fixture (e2e_test.go) where the workspace A and the projects B and C
// each define formatReceipt, and @acme/sdk has two checkouts (1.4.0 and
// 2.1.0):
//
//  1. registration: the model is offered cgcat's two tools, under the
//     host's names with cgcat's exact descriptions and instructions, and
//     the native codegraph_explore (host version recorded);
//  2. discovery: the catalog answer holds B and C with their paths and
//     purposes;
//  3. native query: B, then C, in one session (one host process, one
//     working directory), the native config byte for byte as before;
//  4. source distinction: the final answer names, for each task, the
//     project and its own file and code (formatReceipt of B is B's, of C
//     is C's); @acme/sdk at 2.1.0 is told from 1.4.0 by its version;
//  5. history recovery: in a second session, a saved projectId (from the
//     answer of step 2) and a GBrain card's projectId (GBrain on, the fake
//     GBrain) resolved through the host, then explored;
//  6. no proxy: checked from /proc while the host's cgcat serve is alive
//     after both native calls: no child process, no open file under any
//     .codegraph, no socket; the CodeGraph server is not its descendant;
//     no code query in cgcat's data dir afterwards;
//  7. regression: in the second session, a question about the main
//     workspace makes no catalog call; killing cgcat's server mid-session
//     (between its answer and the native call) leaves codegraph_explore
//     working;
//  8. the IDE path: Codex through `codex app-server` (the JSON-RPC
//     protocol editors use) with a model turn (codex_appserver_test.go).
//
// Each host runs two sessions (three where a host needs the allow rule,
// proved by a refused turn first), sharing the fixture and the host's
// home; figures (steps passed, turn time, tool-list bytes, catalog calls
// per task) are logged per host. CGCAT_AGENT_TRACE=1 logs every request
// of every session with the time since the one before.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cgcat/cgcat/cmd/cgcat/hostconfig"
	"github.com/cgcat/cgcat/cmd/cgcat/internal/scriptedmodel"
	"github.com/cgcat/cgcat/gbrain/gbraintest"
	"github.com/cgcat/cgcat/local/config"
)

// The code queries of the tasks: what a proxy would see, and what cgcat
// must never see or log.
const (
	sharedSymbol = "formatReceipt"
	sdkSymbol    = "AcmeClient"
)

func TestHostAcceptance(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the no-proxy and regression steps look at processes in /proc: Linux only")
	}
	p := e2eFixture(t)
	e2eTool(t, "codegraph")
	// The fake GBrain is built before HOME moves (a build under a fresh
	// HOME would start from an empty module cache).
	gbraintest.Binary(t)
	var report []string
	for _, h := range agentHosts {
		t.Run(h.host, func(t *testing.T) {
			bin := e2eTool(t, h.bin)
			a := newAcceptance(t, h, bin, p)
			a.run()
			report = append(report, a.summary())
		})
	}
	t.Logf("seed 13.2 acceptance, per host:\n%s", strings.Join(report, "\n"))
}

// acceptance is one host's run of the eight steps.
type acceptance struct {
	t            *testing.T
	h            agentHost
	bin          string
	p            *e2eProjects
	r            *agentRun
	dataDir      string
	fake         *gbraintest.Fake
	ours         published
	instructions string // `cgcat instructions`, pasted into the workspace's memory file
	version      string // the host's --version

	passed, failed []string
	sessions       []sessionFigures
}

// sessionFigures are the measures of one session.
type sessionFigures struct {
	name                string
	elapsed             time.Duration
	requests            int // model requests with tools
	tasks, catalogCalls int
	nativeCalls         int
	toolBytes, ourBytes int // the tool list the model received, and cgcat's two tools in it
	// startup is the host's start to its first model request; tail its
	// last model request to its exit.
	startup, tail time.Duration
}

func newAcceptance(t *testing.T, h agentHost, bin string, p *e2eProjects) *acceptance {
	e := newTestEnv(t)
	a := &acceptance{t: t, h: h, bin: bin, p: p, dataDir: filepath.Join(e.base, "data"), fake: gbraintest.New(t, gbSource)}
	e.cfgPath = filepath.Join(e.base, "cgcat.json")
	model := scriptedmodel.Start()
	t.Cleanup(model.Close)
	if d := os.Getenv("CGCAT_AGENT_DUMP"); d != "" {
		model.DumpDir = filepath.Join(d, h.host)
		os.MkdirAll(model.DumpDir, 0o755)
	}
	a.r = &agentRun{e: e, model: model, workspace: p.a, npmBin: filepath.Dir(bin)}
	a.writeConfig(false)
	a.ours = publishedTools(t, e.cfgPath, p.home)
	out, _ := execOutput(bin, "--version")
	a.version = strings.TrimSpace(out)
	return a
}

// writeConfig writes cgcat's config over the fixture, with GBrain (the
// fake) on or off. A running serve applies it before its next answer; a
// host starts a new serve per session anyway.
func (a *acceptance) writeConfig(gbrainOn bool) {
	cfg, err := config.AdHoc([]string{a.p.root}, a.dataDir)
	if err != nil {
		a.t.Fatal(err)
	}
	if gbrainOn {
		fc := a.fake.Connection()
		cfg.GBrain.Enabled = true
		cfg.GBrain.ConnectionRef = "fake-gbrain"
		cfg.Connections = map[string]config.Connection{"fake-gbrain": {Command: fc.Command, Args: fc.Args, Env: fc.Env}}
	}
	b, err := config.Marshal(cfg)
	if err != nil {
		a.t.Fatal(err)
	}
	writeTestFile(a.t, a.r.e.cfgPath, string(b))
}

// step runs one acceptance check as a subtest and records whether it
// passed.
func (a *acceptance) step(name string, fn func(t *testing.T)) {
	if a.t.Run(name, fn) {
		a.passed = append(a.passed, name)
	} else {
		a.failed = append(a.failed, name)
	}
}

func (a *acceptance) run() {
	t, h, r := a.t, a.h, a.r
	// The user pasted `cgcat instructions` into the workspace's memory file
	// (restored after the host's run: the fixture's A is shared).
	instructions, err := hostconfig.Instructions("en")
	if err != nil {
		t.Fatal(err)
	}
	a.instructions = instructions
	memory := filepath.Join(r.workspace, memoryFile[h.host])
	writeTestFile(t, memory, "# Project A\n\n"+instructions)
	t.Cleanup(func() { os.Remove(memory) })
	// The catalog is there before the host starts (as after `cgcat scan`).
	out, errOut, code := runCmd(func(out, errOut *bytes.Buffer) error {
		return runScan(context.Background(), r.e.globals(), &scanOptions{}, out, errOut)
	})
	if code != 0 {
		t.Fatalf("cgcat scan: exit %d\n%s%s", code, out, errOut)
	}
	t.Setenv("PATH", r.npmBin+string(os.PathListSeparator)+envValue(origEnv, "PATH"))
	h.userConfig(t, r)
	nativeBefore := a.nativeConfig()
	a.install()
	// The native CodeGraph entry is the user's, unchanged by the install.
	if !strings.Contains(a.nativeConfig(), nativeEntry[h.host]) {
		t.Fatalf("install changed the user's CodeGraph entry:\nbefore:\n%s\nafter:\n%s", nativeBefore, a.nativeConfig())
	}

	a.sessionLater(a.sessionOne())
	if h.host == hostCodex {
		a.appServerStep()
	}
	if a.t.Failed() {
		t.Logf("%s: turns of the failed session are in the step's log", h.host)
	}
}

// nativeEntry is a line of the user's CodeGraph entry as each host's
// config holds it (agent_turn_test.go writes them).
var nativeEntry = map[string]string{
	hostCodex:    `args = ["serve", "--mcp"]`,
	hostOpenCode: `"command": ["codegraph", "serve", "--mcp"],`,
	hostClaude:   `"command": "codegraph",`,
	hostGemini:   `"command": "codegraph",`,
}

// nativeConfig is the host's config file that holds the CodeGraph entry.
func (a *acceptance) nativeConfig() string {
	e := a.r.e
	path := map[string]string{
		hostCodex:    e.codexFile(),
		hostOpenCode: filepath.Join(e.opencodeDir(), "opencode.jsonc"),
		hostClaude:   filepath.Join(e.home, ".claude.json"),
		hostGemini:   filepath.Join(e.home, ".gemini", "settings.json"),
	}[a.h.host]
	return readTestFile(a.t, path)
}

// install runs `cgcat install` as a user would (first without the allow
// rule where the host needs it, proving it does) and doctor after it.
func (a *acceptance) install() {
	t, h, e := a.t, a.h, a.r.e
	install := func(o installOptions) string {
		t.Helper()
		out, errOut, code := e.install(t, h.host, o)
		if code != 0 {
			t.Fatalf("cgcat install %s: exit %d\n%s%s", h.host, code, out, errOut)
		}
		mustContain(t, out, `CodeGraph: CodeGraph's MCP server "codegraph" (codegraph `, "offers codegraph_explore with projectPath")
		return out
	}
	if h.needsAllow {
		out := install(installOptions{})
		mustContain(t, out, "ignores readOnlyHint", "cgcat install "+h.host+" --allow-tools")
		final, turns, _ := runAgentPrompt(t, h, a.bin, a.r, scriptedmodel.Prompt("@fruit/banana-sdk", sharedSymbol))
		if strings.Contains(final, scriptedmodel.Answer) || !refusedCatalog(turns) {
			t.Fatalf("%s without the allow rule: the catalog call was neither refused nor hidden, so the rule would not be needed\n%s", h.host, describeTurns(turns))
		}
	}
	install(h.install)
	dout, _, dcode := e.doctor(t, &globalOptions{configPath: e.cfgPath})
	sec := doctorSection(dout, h.host)
	if dcode != 0 || strings.Contains(sec, "✗") || strings.Contains(sec, "  ! ") {
		t.Fatalf("doctor: exit %d\n%s", dcode, dout)
	}
	mustContain(t, sec, "· "+h.bin+" CLI: ", "✓ started as "+hostTitle(h.host)+" starts it: cgcat ",
		`✓ CodeGraph's MCP server "codegraph": codegraph 1.6.1 starts and offers codegraph_explore with projectPath`, "✓ approval: ")
}

// session runs one prompt of tasks and records its figures.
func (a *acceptance) session(name string, tasks ...scriptedmodel.Task) (string, []scriptedmodel.Turn) {
	final, turns, _ := runAgentPrompt(a.t, a.h, a.bin, a.r, scriptedmodel.Prompts(tasks...))
	a.record(name, len(tasks), turns, a.r.started, a.r.ended)
	return final, turns
}

// record keeps the figures of a session whose host ran from start to end.
func (a *acceptance) record(name string, tasks int, turns []scriptedmodel.Turn, start, end time.Time) {
	f := sessionFigures{name: name, elapsed: end.Sub(start), tasks: tasks}
	main := mainTurns(turns)
	f.requests = len(main)
	if len(main) > 0 {
		f.toolBytes = main[0].ToolBytes
		for _, tl := range main[0].Tools {
			if strings.Contains(tl.FullName(), "local_codegraph_") {
				f.ourBytes += tl.Bytes
			}
		}
		last := main[len(main)-1]
		for _, res := range last.Results {
			switch {
			case strings.Contains(res.Tool, "local_codegraph_"):
				f.catalogCalls++
			case strings.HasSuffix(res.Tool, scriptedmodel.ExploreTool):
				f.nativeCalls++
			}
		}
	}
	if len(turns) > 0 {
		f.startup, f.tail = turns[0].At.Sub(start), end.Sub(turns[len(turns)-1].At)
	}
	a.sessions = append(a.sessions, f)
	if os.Getenv("CGCAT_AGENT_TRACE") != "" {
		a.t.Logf("%s session %q: first request after %s, exit %s after the last:\n%s", a.h.host, name, f.startup.Round(time.Millisecond), f.tail.Round(time.Millisecond), describeTurns(turns))
	}
}

// mainTurns are the requests that offered tools (not a title or a
// classifier on the side).
func mainTurns(turns []scriptedmodel.Turn) []scriptedmodel.Turn {
	var main []scriptedmodel.Turn
	for _, tn := range turns {
		if len(tn.Tools) > 0 && len(scriptedmodel.ParseTasks(tn.Prompt)) > 0 {
			main = append(main, tn)
		}
	}
	return main
}

// sessionOne: registration, discovery, B then C, source distinction, and
// the /proc check of the serve process at the final answer.
func (a *acceptance) sessionOne() []scriptedmodel.Turn {
	h, p := a.h, a.p
	nativeBefore := a.nativeConfig()
	var (
		mu      sync.Mutex // the hook runs in the model server's handler
		proxy   []string
		checked bool
	)
	a.r.model.BeforeReply(func(tn *scriptedmodel.Turn) {
		mu.Lock()
		defer mu.Unlock()
		if tn.Reply.Call == nil && strings.Contains(tn.Reply.Text, "## Task 3") && !checked {
			checked = true
			proxy = a.noProxyFindings()
		}
	})
	final, turns := a.session("B, C and @acme/sdk@2.1.0",
		scriptedmodel.Task{Kind: scriptedmodel.TaskFind, Project: "@fruit/banana-sdk", Code: sharedSymbol},
		scriptedmodel.Task{Kind: scriptedmodel.TaskFind, Project: "@fruit/cherry-ledger", Code: sharedSymbol},
		scriptedmodel.Task{Kind: scriptedmodel.TaskFind, Project: "@acme/sdk", Version: "2.1.0", Code: sdkSymbol})
	a.r.model.BeforeReply(nil)
	main := mainTurns(turns)
	last := scriptedmodel.Turn{}
	if len(main) > 0 {
		last = main[len(main)-1]
	}

	a.step("1 registration", func(t *testing.T) {
		if len(main) == 0 {
			t.Fatalf("%s (%s) made no model request with tools:\n%s", h.host, a.version, describeTurns(turns))
		}
		checkOffered(t, h, main[0], a.ours)
		checkContext(t, h, main, a.ours.instructions, a.instructions)
		t.Logf("%s %s: offered %d tools (%d bytes of tool list, %d of them cgcat's two tools)", h.bin, a.version, len(main[0].Tools), main[0].ToolBytes, a.sessions[len(a.sessions)-1].ourBytes)
	})
	a.step("2 discovery", func(t *testing.T) {
		for _, want := range []struct{ query, path, purpose string }{
			{"@fruit/banana-sdk", p.b, "Client for the banana order service"},
			{"@fruit/cherry-ledger", p.c, "Cherry ledger service"},
		} {
			res := resultFor(last, h.catalogName, want.query, main)
			if res == nil {
				t.Fatalf("no catalog result for %s:\n%s", want.query, describeTurns(turns))
			}
			cs := scriptedmodel.Candidates(res.Text)
			if len(cs) == 0 || cs[0].Path != want.path || !strings.Contains(res.Text, want.purpose) {
				t.Fatalf("catalog answer for %s as the model got it: %+v\n%s", want.query, cs, res.Text)
			}
		}
	})
	a.step("3 native query B then C", func(t *testing.T) {
		var paths []string
		for _, tn := range main {
			if c := tn.Reply.Call; c != nil && c.Tool.FullName() == h.exploreName {
				paths = append(paths, fmt.Sprint(c.Args["projectPath"]))
			}
		}
		if want := []string{p.b, p.c, p.sdk2}; !slices.Equal(paths, want) {
			t.Fatalf("codegraph_explore calls with projectPath %q, want %q (one session)\n%s", paths, want, describeTurns(turns))
		}
		for _, res := range last.Results {
			if res.IsError {
				t.Fatalf("a tool call failed: %s: %s", res.Tool, res.Text)
			}
		}
		if a.nativeConfig() != nativeBefore {
			t.Fatal("the host's config changed during the session")
		}
	})
	a.step("4 source distinction", func(t *testing.T) {
		sections := answerSections(final)
		if len(sections) != 3 {
			t.Fatalf("the final answer has %d task sections, want 3:\n%s\nturns:\n%s", len(sections), final, describeTurns(turns))
		}
		checkSection(t, sections[0], p.b, []string{"src/orders.ts", "banana receipt", `"@fruit/banana-sdk"`}, []string{"src/ledger.ts", "cherry receipt"})
		checkSection(t, sections[1], p.c, []string{"src/ledger.ts", "cherry receipt", `"@fruit/cherry-ledger"`}, []string{"src/orders.ts", "banana receipt"})
		checkSection(t, sections[2], p.sdk2, []string{"(version 2.1.0)", "openSession", "src/client.ts"}, []string{"legacyConnect", p.sdk1 + ":"})
	})
	a.step("6 no proxy", func(t *testing.T) {
		mu.Lock()
		defer mu.Unlock()
		if !checked {
			t.Fatal("the session ended before its final answer: the serve process was never looked at")
		}
		for _, f := range proxy {
			t.Error(f)
		}
		a.checkNoQueryLog(t)
	})
	return turns
}

// resultFor finds, in the last request's results (one per call, in call
// order), the result of the call to tool whose arguments held query.
func resultFor(last scriptedmodel.Turn, tool, query string, main []scriptedmodel.Turn) *scriptedmodel.Result {
	i := 0
	for _, tn := range main {
		c := tn.Reply.Call
		if c == nil {
			continue
		}
		if c.Tool.FullName() == tool && (c.Args["query"] == query || c.Args["projectId"] == query) && i < len(last.Results) {
			return &last.Results[i]
		}
		i++
	}
	return nil
}

// checkOffered: cgcat's tools under the host's naming with cgcat's exact
// descriptions, and the native codegraph_explore.
func checkOffered(t *testing.T, h agentHost, first scriptedmodel.Turn, ours published) {
	t.Helper()
	names := map[string]scriptedmodel.Tool{}
	for _, tl := range first.Tools {
		names[tl.FullName()] = tl
	}
	for tool, desc := range ours.descriptions {
		full := strings.TrimSuffix(h.catalogName, hostconfig.ToolProjects) + tool
		got, ok := names[full]
		if !ok {
			t.Fatalf("%s: the model was not offered %s", h.host, full)
		}
		if got.Description != desc {
			t.Fatalf("%s: the model got %s's description changed:\n got  %q\n want %q", h.host, full, got.Description, desc)
		}
	}
	if _, ok := names[h.exploreName]; !ok {
		t.Fatalf("%s: the model was not offered %s", h.host, h.exploreName)
	}
}

// checkContext: cgcat's server instructions and `cgcat instructions` (from
// the memory file) reached the model intact.
func checkContext(t *testing.T, h agentHost, main []scriptedmodel.Turn, serverInstructions, snippet string) {
	t.Helper()
	var context string
	for _, tn := range main {
		context += tn.System + "\n" + tn.Prompt + "\n"
	}
	// Line by line: OpenCode indents each line of a server's instructions.
	for _, line := range strings.Split(serverInstructions, "\n") {
		if !strings.Contains(context, line) {
			t.Fatalf("%s: the model did not get cgcat's server instructions intact; missing:\n%q", h.host, line)
		}
	}
	for _, para := range strings.Split(strings.TrimSpace(snippet), "\n\n") {
		if !strings.Contains(context, para) {
			t.Fatalf("%s: the model did not get `cgcat instructions` from %s intact:\n%q", h.host, memoryFile[h.host], para)
		}
	}
}

// answerSections splits the model's final answer (as the host printed it)
// into its task sections.
func answerSections(final string) []string {
	parts := strings.Split(final, "## Task ")
	if len(parts) < 2 {
		return nil
	}
	return parts[1:]
}

// checkSection: a task's section names the project by path and holds its
// own code, never the other project's.
func checkSection(t *testing.T, sec, path string, has, hasNot []string) {
	t.Helper()
	if !strings.Contains(sec, scriptedmodel.Answer+path+":") {
		t.Fatalf("the section does not quote CodeGraph on %s:\n%s", path, sec)
	}
	for _, w := range has {
		if !strings.Contains(sec, w) {
			t.Fatalf("the section on %s lacks %q:\n%s", path, w, sec)
		}
	}
	for _, w := range hasNot {
		if strings.Contains(sec, w) {
			t.Fatalf("the section on %s holds %q from another project:\n%s", path, w, sec)
		}
	}
}

// sessionLater is a new session with GBrain on: a question about the
// workspace (no catalog call), the id saved from the first session's
// answer (B) and a GBrain card's id (C) resolved and explored, then B
// found again, with cgcat's server killed between its answer and the
// native call.
func (a *acceptance) sessionLater(s1 []scriptedmodel.Turn) {
	t, h, p := a.t, a.h, a.p
	var saved string
	if m := mainTurns(s1); len(m) > 0 {
		if res := resultFor(m[len(m)-1], h.catalogName, "@fruit/banana-sdk", m); res != nil {
			if cs := scriptedmodel.Candidates(res.Text); len(cs) > 0 {
				saved = cs[0].ID
			}
		}
	}
	if saved == "" {
		t.Error("the first session's answer gave no projectId to save")
		saved = "cg_aaaaaaaaaaaaaaaa"
	}
	card := a.cardID("@fruit/cherry-ledger")
	a.writeConfig(true)
	defer a.writeConfig(false)
	var (
		mu      sync.Mutex // the hook runs in the model server's handler
		killed  = -1
		killErr error
	)
	a.r.model.BeforeReply(func(tn *scriptedmodel.Turn) {
		mu.Lock()
		defer mu.Unlock()
		// The native call that follows the catalog's answer for B (task 4).
		afterCatalog := len(tn.Results) > 0 && strings.HasSuffix(tn.Results[len(tn.Results)-1].Tool, hostconfig.ToolProjects)
		if c := tn.Reply.Call; killed == -1 && c != nil && c.Tool.FullName() == h.exploreName && afterCatalog {
			killed, killErr = a.killServe()
		}
	})
	final, turns := a.session("workspace, saved id, GBrain card, then B with cgcat killed",
		scriptedmodel.Task{Kind: scriptedmodel.TaskWorkspace, Code: sharedSymbol},
		scriptedmodel.Task{Kind: scriptedmodel.TaskResolve, Project: saved, Code: sharedSymbol},
		scriptedmodel.Task{Kind: scriptedmodel.TaskResolve, Project: card, Code: sharedSymbol},
		scriptedmodel.Task{Kind: scriptedmodel.TaskFind, Project: "@fruit/banana-sdk", Code: sharedSymbol})
	a.r.model.BeforeReply(nil)
	main := mainTurns(turns)
	sections := answerSections(final)
	wellFormed := func(t *testing.T) {
		t.Helper()
		if len(main) == 0 || len(sections) != 4 {
			t.Fatalf("the final answer has %d task sections, want 4:\n%s\nturns:\n%s\nhost stderr:\n%s", len(sections), final, describeTurns(turns), a.r.stderr)
		}
	}
	a.step("5 history recovery", func(t *testing.T) {
		wellFormed(t)
		resolveName := strings.TrimSuffix(h.catalogName, hostconfig.ToolProjects) + hostconfig.ToolResolve
		for _, id := range []string{saved, card} {
			res := resultFor(main[len(main)-1], resolveName, id, main)
			if res == nil || !strings.Contains(res.Text, "GBrain ok") && !strings.Contains(res.Text, `"gbrainState":"ok"`) {
				t.Fatalf("resolve %s through %s: no answer with GBrain on:\n%s", id, h.host, describeTurns(turns))
			}
		}
		checkSection(t, sections[1], p.b, []string{"banana receipt"}, []string{"cherry receipt"})
		checkSection(t, sections[2], p.c, []string{"cherry receipt"}, []string{"banana receipt"})
	})
	a.step("7 regression", func(t *testing.T) {
		wellFormed(t)
		// The workspace question: one native call, no catalog call first.
		if c := main[0].Reply.Call; c == nil || c.Tool.FullName() != h.exploreName || c.Args["projectPath"] != nil {
			t.Fatalf("the workspace question did not go to %s first (without projectPath):\n%s", h.exploreName, describeTurns(turns))
		}
		checkSection(t, sections[0], "the current workspace", []string{"workspace receipt", "src/app.ts"}, []string{"banana receipt", "cherry receipt"})
		mu.Lock()
		defer mu.Unlock()
		if killErr != nil || killed <= 0 {
			t.Fatalf("cgcat serve was not killed mid-session (pid %d): %v\n%s", killed, killErr, describeTurns(turns))
		}
		// Killed after its answer for B: CodeGraph still answers for B.
		checkSection(t, sections[3], p.b, []string{"banana receipt"}, []string{"workspace receipt"})
	})
}

// cardID pushes the catalog's cards into the fake GBrain (`cgcat gbrain
// sync`) and reads the projectId of the card named name, as an agent
// reading GBrain would.
func (a *acceptance) cardID(name string) string {
	t := a.t
	t.Helper()
	a.writeConfig(true)
	defer a.writeConfig(false)
	out, errOut, code := runCmd(func(out, errOut *bytes.Buffer) error {
		return runGBrainSync(context.Background(), a.r.e.globals(), &gbrainSyncOptions{stall: time.Minute}, out, errOut)
	})
	if code != 0 {
		t.Fatalf("cgcat gbrain sync: exit %d\n%s%s", code, out, errOut)
	}
	for _, pg := range a.fake.Pages(t) {
		if pg.Title != name {
			continue
		}
		for _, kv := range pg.Frontmatter {
			if id, ok := kv.V.(string); ok && kv.K == "project_id" {
				return id
			}
		}
	}
	t.Errorf("no GBrain card titled %q among %d pages", name, len(a.fake.Pages(t)))
	return "cg_bbbbbbbbbbbbbbbb"
}

func execOutput(bin string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = &out, io.Discard
	err := cmd.Run()
	return out.String(), err
}

// summary is the host's line of the acceptance report.
func (a *acceptance) summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s): %d/%d steps pass", a.h.host, a.version, len(a.passed), len(a.passed)+len(a.failed))
	if len(a.failed) > 0 {
		fmt.Fprintf(&b, " (failed: %s)", strings.Join(a.failed, ", "))
	}
	for _, s := range a.sessions {
		perTask := 0.0
		if s.tasks > 0 {
			perTask = float64(s.catalogCalls) / float64(s.tasks)
		}
		fmt.Fprintf(&b, "\n  session %q: %s (host start to first request %s, last request to exit %s), %d model requests, %d tasks: %d catalog calls (%.2f a task) and %d native calls, tool list %d bytes (cgcat's tools %d)",
			s.name, s.elapsed.Round(time.Millisecond), s.startup.Round(time.Millisecond), s.tail.Round(time.Millisecond), s.requests, s.tasks, s.catalogCalls, perTask, s.nativeCalls, s.toolBytes, s.ourBytes)
	}
	return b.String()
}
