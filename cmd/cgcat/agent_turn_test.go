package main

// Real agent turns (seed 13.2, issue 17): Codex, OpenCode, Claude Code and
// Gemini CLI from npm each run one prompt against a scripted model
// (internal/scriptedmodel) in a private HOME where `cgcat install <host>`
// wrote cgcat's entry beside the user's own CodeGraph entry. The model
// calls the catalog tool under the host's naming, reads projectPath from
// the result it received, calls the real codegraph_explore with it, and
// answers with what CodeGraph returned. Each host does this for B, then
// for C, from the same working directory.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cgcat/cgcat/cmd/cgcat/hostconfig"
	"github.com/cgcat/cgcat/cmd/cgcat/hostlaunch"
	"github.com/cgcat/cgcat/cmd/cgcat/internal/scriptedmodel"
)

// agentHost describes how one host is set up and run headless.
type agentHost struct {
	host string // cgcat's host name (install codex|opencode|claude|gemini)
	bin  string // the npm command
	// userConfig writes the user's own config before cgcat install: the
	// scripted model as provider and CodeGraph's entry as CodeGraph's own
	// installer writes it (named "codegraph", started by PATH lookup).
	userConfig func(t *testing.T, r *agentRun)
	// command is the headless one-prompt run.
	command func(r *agentRun, prompt string) (args []string, env []string)
	// Tool names as this host shows them to the model.
	catalogName, exploreName string
	install                  installOptions
	// needsAllow: the host ignores readOnlyHint, so a call needs the allow
	// rule `cgcat install --allow-tools` writes (checked without it first).
	needsAllow bool
}

// agentRun is one host in its private HOME.
type agentRun struct {
	e         *testEnv
	model     *scriptedmodel.Server
	workspace string // the agent's working directory (project A)
	npmBin    string // the npm .bin directory (codegraph is found on PATH)
	env       []string
}

func (r *agentRun) baseEnv(extra ...string) []string {
	path := r.npmBin + string(os.PathListSeparator) + envValue(origEnv, "PATH")
	env := []string{"HOME=" + r.e.home, "LANG=C.UTF-8", "TMPDIR=" + os.TempDir(), "PATH=" + path,
		"XDG_CONFIG_HOME=" + r.e.xdgConfig, "CODEX_HOME=" + r.e.codexHome,
		"XDG_DATA_HOME=" + filepath.Join(r.e.home, ".local", "share"),
		"XDG_CACHE_HOME=" + filepath.Join(r.e.home, ".cache"),
		"XDG_STATE_HOME=" + filepath.Join(r.e.home, ".local", "state"),
		"PWD=" + r.workspace}
	for _, kv := range origEnv {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS":
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

func envValue(env []string, key string) string {
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v
		}
	}
	return ""
}

// hostStartupSeconds is how long the hosts give MCP servers to start and
// list their tools before a turn: Codex 0.171 starts a turn once its
// optional servers' grace (mcp_optional_startup_grace_ms) is over, and on a
// loaded 2-core machine CodeGraph's Node server was not ready by then, so
// the model was not offered codegraph_explore; OpenCode waits 5 s. The
// entries cgcat installs keep their own settings.
const hostStartupSeconds = 120

// codegraphEntryEnv keeps the user's CodeGraph quiet and in-process.
var codegraphEntryEnv = map[string]string{"CODEGRAPH_TELEMETRY": "0", "CODEGRAPH_NO_UPDATE_CHECK": "1", "CODEGRAPH_NO_DAEMON": "1"}

