package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cgcat/cgcat/cmd/cgcat/hostconfig"
	"github.com/pelletier/go-toml/v2"
	"github.com/tailscale/hujson"
)

const userCodexConfig = `# my Codex settings
model = "gpt-5"   # keep this comment

[mcp_servers.codegraph]
command = "/usr/local/bin/codegraph"
args = ["serve", "--mcp"]

[mcp_servers.codegraph.env]
CODEGRAPH_TELEMETRY = "0"

# trailing comment
`

const userOpenCodeConfig = `{
  // my OpenCode settings
  "$schema": "https://opencode.ai/config.json",
  "model": "anthropic/claude-sonnet-4", /* inline */
  "mcp": {
    "codegraph": {
      "type": "local",
      "command": ["/usr/local/bin/codegraph", "serve", "--mcp"],
      "enabled": true, // trailing comma next
    },
  },
}
`

// codexEntry parses the Codex file and returns mcp_servers.<name>.
func codexEntry(t *testing.T, path, name string) map[string]any {
	t.Helper()
	doc := map[string]any{}
	if err := toml.Unmarshal([]byte(readTestFile(t, path)), &doc); err != nil {
		t.Fatalf("%s does not parse: %v", path, err)
	}
	servers, _ := doc["mcp_servers"].(map[string]any)
	e, _ := servers[name].(map[string]any)
	return e
}

// opencodeEntry parses an OpenCode JSONC file and returns mcp.<name>.
func opencodeEntry(t *testing.T, path, name string) map[string]any {
	t.Helper()
	std, err := hujson.Standardize([]byte(readTestFile(t, path)))
	if err != nil {
		t.Fatalf("%s does not parse: %v", path, err)
	}
	doc := map[string]any{}
	if err := json.Unmarshal(std, &doc); err != nil {
		t.Fatal(err)
	}
	m, _ := doc["mcp"].(map[string]any)
	e, _ := m[name].(map[string]any)
	return e
}

func TestInstallCodexIntoEmptyHome(t *testing.T) {
	e := newTestEnv(t)
	e.writeConfig(t)
	out, errOut, code := e.install(t, hostCodex, installOptions{})
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	mustContain(t, out, `installed MCP server "codegraph-catalog" into `+e.codexFile(), "backup:  none (the file is new)", "restart Codex and start a new session")
	ent := codexEntry(t, e.codexFile(), "codegraph-catalog")
	if ent["command"] != cgcatBin(t) {
		t.Fatalf("command = %v, want %s", ent["command"], cgcatBin(t))
	}
	args, _ := ent["args"].([]any)
	if len(args) != 3 || args[0] != "serve" || args[1] != "--config" || args[2] != e.cfgPath {
		t.Fatalf("args = %v", args)
	}
	if ent["enabled"] != true {
		t.Fatalf("enabled = %v", ent["enabled"])
	}
	if fi, err := os.Stat(e.codexHome); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("CODEX_HOME not created 0700: %v %v", fi, err)
	}
	if b := backups(t, e.codexFile()); len(b) != 0 {
		t.Fatalf("backup of a file that did not exist: %v", b)
	}
	// Running it again changes nothing.
	out, _, code = e.install(t, hostCodex, installOptions{})
	if code != 0 || !strings.Contains(out, "nothing to do") {
		t.Fatalf("second install: exit %d\n%s", code, out)
	}
	if b := backups(t, e.codexFile()); len(b) != 0 {
		t.Fatalf("an unchanged install wrote a backup: %v", b)
	}
}

