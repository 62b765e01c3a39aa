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
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// cliRun runs cgcat in-process with args and returns stdout, stderr, code.
func cliRun(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(""), &out, &errOut)
	return out.String(), errOut.String(), code
}

func cliProject(t *testing.T, dir, pkgJSON string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, ".codegraph"), 0o755); err != nil {
		t.Fatal(err)
	}
	db := append([]byte("SQLite format 3\x00"), make([]byte, 300)...)
	if err := os.WriteFile(filepath.Join(dir, ".codegraph", "codegraph.db"), db, 0o644); err != nil {
		t.Fatal(err)
	}
	if pkgJSON != "" {
		if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(pkgJSON), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestConfigInitCheckScanProjects(t *testing.T) {
	base := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(base, "xdg"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(base, "share"))
	t.Setenv("CGCAT_CONFIG", "")
	code := filepath.Join(base, "code")
	cliProject(t, filepath.Join(code, "order-sdk"), `{"name":"@company/order-sdk","description":"订单服务客户端"}`)
	cliProject(t, filepath.Join(code, "payments"), `{"name":"payments"}`)

	// Without a config: a clear warning, and projects says setup_required
	// and fails (exit 1: not set up yet).
	out, errOut, rc := cliRun(t, "projects", "--json")
	if rc != 1 || !strings.Contains(out, `"status": "setup_required"`) || !strings.Contains(errOut, "cgcat config init") {
		t.Fatalf("no config: rc=%d\n%s\n%s", rc, out, errOut)
	}
	// init needs a root; then writes the file.
	if _, errOut, rc := cliRun(t, "config", "init"); rc != 2 || !strings.Contains(errOut, "--root") {
		t.Fatalf("init without --root: rc=%d %s", rc, errOut)
	}
	out, errOut, rc = cliRun(t, "config", "init", "--root", code)
	cfgPath := filepath.Join(base, "xdg", "cgcat", "config.json")
	if rc != 0 || !strings.Contains(out, cfgPath) {
		t.Fatalf("init: rc=%d\n%s\n%s", rc, out, errOut)
	}
	if _, errOut, rc := cliRun(t, "config", "init", "--root", code); rc != 2 || !strings.Contains(errOut, "--force") {
		t.Fatalf("init over an existing file must refuse without --force: rc=%d %s", rc, errOut)
	}
	out, _, rc = cliRun(t, "config", "check")
	if rc != 0 || !strings.Contains(out, "valid") || !strings.Contains(out, "discovery root: "+code) {
		t.Fatalf("check: rc=%d\n%s", rc, out)
	}
	// scan --json reports the pass.
	out, errOut, rc = cliRun(t, "scan", "--json")
	if rc != 0 {
		t.Fatalf("scan: rc=%d %s", rc, errOut)
	}
	var sum scanSummary
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatalf("scan --json: %v\n%s", err, out)
	}
	if !sum.Finished || sum.Projects != 2 || sum.Coverage != "complete" {
		t.Fatalf("scan summary: %+v", sum)
	}
	// projects finds by package name, and resolve answers for its id.
	out, _, rc = cliRun(t, "projects", "order-sdk", "--json")
	if rc != 0 {
		t.Fatalf("projects rc=%d", rc)
	}
	var env struct {
		Status   string
		Projects []struct {
			ProjectID   string
			ProjectPath string
		}
	}
	if err := json.Unmarshal([]byte(out), &env); err != nil || env.Status != "ok" || len(env.Projects) == 0 {
		t.Fatalf("projects: %v\n%s", err, out)
	}
	if env.Projects[0].ProjectPath != filepath.Join(code, "order-sdk") {
		t.Fatalf("top hit %q", env.Projects[0].ProjectPath)
	}
	out, _, rc = cliRun(t, "resolve", env.Projects[0].ProjectID)
	if rc != 0 || !strings.Contains(out, "projectPath: "+filepath.Join(code, "order-sdk")) {
		t.Fatalf("resolve: rc=%d\n%s", rc, out)
	}
	if _, _, rc := cliRun(t, "resolve", "cg_aaaaaaaaaaaaaaaa"); rc != 3 {
		t.Fatalf("resolve of an unknown id must exit 3, got %d", rc)
	}
	if _, errOut, rc := cliRun(t, "projects", "--limit", "0"); rc != 2 || !strings.Contains(errOut, "--limit") {
		t.Fatalf("bad --limit: rc=%d %s", rc, errOut)
	}
}

// TestBadConfigStillServes: a host must not see a dead server because of a
// typo in the config. serve answers initialize, lists both tools, answers
// every call with setup_required naming the problem, and picks up the
// corrected file without a restart.
func TestBadConfigStillServes(t *testing.T) {
	base := canonTemp(t)
	code := filepath.Join(base, "code")
	cliProject(t, filepath.Join(code, "order-sdk"), `{"name":"@acme/order-sdk"}`)
	cfg := filepath.Join(base, "c.json")
	writeTestFile(t, cfg, `{"version":1,"dataDir":"~/data"}`)
	c, err := client.NewStdioMCPClient(cgcatBin(t), os.Environ(), "serve", "--config", cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatalf("initialize with a bad config: %v", err)
	}
	tools, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil || len(tools.Tools) != 2 {
		t.Fatalf("tools/list with a bad config: %v %+v", err, tools)
	}
	call := func(args map[string]any) (status, message string) {
		t.Helper()
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = "local_codegraph_projects", args
		res, err := c.CallTool(ctx, req)
		if err != nil || res.IsError {
			t.Fatalf("call: %v %+v", err, res)
		}
		var env struct{ Status, Message string }
		b, _ := json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(b, &env)
		return env.Status, env.Message
	}
	status, msg := call(map[string]any{"query": "order"})
	if status != "setup_required" || !strings.Contains(msg, `dataDir: "~/data" starts with ~`) {
		t.Fatalf("bad config: want setup_required naming the problem, got %s %q", status, msg)
	}
	// Fixed on disk: the same server answers from it.
	writeTestFile(t, cfg, fmt.Sprintf(`{"version":1,"dataDir":%q,"discovery":{"roots":[%q]}}`, filepath.Join(base, "data"), code))
	deadline := time.Now().Add(10 * time.Second)
	for {
		status, msg = call(map[string]any{"query": "@acme/order-sdk"})
		if status == "ok" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the corrected config was not picked up: %s %q", status, msg)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