var agentHosts = []agentHost{
	{
		host: hostCodex, bin: "codex",
		catalogName: "mcp__codegraph_catalog.local_codegraph_projects",
		exploreName: "mcp__codegraph.codegraph_explore",
		userConfig: func(t *testing.T, r *agentRun) {
			writeTestFile(t, r.e.codexFile(), fmt.Sprintf(`# the user's own Codex config
model = "gpt-5-codex"
model_provider = "scripted"
check_for_update_on_startup = false
mcp_optional_startup_grace_ms = %d

[model_providers.scripted]
name = "scripted"
base_url = "%s/v1"
wire_api = "responses"

[analytics]
enabled = false

[features]
plugins = false
remote_plugin = false
apps = false

[mcp_servers.codegraph]
command = "codegraph"
args = ["serve", "--mcp"]
env = { CODEGRAPH_TELEMETRY = "0", CODEGRAPH_NO_UPDATE_CHECK = "1", CODEGRAPH_NO_DAEMON = "1" }
startup_timeout_sec = %d
`, hostStartupSeconds*1000, r.model.URL, hostStartupSeconds))
		},
		command: func(r *agentRun, prompt string) ([]string, []string) {
			return []string{"exec", "--skip-git-repo-check", prompt}, r.baseEnv()
		},
	},
	{
		host: hostOpenCode, bin: "opencode",
		catalogName: "codegraph-catalog_local_codegraph_projects",
		exploreName: "codegraph_codegraph_explore",
		userConfig: func(t *testing.T, r *agentRun) {
			writeTestFile(t, filepath.Join(r.e.opencodeDir(), "opencode.jsonc"), fmt.Sprintf(`{
  // the user's own OpenCode config
  "$schema": "https://opencode.ai/config.json",
  "autoupdate": false,
  "share": "disabled",
  "model": "scripted/agent",
  "provider": {
    "scripted": {
      "npm": "@ai-sdk/openai-compatible",
      "name": "Scripted",
      "options": {"baseURL": "%s/v1", "apiKey": "dummy"},
      "models": {"agent": {"name": "agent", "tool_call": true}},
    },
  },
  "mcp": {
    "codegraph": {
      "type": "local",
      "command": ["codegraph", "serve", "--mcp"],
      "environment": {"CODEGRAPH_TELEMETRY": "0", "CODEGRAPH_NO_UPDATE_CHECK": "1", "CODEGRAPH_NO_DAEMON": "1"},
      "enabled": true,
      "timeout": %d,
    },
  },
}
`, r.model.URL, hostStartupSeconds*1000))
		},
		command: func(r *agentRun, prompt string) ([]string, []string) {
			// OpenCode takes its project from $PWD; with a fresh HOME it would
			// look its plugins' dependencies up on npm (npm_config_offline).
			return []string{"run", prompt}, r.baseEnv("npm_config_offline=true",
				"OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_LSP_DOWNLOAD=1", "OPENCODE_DISABLE_SHARE=1")
		},
	},
	{
		host: hostClaude, bin: "claude",
		catalogName: "mcp__codegraph-catalog__local_codegraph_projects",
		exploreName: "mcp__codegraph__codegraph_explore",
		install:     installOptions{allowTools: true},
		needsAllow:  true,
		userConfig: func(t *testing.T, r *agentRun) {
			// What `codegraph install --target claude` writes: the server in
			// .claude.json and an allow rule for all of its tools.
			writeTestFile(t, filepath.Join(r.e.home, ".claude.json"), `{
  "mcpServers": {
    "codegraph": {
      "type": "stdio",
      "command": "codegraph",
      "args": ["serve", "--mcp"],
      "env": {"CODEGRAPH_TELEMETRY": "0", "CODEGRAPH_NO_UPDATE_CHECK": "1", "CODEGRAPH_NO_DAEMON": "1"},
      "alwaysLoad": true
    }
  }
}`)
			writeTestFile(t, filepath.Join(r.e.home, ".claude", "settings.json"), `{
  "permissions": {
    "allow": [
      "mcp__codegraph__*"
    ]
  }
}
`)
		},
		command: func(r *agentRun, prompt string) ([]string, []string) {
			return []string{"-p", prompt}, r.baseEnv("ANTHROPIC_BASE_URL="+r.model.URL, "ANTHROPIC_API_KEY=dummy",
				"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", fmt.Sprintf("MCP_TIMEOUT=%d", hostStartupSeconds*1000))
		},
	},
	{
		host: hostGemini, bin: "gemini",
		catalogName: "mcp_codegraph-catalog_local_codegraph_projects",
		exploreName: "mcp_codegraph_codegraph_explore",
		install:     installOptions{allowTools: true},
		needsAllow:  true,
		userConfig: func(t *testing.T, r *agentRun) {
			// The user's own settings: the API key auth the scripted model
			// needs, CodeGraph's entry as its installer writes it, and the
			// user's own policy allowing CodeGraph's explore tool.
			writeTestFile(t, filepath.Join(r.e.home, ".gemini", "settings.json"), `{
  "security": {"auth": {"selectedType": "gemini-api-key"}},
  "general": {"disableAutoUpdate": true, "disableUpdateNag": true},
  "telemetry": {"enabled": false},
  "privacy": {"usageStatisticsEnabled": false},
  "mcpServers": {
    "codegraph": {
      "type": "stdio",
      "command": "codegraph",
      "args": ["serve", "--mcp"],
      "env": {"CODEGRAPH_TELEMETRY": "0", "CODEGRAPH_NO_UPDATE_CHECK": "1", "CODEGRAPH_NO_DAEMON": "1"}
    }
  }
}
`)
			writeTestFile(t, filepath.Join(r.e.home, ".gemini", "policies", "codegraph.toml"), `[[rule]]
mcpName = "codegraph"
toolName = "codegraph_explore"
decision = "allow"
priority = 100
`)
		},
		command: func(r *agentRun, prompt string) ([]string, []string) {
			return []string{"-p", prompt, "--skip-trust", "-m", "gemini-2.5-flash"},
				r.baseEnv("GOOGLE_GEMINI_BASE_URL="+r.model.URL, "GEMINI_API_KEY=dummy")
		},
	},
}