func TestInstallCodexKeepsOtherBytes(t *testing.T) {
	e := newTestEnv(t)
	e.writeConfig(t)
	if err := os.MkdirAll(e.codexHome, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(e.codexFile(), []byte(userCodexConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := e.install(t, hostCodex, installOptions{})
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	after := readTestFile(t, e.codexFile())
	if !strings.HasPrefix(after, userCodexConfig) {
		t.Fatalf("the user's bytes changed:\n%s", after)
	}
	added := strings.TrimPrefix(after, userCodexConfig)
	if !strings.HasPrefix(strings.TrimLeft(added, "\n"), "[mcp_servers.codegraph-catalog]\n") {
		t.Fatalf("appended text is not just our table:\n%s", added)
	}
	if codexEntry(t, e.codexFile(), "codegraph")["command"] != "/usr/local/bin/codegraph" {
		t.Fatal("the other server changed")
	}
	b := backups(t, e.codexFile())
	if len(b) != 1 || readTestFile(t, b[0]) != userCodexConfig {
		t.Fatalf("backups = %v", b)
	}
	mustContain(t, out, "backup:  "+b[0])
	if fi, _ := os.Stat(e.codexFile()); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode changed to %v", fi.Mode())
	}

	// Uninstall gives back the user's file exactly.
	out, _, code = e.uninstall(t, hostCodex, installOptions{})
	if code != 0 {
		t.Fatalf("uninstall exit %d\n%s", code, out)
	}
	mustContain(t, out, `removed MCP server "codegraph-catalog" from `+e.codexFile(), "restart Codex")
	if got := readTestFile(t, e.codexFile()); got != userCodexConfig {
		t.Fatalf("after uninstall:\n%s\nwant:\n%s", got, userCodexConfig)
	}
	if len(backups(t, e.codexFile())) != 2 {
		t.Fatal("uninstall wrote no backup")
	}
	out, _, code = e.uninstall(t, hostCodex, installOptions{})
	if code != 0 || !strings.Contains(out, `has no MCP server named "codegraph-catalog"; nothing to remove`) {
		t.Fatalf("second uninstall: exit %d\n%s", code, out)
	}
}

func TestInstallDryRunWritesNothing(t *testing.T) {
	e := newTestEnv(t)
	e.writeConfig(t)
	// Nothing exists yet: not even the directories get created.
	for _, host := range []string{hostCodex, hostOpenCode} {
		out, errOut, code := e.install(t, host, installOptions{dryRun: true})
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s%s", host, code, out, errOut)
		}
		mustContain(t, out, "--- /dev/null", "+++ ", "codegraph-catalog", "dry run: nothing was written")
	}
	for _, p := range []string{e.codexHome, e.opencodeDir()} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Fatalf("dry run created %s", p)
		}
	}
	// Existing files stay byte for byte, with no backups.
	writeTestFile(t, e.codexFile(), userCodexConfig)
	oc := filepath.Join(e.opencodeDir(), "opencode.jsonc")
	writeTestFile(t, oc, userOpenCodeConfig)
	for host, path := range map[string]string{hostCodex: e.codexFile(), hostOpenCode: oc} {
		out, errOut, code := e.install(t, host, installOptions{dryRun: true})
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s%s", host, code, out, errOut)
		}
		mustContain(t, out, "--- "+path, "+++ "+path, "+", "dry run: nothing was written")
		want := userCodexConfig
		if host == hostOpenCode {
			want = userOpenCodeConfig
		}
		if readTestFile(t, path) != want {
			t.Fatalf("%s: dry run changed %s", host, path)
		}
		if b := backups(t, path); len(b) != 0 {
			t.Fatalf("%s: dry run wrote backups %v", host, b)
		}
	}
	if _, err := os.Stat(filepath.Join(e.opencodeDir(), "opencode.json")); !os.IsNotExist(err) {
		t.Fatal("dry run created a second OpenCode file")
	}
}

