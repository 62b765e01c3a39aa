package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cgcat/cgcat/cmd/cgcat/hostconfig"
)

// healthyEnv is a config with one discovered project, the user's own
// CodeGraph entry (the real CodeGraph from npm) in all four hosts, and
// cgcat installed into them (the built binary, so doctor really starts it;
// --allow-tools where the host ignores readOnlyHint).
func healthyEnv(t *testing.T) *testEnv {
	t.Helper()
	codegraph := e2eTool(t, "codegraph")
	e := newTestEnv(t)
	fakeProject(t, filepath.Join(e.root, "orders-sdk"), "@acme/orders-sdk")
	e.writeConfig(t)
	out, errOut, code := runCmd(func(out, errOut *bytes.Buffer) error {
		return runScan(context.Background(), e.globals(), &scanOptions{}, out, errOut)
	})
	if code != 0 {
		t.Fatalf("scan: exit %d\n%s%s", code, out, errOut)
	}
	writeUserCodeGraph(t, e, codegraph)
	for _, host := range hostconfig.Hosts {
		o := installOptions{allowTools: host == hostClaude || host == hostGemini}
		if out, errOut, code := e.install(t, host, o); code != 0 {
			t.Fatalf("install %s: exit %d\n%s%s", host, code, out, errOut)
		}
	}
	return e
}

// writeUserCodeGraph writes CodeGraph's entry into every host config as the
// user (or CodeGraph's installer) would, plus the user's own rules that let
// Claude Code and Gemini CLI run CodeGraph's tool.
func writeUserCodeGraph(t *testing.T, e *testEnv, codegraph string) {
	t.Helper()
	env := `{"CODEGRAPH_TELEMETRY": "0", "CODEGRAPH_NO_UPDATE_CHECK": "1", "CODEGRAPH_NO_DAEMON": "1"}`
	writeTestFile(t, e.codexFile(), fmt.Sprintf("[mcp_servers.codegraph]\ncommand = %q\nargs = [\"serve\", \"--mcp\"]\nenv = { CODEGRAPH_TELEMETRY = \"0\", CODEGRAPH_NO_UPDATE_CHECK = \"1\", CODEGRAPH_NO_DAEMON = \"1\" }\n", codegraph))
	writeTestFile(t, filepath.Join(e.opencodeDir(), "opencode.json"), fmt.Sprintf(`{"mcp": {"codegraph": {"type": "local", "command": [%q, "serve", "--mcp"], "environment": %s, "enabled": true}}}`, codegraph, env))
	writeTestFile(t, filepath.Join(e.home, ".claude.json"), fmt.Sprintf(`{"mcpServers": {"codegraph": {"type": "stdio", "command": %q, "args": ["serve", "--mcp"], "env": %s}}}`, codegraph, env))
	writeTestFile(t, filepath.Join(e.home, ".claude", "settings.json"), `{"permissions": {"allow": ["mcp__codegraph__*"]}}`)
	writeTestFile(t, filepath.Join(e.home, ".gemini", "settings.json"), fmt.Sprintf(`{"mcpServers": {"codegraph": {"command": %q, "args": ["serve", "--mcp"], "env": %s}}}`, codegraph, env))
	writeTestFile(t, filepath.Join(e.home, ".gemini", "policies", "codegraph.toml"), "[[rule]]\nmcpName = \"codegraph\"\ntoolName = \"codegraph_explore\"\ndecision = \"allow\"\npriority = 100\n")
	writeTestFile(t, filepath.Join(e.home, ".cursor", "mcp.json"), fmt.Sprintf(`{"mcpServers": {"codegraph": {"type": "stdio", "command": %q, "args": ["serve", "--mcp"], "env": %s}}}`, codegraph, env))
}