// memoryFile is where each host reads the project's agent instructions.
var memoryFile = map[string]string{hostCodex: "AGENTS.md", hostOpenCode: "AGENTS.md", hostClaude: "CLAUDE.md", hostGemini: "GEMINI.md"}

func TestAgentTurns(t *testing.T) {
	p := e2eFixture(t)
	// What cgcat itself publishes: each host must hand it to the model
	// unchanged.
	ours := publishedTools(t, p)
	for _, h := range agentHosts {
		t.Run(h.host, func(t *testing.T) {
			bin := e2eTool(t, h.bin)
			e2eTool(t, "codegraph")
			runAgentHost(t, h, bin, p, ours)
		})
	}
}

// published is what cgcat serve tells a host: tool descriptions and the
// server's instructions.
type published struct {
	descriptions map[string]string
	instructions string
}

func publishedTools(t *testing.T, p *e2eProjects) published {
	t.Helper()
	l := hostlaunch.Launch{Command: cgcatBin(t), Args: []string{"serve", "--config", e2eConfig(t, p)}, Env: baseEnv(p.home), Timeout: 30 * time.Second}
	hs, err := hostlaunch.Start(context.Background(), l, "cgcat-test", "1")
	if err != nil {
		t.Fatalf("cgcat serve: %v\n%s", err, hs.Stderr)
	}
	out := published{descriptions: map[string]string{}, instructions: hs.Instructions}
	for name, tl := range hs.Tools {
		out.descriptions[name] = tl.Description
	}
	if len(out.descriptions) != 2 || out.instructions == "" {
		t.Fatalf("cgcat serve publishes %v and instructions %q", out.descriptions, out.instructions)
	}
	return out
}