func TestInstallForce(t *testing.T) {
	e := newTestEnv(t)
	e.writeConfig(t)
	old := strings.Join([]string{
		"[mcp_servers.codegraph-catalog]",
		`command = "/old/bin/cgcat"`,
		`args = ["serve"]`,
		"",
	}, "\n")
	writeTestFile(t, e.codexFile(), userCodexConfig+"\n"+old)
	before := readTestFile(t, e.codexFile())

	out, errOut, code := e.install(t, hostCodex, installOptions{})
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, out, errOut)
	}
	mustContain(t, errOut, e.codexFile(), "already exists with different settings", `command = "/old/bin/cgcat"`, "--force")
	if readTestFile(t, e.codexFile()) != before || len(backups(t, e.codexFile())) != 0 {
		t.Fatal("a refused install touched the file")
	}

	// --dry-run shows the existing entry and what --force would write.
	out, errOut, code = e.install(t, hostCodex, installOptions{dryRun: true})
	if code != 0 {
		t.Fatalf("dry run exit %d\n%s%s", code, out, errOut)
	}
	mustContain(t, out, "different settings", `-command = "/old/bin/cgcat"`, `+command = "`+cgcatBin(t)+`"`, "--force")
	if readTestFile(t, e.codexFile()) != before {
		t.Fatal("dry run touched the file")
	}

	out, errOut, code = e.install(t, hostCodex, installOptions{force: true})
	if code != 0 {
		t.Fatalf("--force exit %d\n%s%s", code, out, errOut)
	}
	if got := codexEntry(t, e.codexFile(), "codegraph-catalog")["command"]; got != cgcatBin(t) {
		t.Fatalf("command = %v", got)
	}
	if !strings.HasPrefix(readTestFile(t, e.codexFile()), userCodexConfig) {
		t.Fatal("--force changed other bytes")
	}
	if b := backups(t, e.codexFile()); len(b) != 1 || readTestFile(t, b[0]) != before {
		t.Fatalf("backups = %v", b)
	}

	// The same for OpenCode.
	oc := filepath.Join(e.opencodeDir(), "opencode.json")
	writeTestFile(t, oc, `{"mcp": {"codegraph-catalog": {"type": "local", "command": ["/old/bin/cgcat", "serve"]}}}`+"\n")
	_, errOut, code = e.install(t, hostOpenCode, installOptions{})
	if code != 1 {
		t.Fatalf("opencode exit %d, want 1", code)
	}
	mustContain(t, errOut, oc, "/old/bin/cgcat", "--force")
	if _, _, code = e.install(t, hostOpenCode, installOptions{force: true}); code != 0 {
		t.Fatal("opencode --force failed")
	}
	cmd, _ := opencodeEntry(t, oc, "codegraph-catalog")["command"].([]any)
	if len(cmd) != 4 || cmd[0] != cgcatBin(t) || cmd[3] != e.cfgPath {
		t.Fatalf("opencode command = %v", cmd)
	}
}

func TestInstallOpenCodeKeepsComments(t *testing.T) {
	e := newTestEnv(t)
	e.writeConfig(t)
	oc := filepath.Join(e.opencodeDir(), "opencode.jsonc")
	writeTestFile(t, oc, userOpenCodeConfig)
	out, errOut, code := e.install(t, hostOpenCode, installOptions{})
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	mustContain(t, out, "into "+oc, "restart OpenCode and start a new session")
	after := readTestFile(t, oc)
	for _, line := range strings.Split(userOpenCodeConfig, "\n") {
		if !strings.Contains(after, line) {
			t.Fatalf("lost line %q:\n%s", line, after)
		}
	}
	ent := opencodeEntry(t, oc, "codegraph-catalog")
	cmd, _ := ent["command"].([]any)
	if ent["type"] != "local" || ent["enabled"] != true || len(cmd) != 4 || cmd[0] != cgcatBin(t) || cmd[1] != "serve" || cmd[2] != "--config" || cmd[3] != e.cfgPath {
		t.Fatalf("entry = %v", ent)
	}
	if _, ok := ent["args"]; ok {
		t.Fatal("wrote an args key, which OpenCode ignores")
	}
	if _, err := os.Stat(filepath.Join(e.opencodeDir(), "opencode.json")); !os.IsNotExist(err) {
		t.Fatal("created a second, shadowing opencode.json")
	}
	if b := backups(t, oc); len(b) != 1 || readTestFile(t, b[0]) != userOpenCodeConfig {
		t.Fatalf("backups = %v", b)
	}
	if _, _, code := e.uninstall(t, hostOpenCode, installOptions{}); code != 0 {
		t.Fatal("uninstall failed")
	}
	if ent := opencodeEntry(t, oc, "codegraph-catalog"); ent != nil {
		t.Fatalf("entry still there: %v", ent)
	}
	if opencodeEntry(t, oc, "codegraph") == nil || !strings.Contains(readTestFile(t, oc), "// my OpenCode settings") {
		t.Fatal("uninstall removed more than our entry")
	}
}