func TestDoctorHealthy(t *testing.T) {
	e := healthyEnv(t)
	t.Setenv("PATH", "/usr/bin:/bin") // no host CLI: versions are not read
	before := len(backups(t, e.codexFile()))
	out, errOut, code := e.doctor(t, nil)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	mustContain(t, out,
		"✓ config "+e.cfgPath+" is valid",
		"✓ discovery root "+e.root+" is a readable directory",
		"✓ data dir "+e.dataDir+" is writable",
		"✓ catalog store "+filepath.Join(e.dataDir, "catalog.db")+" opens (format 1",
		"✓ 1 project(s) in the catalog: 1 present",
		"coverage complete",
		"✓ scan.lease: free",
		"· GBrain is off",
		"✓ mcp_servers.codegraph-catalog in "+e.codexFile()+": "+cgcatBin(t)+" serve --config "+e.cfgPath,
		"✓ started as Codex starts it: cgcat ",
		"✓ mcp.codegraph-catalog in "+filepath.Join(e.opencodeDir(), "opencode.json")+": "+cgcatBin(t)+" serve --config "+e.cfgPath,
		"✓ started as OpenCode starts it: cgcat ",
		"✓ mcpServers.codegraph-catalog in "+filepath.Join(e.home, ".claude.json")+": ",
		"✓ started as Claude Code starts it: cgcat ",
		"✓ started as Gemini CLI starts it: cgcat ",
		"✓ mcpServers.codegraph-catalog in "+filepath.Join(e.home, ".cursor", "mcp.json")+": ",
		"✓ started as Cursor starts it: cgcat ",
		"✓ tools: local_codegraph_projects, local_codegraph_resolve (both readOnlyHint)",
		`✓ CodeGraph's MCP server "codegraph": codegraph 1.6.1 starts and offers codegraph_explore with projectPath`,
		"✓ approval: Codex runs cgcat's tools without asking (local_codegraph_projects: approval mode \"auto\" (the default) and readOnlyHint",
		"✓ approval: OpenCode runs MCP tools without asking",
		"✓ approval: Claude Code runs cgcat's tools without asking (permissions.allow mcp__codegraph-catalog__local_codegraph_projects, mcp__codegraph-catalog__local_codegraph_resolve",
		"✓ approval: Gemini CLI runs cgcat's tools without asking (policy "+filepath.Join(e.home, ".gemini", "policies", "cgcat-codegraph-catalog.toml"),
		"· approval: not checked: Cursor keeps whether MCP calls ask in its own settings",
		"summary: all checks passed",
	)
	mustNotContain(t, out, "✗", "fix:", "!")
	for _, n := range []string{"(both readOnlyHint)", "starts and offers codegraph_explore with projectPath"} {
		if c := strings.Count(out, n); c != len(hostconfig.Hosts) {
			t.Fatalf("%q %d times, want once per host:\n%s", n, c, out)
		}
	}
	// Doctor writes nothing into the host configs.
	if len(backups(t, e.codexFile())) != before {
		t.Fatal("doctor touched the Codex config")
	}

	// --json: the same report, one object a program can read.
	out, _, code = runCmd(func(o, eo *bytes.Buffer) error {
		return runDoctor(context.Background(), e.globals(), &doctorOptions{name: "codegraph-catalog", json: true}, o, eo)
	})
	var rep struct {
		Problems int
		Sections []struct {
			Title  string
			Checks []struct{ Status, What, Fix, Code string }
		}
		Summary string
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 {
		t.Fatalf("doctor --json: exit %d, %v\n%s", code, err, out)
	}
	titles := []string{}
	for _, s := range rep.Sections {
		titles = append(titles, s.Title)
		for _, c := range s.Checks {
			if c.Status != "ok" && c.Status != "info" {
				t.Fatalf("--json: %s check %+v", s.Title, c)
			}
		}
	}
	if strings.Join(titles, ",") != "config,roots,data dir,published catalog,store,leases,gbrain,codex,opencode,claude,gemini,cursor" || rep.Summary != "all checks passed" {
		t.Fatalf("--json sections %v, summary %q", titles, rep.Summary)
	}
}

func TestDoctorNoHostsNoCatalog(t *testing.T) {
	e := newTestEnv(t)
	e.writeConfig(t)
	out, errOut, code := e.doctor(t, nil)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	mustContain(t, out,
		"✓ data dir "+e.dataDir+" does not exist yet; cgcat creates it on first use",
		"! no catalog yet in "+e.dataDir, "fix: cgcat scan",
		"· no Codex config at "+e.codexFile()+" (to use cgcat from Codex: cgcat install codex)",
		"· no OpenCode config at "+filepath.Join(e.opencodeDir(), "opencode.json")+" (to use cgcat from OpenCode: cgcat install opencode)",
		"· no Claude Code config at "+filepath.Join(e.home, ".claude.json"),
		"· no Gemini CLI config at "+filepath.Join(e.home, ".gemini", "settings.json"),
		"summary: nothing broken; 1 warning(s)",
	)
	if _, err := os.Stat(e.dataDir); !os.IsNotExist(err) {
		t.Fatal("doctor created the data dir")
	}
}

func TestDoctorNoConfig(t *testing.T) {
	e := newTestEnv(t)
	out, _, code := e.doctor(t, &globalOptions{})
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, out)
	}
	mustContain(t, out, "✗ no config file at "+e.cfgPath, "fix: cgcat config init --root DIR")
	// An invalid config is reported with the field.
	writeTestFile(t, e.cfgPath, `{"version": 1, "dataDir": "relative/dir"}`)
	out, _, code = e.doctor(t, nil)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, out)
	}
	mustContain(t, out, "✗ config is not valid:", "dataDir", "is relative", "fix: ")
}