func runAgentHost(t *testing.T, h agentHost, bin string, p *e2eProjects, ours published) {
	e := newTestEnv(t)
	e.cfgPath = e2eConfig(t, p)
	model := scriptedmodel.Start()
	t.Cleanup(model.Close)
	if d := os.Getenv("CGCAT_AGENT_DUMP"); d != "" {
		model.DumpDir = filepath.Join(d, h.host)
		os.MkdirAll(model.DumpDir, 0o755)
	}
	r := &agentRun{e: e, model: model, workspace: filepath.Join(e.base, "workspace-a"), npmBin: filepath.Dir(bin)}
	// The user's PATH finds codegraph (CodeGraph's installer writes a bare
	// "codegraph"); install starts that entry to check it.
	t.Setenv("PATH", r.npmBin+string(os.PathListSeparator)+envValue(origEnv, "PATH"))
	// The user pasted `cgcat instructions` into the project's memory file.
	instructions, err := hostconfig.Instructions("en")
	if err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, filepath.Join(r.workspace, memoryFile[h.host]), "# Project A\n\n"+instructions)
	// The catalog is there before the host starts (as after `cgcat scan`).
	out, errOut, code := runCmd(func(out, errOut *bytes.Buffer) error {
		return runScan(context.Background(), &globalOptions{configPath: e.cfgPath}, &scanOptions{}, out, errOut)
	})
	if code != 0 {
		t.Fatalf("cgcat scan: exit %d\n%s%s", code, out, errOut)
	}
	h.userConfig(t, r)

	steps := []struct {
		name, query, code, has, hasNot, path string
	}{
		{"B", "@fruit/banana-sdk", "BananaOrdersClient createBananaOrder", "BananaOrdersClient", "CherryLedgerService", p.b},
		{"C", "@fruit/cherry-ledger", "CherryLedgerService postCherryEntry", "CherryLedgerService", "BananaOrdersClient", p.c},
	}
	install := func(o installOptions) string {
		t.Helper()
		out, errOut, code := e.install(t, h.host, o)
		if code != 0 {
			t.Fatalf("cgcat install %s: exit %d\n%s%s", h.host, code, out, errOut)
		}
		// The user's CodeGraph entry was found, named and started.
		mustContain(t, out, `CodeGraph: CodeGraph's MCP server "codegraph" (codegraph `, "offers codegraph_explore with projectPath")
		return out
	}
	if h.needsAllow {
		// Without --allow-tools the host cannot run our tools unattended:
		// install says so and names the flag, and a real turn proves it.
		out := install(installOptions{})
		mustContain(t, out, "ignores readOnlyHint", "cgcat install "+h.host+" --allow-tools")
		final, _, turns, _ := runAgentPrompt(t, h, bin, r, scriptedmodel.Prompt(steps[0].query, steps[0].code))
		if strings.Contains(final, scriptedmodel.Answer) || !refusedCatalog(turns) {
			t.Fatalf("%s without the allow rule: the catalog call was neither refused nor hidden, so the rule would not be needed\n%s", h.host, describeTurns(turns))
		}
		t.Logf("%s without the allow rule: %s", h.host, strings.TrimSpace(lastReply(turns)))
	}
	out = install(h.install)
	t.Logf("cgcat install %s:\n%s", h.host, out)
	// doctor, with the host's CLI on PATH, finds nothing wrong in this host:
	// both entries start, CodeGraph takes projectPath, no call will ask.
	dout, _, dcode := e.doctor(t, &globalOptions{configPath: e.cfgPath})
	sec := doctorSection(dout, h.host)
	if dcode != 0 || strings.Contains(sec, "✗") || strings.Contains(sec, "  ! ") {
		t.Fatalf("doctor: exit %d\n%s", dcode, dout)
	}
	mustContain(t, sec, "· "+h.bin+" CLI: ", "✓ started as "+hostTitle(h.host)+" starts it: cgcat ",
		`✓ CodeGraph's MCP server "codegraph": codegraph 1.6.1 starts and offers codegraph_explore with projectPath`, "✓ approval: ")

	for _, step := range steps {
		final, stderr, turns, elapsed := runAgentPrompt(t, h, bin, r, scriptedmodel.Prompt(step.query, step.code))
		t.Logf("%s, project %s: one full turn in %s (%d model requests)", h.host, step.name, elapsed.Round(time.Millisecond), len(turns))
		if !strings.Contains(final, scriptedmodel.Answer+step.path) || !strings.Contains(final, step.has) || strings.Contains(final, step.hasNot) {
			t.Fatalf("%s %s: the final answer does not quote CodeGraph on %s (%s, not %s)\nstdout:\n%s\nstderr:\n%s\nturns:\n%s\nunhandled: %v",
				h.bin, step.name, step.path, step.has, step.hasNot, final, stderr, describeTurns(turns), model.Unhandled())
		}
		checkWhatTheModelSaw(t, h, turns, ours, instructions, step.path)
	}
}

// runAgentPrompt runs one headless prompt and returns the host's stdout and
// stderr and the model requests it made.
func runAgentPrompt(t *testing.T, h agentHost, bin string, r *agentRun, prompt string) (string, string, []scriptedmodel.Turn, time.Duration) {
	t.Helper()
	r.model.Reset()
	args, env := h.command(r, prompt)
	ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env, cmd.Dir = env, r.workspace
	stdout, stderr := &hostlaunch.TailBuffer{Max: 1 << 20}, &hostlaunch.TailBuffer{Max: 64 << 10}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	start := time.Now()
	err := cmd.Run()
	elapsed := time.Since(start)
	turns := r.model.Turns()
	if err != nil {
		t.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s\nturns:\n%s", h.bin, err, stdout.String(), stderr.String(), describeTurns(turns))
	}
	return stdout.String(), stderr.String(), turns, elapsed
}

// refusedCatalog: the host refused the catalog call (Claude Code: an
// error result) or did not offer the tool while offering CodeGraph's
// (Gemini CLI -p).
func refusedCatalog(turns []scriptedmodel.Turn) bool {
	for _, tn := range turns {
		for _, r := range tn.Results {
			if strings.HasSuffix(r.Tool, hostconfig.ToolProjects) && r.IsError {
				return true
			}
		}
		if tn.ToolNamed(scriptedmodel.ExploreTool) != nil && tn.ToolNamed(hostconfig.ToolProjects) == nil {
			return true
		}
	}
	return false
}