func TestInstallOpenCodeNewAndProject(t *testing.T) {
	e := newTestEnv(t)
	e.writeConfig(t)
	// No global file yet: opencode.json is created.
	if _, _, code := e.install(t, hostOpenCode, installOptions{}); code != 0 {
		t.Fatal("install failed")
	}
	if opencodeEntry(t, filepath.Join(e.opencodeDir(), "opencode.json"), "codegraph-catalog") == nil {
		t.Fatal("no entry in the new opencode.json")
	}
	// --project edits the project's file, not the global one.
	proj := filepath.Join(e.base, "proj")
	writeTestFile(t, filepath.Join(proj, "opencode.json"), `{"model": "x"}`+"\n")
	out, errOut, code := e.install(t, hostOpenCode, installOptions{project: proj})
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if opencodeEntry(t, filepath.Join(proj, "opencode.json"), "codegraph-catalog") == nil {
		t.Fatal("no entry in the project file")
	}
	// Both files in one directory: refuse to pick one.
	writeTestFile(t, filepath.Join(proj, "opencode.jsonc"), "{}\n")
	_, errOut, code = e.install(t, hostOpenCode, installOptions{project: proj, force: true})
	if code != 1 {
		t.Fatalf("exit %d with both files, want 1", code)
	}
	mustContain(t, errOut, "opencode.json and opencode.jsonc")
	// --project is for OpenCode only; a missing project dir is an error.
	if _, _, code := e.install(t, hostCodex, installOptions{project: proj}); code != 2 {
		t.Fatalf("codex --project: exit %d, want 2", code)
	}
	if _, errOut, code := e.install(t, hostOpenCode, installOptions{project: filepath.Join(e.base, "nope")}); code != 1 || !strings.Contains(errOut, "nope") {
		t.Fatalf("missing --project dir: exit %d %s", code, errOut)
	}
}

func TestInstallPrintAbsolutePaths(t *testing.T) {
	e := newTestEnv(t)
	e.writeConfig(t)
	t.Chdir(e.base)
	rel, err := filepath.Rel(e.base, e.cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(e.base, "cgcat-link")
	if err := os.Symlink(cgcatBin(t), link); err != nil {
		t.Fatal(err)
	}
	g := &globalOptions{configPath: rel}
	out, errOut, code := runCmd(func(out, errOut *bytes.Buffer) error {
		return runInstall(context.Background(), g, &installOptions{name: "codegraph-catalog", print: true, executable: link}, "", out, errOut)
	})
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	mustContain(t, out, "# Codex: add to "+e.codexFile(), "// OpenCode: merge into", "[mcp_servers.codegraph-catalog]",
		`command = "`+cgcatBin(t)+`"`, `args = ["serve", "--config", "`+e.cfgPath+`"]`,
		`"`+cgcatBin(t)+`",`, `"`+e.cfgPath+`"`)
	mustNotContain(t, out, link, `"`+rel+`"`, "/ABS/")
	// The JSON parts are valid JSON by themselves: OpenCode, Claude Code,
	// Gemini CLI, Cursor.
	mustContain(t, out, "// Claude Code: merge into", "// Gemini CLI: merge into", `"alwaysLoad": true`,
		"// Cursor: merge into the \"mcpServers\" object of "+filepath.Join(e.home, ".cursor", "mcp.json"))
	parts := 0
	for _, chunk := range strings.Split(out, "\n\n") {
		i := strings.Index(chunk, "{\n")
		if i < 0 {
			continue
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(chunk[i:]), &v); err != nil {
			t.Fatalf("snippet is not JSON: %v\n%s", err, chunk[i:])
		}
		parts++
	}
	if parts != 4 {
		t.Fatalf("%d JSON snippets, want 4:\n%s", parts, out)
	}
	for _, p := range []string{e.codexFile(), e.opencodeDir()} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Fatalf("--print wrote %s", p)
		}
	}

	// A relative --config is written as an absolute path by install too.
	out, errOut, code = runCmd(func(out, errOut *bytes.Buffer) error {
		return runInstall(context.Background(), g, &installOptions{name: "codegraph-catalog", executable: link}, hostCodex, out, errOut)
	})
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	ent := codexEntry(t, e.codexFile(), "codegraph-catalog")
	if ent["command"] != cgcatBin(t) {
		t.Fatalf("symlink not resolved: %v", ent["command"])
	}
	if args, _ := ent["args"].([]any); len(args) != 3 || args[2] != e.cfgPath {
		t.Fatalf("args = %v", ent["args"])
	}
}

