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
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cgcat/cgcat/cmd/cgcat/internal/scriptedmodel"
	"github.com/mark3labs/mcp-go/mcp"
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
`, r.model.URL))
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
    },
  },
}
`, r.model.URL))
		},
		command: func(r *agentRun, prompt string) ([]string, []string) {
			// OpenCode takes its project from $PWD; with a fresh HOME it would
			// look its plugins' dependencies up on npm (npm_config_offline).
			return []string{"run", prompt}, r.baseEnv("npm_config_offline=true",
				"OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_LSP_DOWNLOAD=1", "OPENCODE_DISABLE_SHARE=1")
		},
	},
}

func TestAgentTurns(t *testing.T) {
	p := e2eFixture(t)
	for _, h := range agentHosts {
		t.Run(h.host, func(t *testing.T) {
			bin := e2eTool(t, h.bin)
			e2eTool(t, "codegraph")
			runAgentHost(t, h, bin, p)
		})
	}
}

func runAgentHost(t *testing.T, h agentHost, bin string, p *e2eProjects) {
	e := newTestEnv(t)
	e.cfgPath = e2eConfig(t, p)
	model := scriptedmodel.Start()
	t.Cleanup(model.Close)
	if d := os.Getenv("CGCAT_AGENT_DUMP"); d != "" {
		model.DumpDir = filepath.Join(d, h.host)
		os.MkdirAll(model.DumpDir, 0o755)
	}
	r := &agentRun{e: e, model: model, workspace: filepath.Join(e.base, "workspace-a"), npmBin: filepath.Dir(bin)}
	if err := os.MkdirAll(r.workspace, 0o755); err != nil {
		t.Fatal(err)
	}
	// The catalog is there before the host starts (as after `cgcat scan`).
	out, errOut, code := runCmd(func(out, errOut *bytes.Buffer) error {
		return runScan(context.Background(), &globalOptions{configPath: e.cfgPath}, &scanOptions{}, out, errOut)
	})
	if code != 0 {
		t.Fatalf("cgcat scan: exit %d\n%s%s", code, out, errOut)
	}
	h.userConfig(t, r)
	out, errOut, code = e.install(t, h.host, h.install)
	if code != 0 {
		t.Fatalf("cgcat install %s: exit %d\n%s%s", h.host, code, out, errOut)
	}
	t.Logf("cgcat install %s:\n%s%s", h.host, out, errOut)

	for _, step := range []struct {
		name, query, code, has, hasNot, path string
	}{
		{"B", "@fruit/banana-sdk", "BananaOrdersClient createBananaOrder", "BananaOrdersClient", "CherryLedgerService", p.b},
		{"C", "@fruit/cherry-ledger", "CherryLedgerService postCherryEntry", "CherryLedgerService", "BananaOrdersClient", p.c},
	} {
		model.Reset()
		prompt := scriptedmodel.Prompt(step.query, step.code)
		args, env := h.command(r, prompt)
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env, cmd.Dir = env, r.workspace
		cmd.Stdin = nil
		var stdout, stderr tailBuffer
		stdout.max, stderr.max = 1<<20, 64<<10
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		cancel()
		elapsed := time.Since(start)
		turns := model.Turns()
		if err != nil {
			t.Fatalf("%s %s: %v\nstdout:\n%s\nstderr:\n%s\nturns:\n%s", h.bin, step.name, err, stdout.String(), stderr.String(), describeTurns(turns))
		}
		t.Logf("%s, project %s: one full turn in %s (%d model requests)", h.host, step.name, elapsed.Round(time.Millisecond), len(turns))
		final := stdout.String()
		if !strings.Contains(final, scriptedmodel.Answer+step.path) || !strings.Contains(final, step.has) || strings.Contains(final, step.hasNot) {
			t.Fatalf("%s %s: the final answer does not quote CodeGraph on %s (%s, not %s)\nstdout:\n%s\nstderr:\n%s\nturns:\n%s\nunhandled: %v",
				h.bin, step.name, step.path, step.has, step.hasNot, final, stderr.String(), describeTurns(turns), model.Unhandled())
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

var _ = json.Marshal
var _ = mcp.LATEST_PROTOCOL_VERSION