// doctorSection is one host's section of doctor's text report.
func doctorSection(report, host string) string {
	lines := strings.Split(report, "\n")
	for i, l := range lines {
		if l != host {
			continue
		}
		j := i + 1
		for j < len(lines) && strings.HasPrefix(lines[j], " ") {
			j++
		}
		return strings.Join(lines[i:j], "\n")
	}
	return ""
}

func lastReply(turns []scriptedmodel.Turn) string {
	for i := len(turns) - 1; i >= 0; i-- {
		if turns[i].Reply.Call == nil {
			return turns[i].Reply.Text
		}
	}
	return ""
}

// checkWhatTheModelSaw: our tools under the host's naming with our exact
// descriptions, the server's instructions and `cgcat instructions` intact,
// and a CodeGraph call carrying the path the catalog gave.
func checkWhatTheModelSaw(t *testing.T, h agentHost, turns []scriptedmodel.Turn, ours published, instructions, path string) {
	t.Helper()
	var main []scriptedmodel.Turn
	for _, tn := range turns {
		if len(tn.Tools) > 0 {
			main = append(main, tn)
		}
	}
	if len(main) != 3 {
		t.Fatalf("%s: %d model requests with tools, want 3 (catalog, explore, answer):\n%s", h.host, len(main), describeTurns(turns))
	}
	first := main[0]
	names := map[string]scriptedmodel.Tool{}
	for _, tl := range first.Tools {
		names[tl.FullName()] = tl
	}
	for tool, desc := range ours.descriptions {
		full := strings.TrimSuffix(h.catalogName, hostconfig.ToolProjects) + tool
		got, ok := names[full]
		if !ok {
			t.Fatalf("%s: the model was not offered %s:\n%s", h.host, full, describeTurns(turns))
		}
		if got.Description != desc {
			t.Fatalf("%s: the model got %s's description changed:\n got  %q\n want %q", h.host, full, got.Description, desc)
		}
		t.Logf("%s: %s as the model receives it: description %d bytes, input schema %d bytes", h.host, full, len(got.Description), len(got.Parameters))
	}
	if tl := main[0].Reply.Call; tl == nil || tl.Tool.FullName() != h.catalogName {
		t.Fatalf("%s: the first call is not %s:\n%s", h.host, h.catalogName, describeTurns(turns))
	}
	// The hand-off hint reaches every model in the description itself.
	mustContain(t, ours.descriptions[hostconfig.ToolProjects], "pass it unchanged as projectPath", "codegraph_explore")
	if c := main[1].Reply.Call; c == nil || c.Tool.FullName() != h.exploreName || c.Args["projectPath"] != path {
		t.Fatalf("%s: the second call is not %s with projectPath %s:\n%s", h.host, h.exploreName, path, describeTurns(turns))
	}
	for _, res := range main[2].Results {
		if res.IsError {
			t.Fatalf("%s: a tool call failed (approval?): %s", h.host, res.Text)
		}
	}
	var context string
	for _, tn := range main {
		context += tn.System + "\n" + tn.Prompt + "\n"
	}
	if !strings.Contains(context, ours.instructions) {
		t.Fatalf("%s: the model did not get cgcat's server instructions %q", h.host, ours.instructions)
	}
	for _, para := range strings.Split(strings.TrimSpace(instructions), "\n\n") {
		if !strings.Contains(context, para) {
			t.Fatalf("%s: the model did not get `cgcat instructions` from %s intact (%d bytes):\n%q", h.host, memoryFile[h.host], len(instructions), para)
		}
	}
}

func describeTurns(turns []scriptedmodel.Turn) string {
	var b strings.Builder
	for i, t := range turns {
		names := make([]string, len(t.Tools))
		for j, tl := range t.Tools {
			names[j] = tl.FullName()
		}
		fmt.Fprintf(&b, "%d. %s %s tools=%d %v\n", i+1, t.Wire, t.Path, len(t.Tools), names)
		for _, res := range t.Results {
			fmt.Fprintf(&b, "   result %s err=%v: %.300s\n", res.Tool, res.IsError, res.Text)
		}
		if t.Reply.Call != nil {
			fmt.Fprintf(&b, "   -> call %s %v\n", t.Reply.Call.Tool.FullName(), t.Reply.Call.Args)
		} else {
			fmt.Fprintf(&b, "   -> text %.300q\n", t.Reply.Text)
		}
	}
	return b.String()
}