func TestInstallRefusals(t *testing.T) {
	e := newTestEnv(t)
	// No config file yet.
	out, errOut, code := e.install(t, hostCodex, installOptions{})
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, out, errOut)
	}
	mustContain(t, errOut, "no cgcat config file at "+e.cfgPath, "cgcat config init --root DIR")
	if _, err := os.Stat(e.codexHome); !os.IsNotExist(err) {
		t.Fatal("wrote a host entry without a config")
	}
	// An invalid config.
	writeTestFile(t, e.cfgPath, `{"version": 1, "dataDir": "~/data"}`)
	_, errOut, code = e.install(t, hostOpenCode, installOptions{})
	if code != 1 {
		t.Fatalf("invalid config: exit %d", code)
	}
	mustContain(t, errOut, "dataDir", "not valid")
	e.writeConfig(t)

	// --root is not a config a host could use.
	_, errOut, code = runCmd(func(out, errOut *bytes.Buffer) error {
		return runInstall(context.Background(), &globalOptions{roots: []string{e.root}}, &installOptions{name: "x", executable: cgcatBin(t)}, hostCodex, out, errOut)
	})
	if code != 2 || !strings.Contains(errOut, "cgcat config init") {
		t.Fatalf("--root: exit %d %s", code, errOut)
	}
	// Unknown host, missing host, bad name.
	if _, _, code := e.install(t, "vscode", installOptions{}); code != 2 {
		t.Fatalf("unknown host: exit %d", code)
	}
	if _, _, code := e.install(t, "", installOptions{}); code != 2 {
		t.Fatalf("no host: exit %d", code)
	}
	if _, errOut, code := e.install(t, hostCodex, installOptions{name: "bad name"}); code != 1 || !strings.Contains(errOut, "server name") {
		t.Fatalf("bad name: exit %d %s", code, errOut)
	}

	// Files that cannot be edited safely are refused, named, and untouched.
	for _, body := range []string{
		"[mcp_servers\n", // does not parse
		"mcp_servers.codegraph-catalog.command = \"/x\"\n",          // dotted keys
		"[mcp_servers]\ncodegraph-catalog = { command = \"/x\" }\n", // inline table
	} {
		writeTestFile(t, e.codexFile(), body)
		_, errOut, code := e.install(t, hostCodex, installOptions{force: true})
		if code != 1 || !strings.Contains(errOut, e.codexFile()) {
			t.Fatalf("%q: exit %d, message %q", body, code, errOut)
		}
		if readTestFile(t, e.codexFile()) != body || len(backups(t, e.codexFile())) != 0 {
			t.Fatalf("%q: file touched", body)
		}
	}
	// The OpenCode 2 shape is another config generation.
	oc := filepath.Join(e.opencodeDir(), "opencode.json")
	writeTestFile(t, oc, `{"mcp": {"servers": {}}}`)
	_, errOut, code = e.install(t, hostOpenCode, installOptions{})
	if code != 1 || !strings.Contains(errOut, "mcp.servers") || !strings.Contains(errOut, oc) {
		t.Fatalf("OpenCode 2 shape: exit %d %s", code, errOut)
	}
}

func TestInstallRefusesGoRunBinary(t *testing.T) {
	exe, _ := os.Executable()
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	if !strings.Contains(filepath.ToSlash(exe), "/go-build") {
		t.Skipf("the test binary %s is not in a go-build directory", exe)
	}
	e := newTestEnv(t)
	e.writeConfig(t)
	_, errOut, code := runCmd(func(out, errOut *bytes.Buffer) error {
		return runInstall(context.Background(), e.globals(), &installOptions{name: "codegraph-catalog"}, hostCodex, out, errOut)
	})
	if code != 1 || !strings.Contains(errOut, "go build") {
		t.Fatalf("exit %d %s", code, errOut)
	}
}