func TestDoctorBroken(t *testing.T) {
	e := healthyEnv(t)
	// A root that vanished, a data dir that cannot be created (a file is in
	// the way; root could write anywhere else), a Codex entry naming a
	// binary that does not exist, and an OpenCode entry that starts but
	// does not speak MCP.
	missing := filepath.Join(e.base, "gone")
	if err := os.Mkdir(missing, 0o755); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, filepath.Join(e.base, "afile"), "x")
	cfg := `{"version": 1, "dataDir": "` + filepath.Join(e.base, "afile", "data") + `", "discovery": {"roots": ["` + e.root + `", "` + missing + `"]}}`
	writeTestFile(t, e.cfgPath, cfg)
	if err := os.Remove(missing); err != nil {
		t.Fatal(err)
	}
	if _, _, code := e.install(t, hostCodex, installOptions{executable: filepath.Join(e.base, "no-such-dir", "cgcat"), force: true}); code != 0 {
		t.Fatal("install of a missing binary failed")
	}
	writeTestFile(t, filepath.Join(e.opencodeDir(), "opencode.json"), `{
  "mcp": {
    "codegraph-catalog": {"type": "local", "command": ["/bin/sh", "-c", "echo this is not MCP; echo broken >&2; exit 3", "--config", "`+e.cfgPath+`"]}
  }
}
`)
	out, errOut, code := e.doctor(t, nil)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, out, errOut)
	}
	mustContain(t, out,
		"✓ discovery root "+e.root+" is a readable directory",
		"✗ discovery root "+missing+" does not exist\n      fix: create it or mount its volume, or remove it from discovery.roots in "+e.cfgPath,
		"✗ data dir "+filepath.Join(e.base, "afile", "data")+" cannot be created: "+filepath.Join(e.base, "afile")+" is not a directory\n      fix: ",
		"· not checked (no usable data dir)",
		"✗ mcp_servers.codegraph-catalog in "+e.codexFile()+" runs "+filepath.Join(e.base, "no-such-dir", "cgcat")+", which does not exist",
		"      fix: cgcat install codex --force",
		"✗ started as OpenCode starts it: the process ended before answering initialize (exit status 3)",
		"stderr: broken",
		"      fix: cgcat install opencode --force",
		`! `+filepath.Join(e.opencodeDir(), "opencode.json")+` has no CodeGraph MCP server (codegraph serve --mcp)`,
		"summary: 4 problem(s)",
	)
	// Every ✗ has its fix on the next lines.
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if !strings.Contains(l, "✗") || strings.HasPrefix(l, "summary:") {
			continue
		}
		found := false
		for j := i + 1; j < len(lines) && strings.HasPrefix(lines[j], "      "); j++ {
			if strings.HasPrefix(lines[j], "      fix: ") {
				found = true
			}
		}
		if !found {
			t.Fatalf("no fix for %q:\n%s", l, out)
		}
	}
	// The same through main: exit status 1.
	var o, eo bytes.Buffer
	if c := run(context.Background(), []string{"doctor", "--config", e.cfgPath}, strings.NewReader(""), &o, &eo); c != 1 {
		t.Fatalf("run doctor: exit %d\n%s%s", c, o.String(), eo.String())
	}
}

