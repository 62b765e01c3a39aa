package main

// Real agent turns (seed 13.2, issue 17): how Codex, OpenCode, Claude Code
// and Gemini CLI from npm are set up in a private HOME (the scripted model
// as their provider, the user's own CodeGraph entry, where `cgcat install
// <host>` adds cgcat's) and run headless on one prompt. The acceptance
// steps that use them are in host_acceptance_test.go.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
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
	pid       atomic.Int64 // the host process of the prompt running now
	stderr    string       // the host's stderr of the last prompt
	// started and ended bound the last prompt's host process.
	started, ended time.Time
}

// hostPID is the host process of the prompt running now (0 between them).
func (r *agentRun) hostPID() int { return int(r.pid.Load()) }

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

# Codex gives an optional MCP server one second to start before a turn and
# leaves its tools out of that turn otherwise; CodeGraph opening the
# workspace's own index (node, SQLite, a sync) takes longer on a loaded
# machine. The user makes CodeGraph required, with room to start.
[mcp_servers.codegraph]
command = "codegraph"
args = ["serve", "--mcp"]
env = { CODEGRAPH_TELEMETRY = "0", CODEGRAPH_NO_UPDATE_CHECK = "1", CODEGRAPH_NO_DAEMON = "1" }
required = true
startup_timeout_sec = 120
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
				"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1")
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

// published is what cgcat serve tells a host: tool descriptions and the
// server's instructions.
type published struct {
	descriptions map[string]string
	instructions string
}

func publishedTools(t *testing.T, cfgPath, home string) published {
	t.Helper()
	l := hostlaunch.Launch{Command: cgcatBin(t), Args: []string{"serve", "--config", cfgPath}, Env: baseEnv(home), Timeout: 30 * time.Second}
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

// runAgentPrompt runs one headless prompt and returns the host's stdout and
// the model requests it made.
func runAgentPrompt(t *testing.T, h agentHost, bin string, r *agentRun, prompt string) (string, []scriptedmodel.Turn, time.Duration) {
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
	err := cmd.Start()
	if err == nil {
		r.pid.Store(int64(cmd.Process.Pid))
		err = cmd.Wait()
		r.pid.Store(0)
	}
	elapsed := time.Since(start)
	r.stderr, r.started, r.ended = stderr.String(), start, start.Add(elapsed)
	turns := r.model.Turns()
	if err != nil {
		t.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s\nturns:\n%s", h.bin, err, stdout.String(), stderr.String(), describeTurns(turns))
	}
	return stdout.String(), turns, elapsed
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

func describeTurns(turns []scriptedmodel.Turn) string {
	var b strings.Builder
	for i, t := range turns {
		names := make([]string, len(t.Tools))
		for j, tl := range t.Tools {
			names[j] = tl.FullName()
		}
		gap := time.Duration(0)
		if i > 0 {
			gap = t.At.Sub(turns[i-1].At)
		}
		fmt.Fprintf(&b, "%d. +%s %s %s tools=%d %v\n", i+1, gap.Round(time.Millisecond), t.Wire, t.Path, len(t.Tools), names)
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