func TestInstructions(t *testing.T) {
	dir := canonTemp(t)
	t.Chdir(dir)
	for lang, want := range map[string][]string{
		"en": {"local_codegraph_projects", "codegraph_explore", "projectPath", "local_codegraph_resolve"},
		"zh": {"local_codegraph_projects", "codegraph_explore", "原样传给", "local_codegraph_resolve"},
	} {
		var out, errOut bytes.Buffer
		if code := run(context.Background(), []string{"instructions", "--lang", lang}, strings.NewReader(""), &out, &errOut); code != 0 {
			t.Fatalf("%s: exit %d %s", lang, code, errOut.String())
		}
		mustContain(t, out.String(), want...)
	}
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"instructions", "--lang", "fr"}, strings.NewReader(""), &out, &errOut); code != 2 {
		t.Fatalf("--lang fr: exit %d", code)
	}
	mustContain(t, errOut.String(), "use en or zh")
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("instructions wrote files: %v", ents)
	}
}

// TestCommandsRegistered: the new commands are reachable from the root.
func TestCommandsRegistered(t *testing.T) {
	for _, c := range []string{"install", "uninstall", "instructions", "doctor"} {
		var out, errOut bytes.Buffer
		if code := run(context.Background(), []string{c, "--help"}, strings.NewReader(""), &out, &errOut); code != 0 {
			t.Fatalf("%s --help: exit %d %s", c, code, errOut.String())
		}
		mustContain(t, out.String(), "cgcat "+c)
	}
}

// TestInstallNamesCodeGraphServer: when the host calls CodeGraph's server
// "code-graph", the entry install writes passes that name, and the server
// it starts names it in every handoff and in the text.
func TestInstallNamesCodeGraphServer(t *testing.T) {
	e := newTestEnv(t)
	fakeProject(t, filepath.Join(e.root, "orders-sdk"), "@acme/orders-sdk")
	e.writeConfig(t)
	writeTestFile(t, filepath.Join(e.home, ".gemini", "settings.json"), `{"mcpServers": {"code-graph": {"command": "/nowhere/codegraph", "args": ["serve", "--mcp"]}}}`)
	out, errOut, code := e.install(t, hostGemini, installOptions{})
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	mustContain(t, out, `cgcat's answers name CodeGraph's MCP server "code-graph" (--codegraph-server code-graph)`,
		`problem: CodeGraph's MCP server "code-graph" does not start`)
	servers, err := hostconfig.ReadServers(hostGemini, []byte(readTestFile(t, filepath.Join(e.home, ".gemini", "settings.json"))))
	if err != nil {
		t.Fatal(err)
	}
	var ours hostconfig.Server
	for _, s := range servers {
		if s.Name == "codegraph-catalog" {
			ours = s
		}
	}
	if hostconfig.CodeGraphServerOf(ours.Args) != "code-graph" {
		t.Fatalf("entry args %v", ours.Args)
	}
	// Start the entry as written and ask it for the project.
	cg := startMCP(t, canonTemp(t), os.Environ(), ours.Command, ours.Args...)
	res := cg.call(t, "local_codegraph_projects", map[string]any{"query": "@acme/orders-sdk"})
	env := envelopeOf(t, res.StructuredContent)
	if len(env.Projects) == 0 || env.Projects[0].Handoff == nil || env.Projects[0].Handoff.MCPServerHint != "code-graph" {
		t.Fatalf("handoff does not name code-graph: %+v", env)
	}
	mustContain(t, resultText(res), `codegraph_explore (MCP server "code-graph")`)
}