func TestDoctorHandshakeTimeout(t *testing.T) {
	e := newTestEnv(t)
	e.writeConfig(t)
	writeTestFile(t, e.codexFile(), `[mcp_servers.codegraph-catalog]
command = "/bin/sh"
args = ["-c", "exec sleep 30", "--config", "`+e.cfgPath+`"]
startup_timeout_sec = 1
`)
	out, _, code := e.doctor(t, nil)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, out)
	}
	mustContain(t, out, "✗ started as Codex starts it: no answer to initialize within 1s")
}

// TestDoctorBackendIncompatible: a "CodeGraph" entry whose server lists no
// codegraph_explore (here a real MCP server that is not CodeGraph: cgcat
// itself behind a script named codegraph) is backend_incompatible with the
// fix; an entry that names another CodeGraph server than the host has is
// a warning. Install passed the host's name for CodeGraph.
func TestDoctorBackendIncompatible(t *testing.T) {
	e := newTestEnv(t)
	e.writeConfig(t)
	bin := filepath.Join(e.base, "bin")
	writeTestFile(t, filepath.Join(bin, "codegraph"), "#!/bin/sh\nexec "+cgcatBin(t)+" serve --config "+e.cfgPath+"\n")
	if err := os.Chmod(filepath.Join(bin, "codegraph"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, e.codexFile(), "[mcp_servers.cg]\ncommand = \""+filepath.Join(bin, "codegraph")+"\"\nargs = [\"serve\", \"--mcp\"]\n")
	out, errOut, code := e.install(t, hostCodex, installOptions{})
	if code != 0 {
		t.Fatalf("install: exit %d\n%s%s", code, out, errOut)
	}
	mustContain(t, out, `CodeGraph: cgcat's answers name CodeGraph's MCP server "cg" (--codegraph-server cg)`,
		`problem: CodeGraph's MCP server "cg": backend_incompatible: cgcat dev lists no codegraph_explore`, "fix: upgrade CodeGraph", "`cgcat doctor` reports it (✗)")
	if args, _ := codexEntry(t, e.codexFile(), "codegraph-catalog")["args"].([]any); len(args) != 5 || args[3] != "--codegraph-server" || args[4] != "cg" {
		t.Fatalf("entry args = %v", args)
	}
	out, _, code = e.doctor(t, nil)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, out)
	}
	mustContain(t, out, `✗ CodeGraph's MCP server "cg": backend_incompatible: cgcat dev lists no codegraph_explore (its tools: local_codegraph_projects, local_codegraph_resolve)`,
		"fix: upgrade CodeGraph (npm install -g @colbymchenry/codegraph@latest)")
	mustNotContain(t, out, "cgcat's entry names the CodeGraph server")

	// The user renames CodeGraph's entry: cgcat's entry now names a server
	// the agent does not have.
	src := strings.Replace(readTestFile(t, e.codexFile()), "[mcp_servers.cg]", "[mcp_servers.code-graph]", 1)
	writeTestFile(t, e.codexFile(), src)
	out, _, _ = runCmd(func(o, eo *bytes.Buffer) error {
		return runDoctor(context.Background(), e.globals(), &doctorOptions{name: "codegraph-catalog", json: true}, o, eo)
	})
	mustContain(t, out, `cgcat's entry names the CodeGraph server \"cg\" but Codex calls it \"code-graph\"`, `"code": "backend_incompatible"`, `"status": "fail"`)

	// No CodeGraph entry at all: a warning (as install says) with the
	// command that adds it.
	writeTestFile(t, e.codexFile(), strings.Replace(src, "[mcp_servers.code-graph]\n", "[mcp_servers.other]\n", 1)+"\n")
	writeTestFile(t, e.codexFile(), strings.ReplaceAll(readTestFile(t, e.codexFile()), `args = ["serve", "--mcp"]`, `args = ["serve"]`))
	out, _, _ = e.doctor(t, nil)
	mustContain(t, out, "! "+e.codexFile()+" has no CodeGraph MCP server (codegraph serve --mcp)", "fix: codex mcp add codegraph -- codegraph serve --mcp")
}
