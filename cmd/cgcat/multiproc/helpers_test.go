//go:build linux

// Package multiproc holds the tests of R27: several real cgcat processes
// (servers, scanners) on one data dir. It has no code of its own.
package multiproc

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

var cgcatBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "cgcat-multiproc-")
	if err != nil {
		panic(err)
	}
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..", "..")
	cgcatBin = filepath.Join(dir, "cgcat")
	cmd := exec.Command("go", "build", "-o", cgcatBin, "./cmd/cgcat")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build cgcat: %v\n%s", err, out)
		os.Exit(2)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func mkProject(t testing.TB, dir, name, desc string) {
	t.Helper()
	cg := filepath.Join(dir, ".codegraph")
	if err := os.MkdirAll(cg, 0o755); err != nil {
		t.Fatal(err)
	}
	db := append([]byte("SQLite format 3\x00"), make([]byte, 1000)...)
	if err := os.WriteFile(filepath.Join(cg, "codegraph.db"), db, 0o644); err != nil {
		t.Fatal(err)
	}
	pj, _ := json.Marshal(map[string]string{"name": name, "description": desc})
	if err := os.WriteFile(filepath.Join(dir, "package.json"), pj, 0o644); err != nil {
		t.Fatal(err)
	}
}

// genTree makes fanout^depth-ish directories with a project every `every`.
func genTree(t testing.TB, root string, fanout, depth, every int) []string {
	t.Helper()
	var projects []string
	n := 0
	var mk func(dir string, d int)
	mk = func(dir string, d int) {
		if d == depth {
			return
		}
		for i := range fanout {
			c := filepath.Join(dir, fmt.Sprintf("d%d", i))
			if err := os.MkdirAll(c, 0o755); err != nil {
				t.Fatal(err)
			}
			n++
			if n%every == 0 {
				mkProject(t, c, fmt.Sprintf("pkg-%d", n), fmt.Sprintf("project number %d", n))
				projects = append(projects, c)
			}
			mk(c, d+1)
		}
	}
	mk(root, 0)
	sort.Strings(projects)
	return projects
}

type cfgOpts struct {
	data, root   string
	share, deny  []string
	slice, round int
	refresh      int // refreshIntervalSeconds; 0 means 5
}

func writeConfig(t testing.TB, dir string, o cfgOpts) string {
	t.Helper()
	share := o.share
	if share == nil {
		share = []string{o.root}
	}
	if o.slice == 0 {
		o.slice = 2000
	}
	if o.round == 0 {
		o.round = 100000
	}
	if o.refresh == 0 {
		o.refresh = 5
	}
	cfg := map[string]any{
		"version": 1,
		"dataDir": o.data,
		"discovery": map[string]any{
			"roots": []string{o.root}, "maxDirectoriesPerSlice": o.slice, "maxDirectoriesPerRound": o.round,
			"refreshIntervalSeconds": o.refresh,
		},
		"sharing": map[string]any{"roots": share, "denyRoots": o.deny},
	}
	b, _ := json.MarshalIndent(cfg, "", "  ")
	p := filepath.Join(dir, fmt.Sprintf("config-%d.json", time.Now().UnixNano()))
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// server is one real `cgcat serve` process with an MCP client on its pipes.
type server struct {
	c *client.Client
}

func startServer(t testing.TB, cfg string, env ...string) *server {
	t.Helper()
	c, err := client.NewStdioMCPClient(cgcatBin, append(os.Environ(), env...), "serve", "--config", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "multiproc-test", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return &server{c: c}
}

// envelope is the part of the answer these tests read.
type envelope struct {
	Status          string  `json:"status"`
	Message         string  `json:"message"`
	CatalogRevision uint64  `json:"catalogRevision"`
	ScanState       string  `json:"scanState"`
	Coverage        string  `json:"coverage"`
	NextCursor      *string `json:"nextCursor"`
	Projects        []struct {
		ProjectID   string  `json:"projectId"`
		Name        string  `json:"name"`
		ProjectPath *string `json:"projectPath"`
	} `json:"projects"`
}

func (s *server) call(ctx context.Context, tool string, args map[string]any) (envelope, string, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := s.c.CallTool(ctx, req)
	if err != nil {
		return envelope{}, "", err
	}
	text := ""
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			text += tc.Text
		}
	}
	if res.IsError {
		return envelope{}, text, fmt.Errorf("tool error: %s", text)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var e envelope
	if err := json.Unmarshal(raw, &e); err != nil {
		return e, text, fmt.Errorf("decode envelope: %v: %s", err, raw)
	}
	return e, text + string(raw), nil
}

// listAll walks every page of the plain listing and returns id → path.
func (s *server) listAll(t testing.TB, ctx context.Context) map[string]string {
	t.Helper()
	out := map[string]string{}
	args := map[string]any{"limit": 50}
	for {
		e, _, err := s.call(ctx, "local_codegraph_projects", args)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range e.Projects {
			path := ""
			if p.ProjectPath != nil {
				path = *p.ProjectPath
			}
			if _, dup := out[p.ProjectID]; dup {
				t.Fatalf("id %s twice in one listing", p.ProjectID)
			}
			out[p.ProjectID] = path
		}
		if e.NextCursor == nil {
			return out
		}
		args = map[string]any{"limit": 50, "cursor": *e.NextCursor}
	}
}

func runCgcat(t testing.TB, env []string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(cgcatBin, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		if cond() {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("timed out after %s waiting for %s", d, what)
}