// TestInstallClaudeGemini: the two JSON hosts with the same guarantees, the
// allow rule only with --allow-tools, and uninstall giving every file back.
func TestInstallClaudeGemini(t *testing.T) {
	e := newTestEnv(t)
	e.writeConfig(t)
	claudeJSON := filepath.Join(e.home, ".claude.json")
	claudeSettings := filepath.Join(e.home, ".claude", "settings.json")
	geminiSettings := filepath.Join(e.home, ".gemini", "settings.json")
	policy := filepath.Join(e.home, ".gemini", "policies", "cgcat-codegraph-catalog.toml")

	// --dry-run with --allow-tools creates nothing, not even directories.
	for _, host := range []string{hostClaude, hostGemini} {
		out, errOut, code := e.install(t, host, installOptions{dryRun: true, allowTools: true})
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s%s", host, code, out, errOut)
		}
		mustContain(t, out, "--- /dev/null", "codegraph-catalog", "dry run: nothing was written")
	}
	for _, p := range []string{claudeJSON, filepath.Join(e.home, ".claude"), filepath.Dir(geminiSettings)} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Fatalf("dry run created %s", p)
		}
	}

	// The user's files exist; install keeps them, and without the flag
	// writes no rule but says what the flag would add.
	userClaude := `{"numStartups": 3, "mcpServers": {}}`
	userSettings := "{\n  \"permissions\": {\n    \"allow\": [\"Read\"]\n  }\n}\n"
	writeTestFile(t, claudeJSON, userClaude)
	writeTestFile(t, claudeSettings, userSettings)
	out, _, code := e.install(t, hostClaude, installOptions{})
	if code != 0 {
		t.Fatal(out)
	}
	mustContain(t, out, "Claude Code ignores readOnlyHint", "cgcat install claude --allow-tools (adds permissions.allow mcp__codegraph-catalog__local_codegraph_projects, mcp__codegraph-catalog__local_codegraph_resolve to "+claudeSettings+")",
		"warning: "+claudeJSON+" has no CodeGraph MCP server", "fix: claude mcp add --scope user codegraph -- codegraph serve --mcp")
	if readTestFile(t, claudeSettings) != userSettings {
		t.Fatal("install without --allow-tools changed the settings")
	}
	out, _, code = e.install(t, hostClaude, installOptions{allowTools: true})
	if code != 0 || !strings.Contains(out, "allowed local_codegraph_projects and local_codegraph_resolve in "+claudeSettings) {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if len(backups(t, claudeSettings)) != 1 || !strings.Contains(readTestFile(t, claudeSettings), `"Read",`) {
		t.Fatalf("settings: %s", readTestFile(t, claudeSettings))
	}
	if out, _, _ := e.install(t, hostClaude, installOptions{allowTools: true}); !strings.Contains(out, "nothing to do") || !strings.Contains(out, "already lets Claude Code run") {
		t.Fatalf("second install:\n%s", out)
	}
	if _, _, code := e.uninstall(t, hostClaude, installOptions{}); code != 0 {
		t.Fatal("uninstall claude")
	}
	if readTestFile(t, claudeJSON) != userClaude || readTestFile(t, claudeSettings) != userSettings {
		t.Fatalf("uninstall did not give the files back:\n%s\n%s", readTestFile(t, claudeJSON), readTestFile(t, claudeSettings))
	}

	// Gemini CLI: the policy file is cgcat's own; one that is not is refused.
	out, errOut, code := e.install(t, hostGemini, installOptions{allowTools: true})
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(readTestFile(t, policy), `toolName = ["local_codegraph_projects", "local_codegraph_resolve"]`) {
		t.Fatal(readTestFile(t, policy))
	}
	if _, _, code := e.uninstall(t, hostGemini, installOptions{}); code != 0 {
		t.Fatal("uninstall gemini")
	}
	if _, err := os.Stat(policy); !os.IsNotExist(err) {
		t.Fatal("uninstall left the policy file")
	}
	writeTestFile(t, policy, "[[rule]]\ntoolName = \"*\"\ndecision = \"allow\"\npriority = 1\n")
	_, errOut, code = e.install(t, hostGemini, installOptions{allowTools: true})
	if code != 1 || !strings.Contains(errOut, "was not written by cgcat") {
		t.Fatalf("foreign policy: exit %d %s", code, errOut)
	}
	// --allow-tools is for the hosts that need it.
	for _, host := range []string{hostCodex, hostOpenCode} {
		if _, errOut, code := e.install(t, host, installOptions{allowTools: true}); code != 2 || !strings.Contains(errOut, "without asking") {
			t.Fatalf("%s --allow-tools: exit %d %s", host, code, errOut)
		}
	}
}
