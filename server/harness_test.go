package server_test

// The protocol tests drive the real cgcat binary over real stdio pipes with
// the mcp-go client. This file holds the harness: the binary (built once per
// test run), fixture trees, config files, and a server process whose stdout
// is recorded so every test can check that only JSON-RPC went over it and
// that nothing hidden leaked into any answer.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cgcat/cgcat/server"
	"github.com/cgcat/cgcat/server/protocol"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	binDir    string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// moduleRoot is the directory holding go.mod, found from this file.
func moduleRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(file))
}

// cgcatBinary builds ./cmd/cgcat once per test run (with -race when the
// tests run with -race, so the server's own races show up too).
func cgcatBinary(tb testing.TB) string {
	tb.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "cgcat-bin-")
		if buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "cgcat")
		args := []string{"build", "-o", binPath}
		if raceEnabled {
			args = append(args, "-race")
		}
		args = append(args, "./cmd/cgcat")
		cmd := exec.Command("go", args...)
		cmd.Dir = moduleRoot()
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		tb.Fatal(buildErr)
	}
	return binPath
}

// ---- fixtures -------------------------------------------------------------

// tempDir is a canonical temporary directory.
func tempDir(tb testing.TB) string {
	tb.Helper()
	d, err := filepath.EvalSymlinks(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

func writeFile(tb testing.TB, path, body string) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		tb.Fatal(err)
	}
}

// project makes dir a CodeGraph project with a package.json (when name is
// not empty) and a README.
func project(tb testing.TB, dir, name, description string) string {
	tb.Helper()
	server.MakeProjectDir(tb, dir)
	if name != "" {
		pkg, _ := json.Marshal(map[string]any{"name": name, "description": description, "version": "1.0.0"})
		writeFile(tb, filepath.Join(dir, "package.json"), string(pkg))
	}
	writeFile(tb, filepath.Join(dir, "README.md"), "# "+filepath.Base(dir)+"\n\nA fixture project.\n")
	return dir
}

// cfg is a config file's content; write makes it a file.
type cfg struct {
	DataDir   string
	Roots     []string
	Share     []string
	Deny      []string
	HidePaths bool
	SliceDirs int // maxDirectoriesPerSlice (and per round) when > 0
	SliceMs   int
	MaxDepth  *int
}

func (c cfg) write(tb testing.TB) string {
	tb.Helper()
	disc := map[string]any{"roots": nonNil(c.Roots), "refreshIntervalSeconds": 3600}
	if c.SliceDirs > 0 {
		disc["maxDirectoriesPerSlice"] = c.SliceDirs
		disc["maxDirectoriesPerRound"] = c.SliceDirs
	}
	if c.SliceMs > 0 {
		disc["maxSliceMs"] = c.SliceMs
	}
	if c.MaxDepth != nil {
		disc["maxDepth"] = *c.MaxDepth
	}
	doc := map[string]any{
		"version":   1,
		"dataDir":   c.DataDir,
		"discovery": disc,
		"sharing": map[string]any{
			"roots":               nonNil(c.Share),
			"denyRoots":           nonNil(c.Deny),
			"exposeAbsolutePaths": !c.HidePaths,
		},
	}
	b, _ := json.MarshalIndent(doc, "", "  ")
	f, err := os.CreateTemp(tb.TempDir(), "config-*.json")
	if err != nil {
		tb.Fatal(err)
	}
	f.Write(b)
	f.Close()
	return f.Name()
}

func nonNil(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}

// ---- the server process --------------------------------------------------

// recorder keeps a copy of everything the server wrote on a stream.
type recorder struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (r *recorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.buf.Write(p)
}

func (r *recorder) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.buf.String()
}

type proc struct {
	t       testing.TB
	cmd     *exec.Cmd
	c       *client.Client
	stdin   io.WriteCloser
	stdout  recorder
	stderr  recorder
	exited  chan struct{}
	waitErr error
	closed  bool
	// InitTime is how long initialize took from process start.
	InitTime time.Duration
	// ExitTime is how long the process took to exit after stdin closed.
	ExitTime time.Duration
}

// serve starts `cgcat serve --config cfgPath [args]`, completes the MCP
// handshake and registers a cleanup that closes stdin, waits for the exit
// and checks that stdout carried only JSON-RPC.
func serve(tb testing.TB, cfgPath string, args ...string) *proc {
	tb.Helper()
	p := &proc{t: tb, exited: make(chan struct{})}
	p.cmd = exec.Command(cgcatBinary(tb), append([]string{"serve", "--config", cfgPath}, args...)...)
	p.cmd.Env = append(os.Environ(), "CGCAT_LOG=debug")
	p.cmd.Stderr = &p.stderr
	var err error
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		tb.Fatal(err)
	}
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	start := time.Now()
	if err := p.cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	go func() { p.waitErr = p.cmd.Wait(); close(p.exited) }()
	tr := transport.NewIO(io.TeeReader(out, &p.stdout), p.stdin, io.NopCloser(strings.NewReader("")))
	p.c = client.NewClient(tr)
	tb.Cleanup(func() { p.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.c.Start(ctx); err != nil {
		tb.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "cgcat-protocol-test", Version: "1"}
	res, err := p.c.Initialize(ctx, init)
	if err != nil {
		tb.Fatalf("initialize: %v\nstderr:\n%s", err, p.stderr.String())
	}
	p.InitTime = time.Since(start)
	if res.ServerInfo.Name != "cgcat" {
		tb.Fatalf("serverInfo.name = %q", res.ServerInfo.Name)
	}
	return p
}

// Close closes stdin and waits (10 s at most) for the process to exit, then
// checks that every line on stdout was a JSON-RPC message.
func (p *proc) Close() {
	if p.closed {
		return
	}
	p.closed = true
	t0 := time.Now()
	_ = p.stdin.Close()
	select {
	case <-p.exited:
		p.ExitTime = time.Since(t0)
		if p.ExitTime > time.Second {
			p.t.Logf("cgcat serve took %s to exit after stdin closed; stderr:\n%s", p.ExitTime, p.stderr.String())
		}
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
		p.t.Errorf("cgcat serve did not exit within 10 s of stdin closing\nstderr:\n%s", p.stderr.String())
	}
	if p.waitErr != nil && p.ExitTime > 0 {
		p.t.Errorf("cgcat serve exited with %v after stdin closed\nstderr:\n%s", p.waitErr, p.stderr.String())
	}
	checkJSONRPCOnly(p.t, p.stdout.String())
}

func checkJSONRPCOnly(tb testing.TB, out string) {
	tb.Helper()
	for i, line := range strings.Split(out, "\n") {
		if line == "" {
			continue
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &m); err != nil || string(m["jsonrpc"]) != `"2.0"` {
			tb.Errorf("stdout line %d is not a JSON-RPC message: %.200q", i+1, line)
		}
	}
}

// answer is one tools/call result.
type answer struct {
	res  *mcp.CallToolResult
	env  *server.Envelope // nil for a tool error
	raw  map[string]any   // structuredContent as JSON
	text string
}

func (p *proc) call(tool string, args any) answer {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := p.c.CallTool(ctx, req)
	if err != nil {
		p.t.Fatalf("tools/call %s %v: %v\nstderr:\n%s", tool, args, err, p.stderr.String())
	}
	a := answer{res: res}
	if len(res.Content) != 1 {
		p.t.Fatalf("tools/call %s: %d content items, want 1 text item", tool, len(res.Content))
	}
	tc, ok := res.Content[0].(mcp.TextContent)
	if !ok {
		p.t.Fatalf("tools/call %s: content is %T, want text", tool, res.Content[0])
	}
	a.text = tc.Text
	if res.IsError {
		if len(res.RawStructuredContent) != 0 {
			p.t.Errorf("tool error with structuredContent: %s", res.RawStructuredContent)
		}
		return a
	}
	if len(res.RawStructuredContent) == 0 {
		p.t.Fatalf("tools/call %s: no structuredContent; text:\n%s", tool, a.text)
	}
	validateEnvelope(p.t, res.RawStructuredContent)
	dec := json.NewDecoder(bytes.NewReader(res.RawStructuredContent))
	dec.DisallowUnknownFields()
	a.env = new(server.Envelope)
	if err := dec.Decode(a.env); err != nil {
		p.t.Fatalf("structuredContent does not decode as an Envelope: %v\n%s", err, res.RawStructuredContent)
	}
	_ = json.Unmarshal(res.RawStructuredContent, &a.raw)
	checkEnvelopeInvariants(p.t, a)
	return a
}

func (p *proc) projects(args map[string]any) answer {
	p.t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	return p.call(protocol.ToolProjects, args)
}

func (p *proc) resolve(args map[string]any) answer {
	p.t.Helper()
	return p.call(protocol.ToolResolve, args)
}

// waitScanned polls until discovery finished a pass with complete coverage.
func (p *proc) waitScanned() answer {
	p.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		a := p.projects(map[string]any{"limit": 50})
		if a.env.ScanState == "idle" && a.env.Coverage == "complete" {
			return a
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("discovery did not finish: scanState=%s coverage=%s\nstderr:\n%s", a.env.ScanState, a.env.Coverage, p.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitFor polls a listing until cond holds.
func (p *proc) waitFor(args map[string]any, what string, cond func(answer) bool) answer {
	p.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		a := p.projects(args)
		if cond(a) {
			return a
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("timed out waiting for %s; last answer:\n%s", what, a.text)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

var (
	schemaOnce sync.Once
	schema     *jsonschema.Schema
	schemaErr  error
)

// validateEnvelope checks structuredContent against the published
// outputSchema.
func validateEnvelope(tb testing.TB, raw []byte) {
	tb.Helper()
	schemaOnce.Do(func() {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(protocol.OutputSchema()))
		if err != nil {
			schemaErr = err
			return
		}
		c := jsonschema.NewCompiler()
		if schemaErr = c.AddResource("envelope.json", doc); schemaErr != nil {
			return
		}
		schema, schemaErr = c.Compile("envelope.json")
	})
	if schemaErr != nil {
		tb.Fatal(schemaErr)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		tb.Fatal(err)
	}
	if err := schema.Validate(inst); err != nil {
		tb.Errorf("structuredContent does not match the outputSchema: %v\n%s", err, raw)
	}
}

// checkEnvelopeInvariants holds for every answer: R17, R18.
func checkEnvelopeInvariants(tb testing.TB, a answer) {
	tb.Helper()
	e := a.env
	if e.SchemaVersion != 1 {
		tb.Errorf("schemaVersion %d", e.SchemaVersion)
	}
	for _, key := range []string{"nextCursor", "projects", "machineId", "catalogRevision", "scanState", "coverage", "gbrainState"} {
		if _, ok := a.raw[key]; !ok {
			tb.Errorf("envelope lacks %q", key)
		}
	}
	textPaths := pathsInText(a.text)
	var structPaths []string
	for i, p := range e.Projects {
		raw := a.raw["projects"].([]any)[i].(map[string]any)
		if _, ok := raw["projectPath"]; !ok {
			tb.Errorf("project %s has no projectPath key (want a string or null)", p.ProjectID)
		}
		if !strings.Contains(a.text, "projectId="+p.ProjectID) {
			tb.Errorf("text does not name project %s:\n%s", p.ProjectID, a.text)
		}
		if p.ProjectPath == nil {
			if p.Handoff != nil {
				tb.Errorf("project %s: handoff without projectPath", p.ProjectID)
			}
			structPaths = append(structPaths, "")
			continue
		}
		path := *p.ProjectPath
		structPaths = append(structPaths, path)
		if !filepath.IsAbs(path) || filepath.Clean(path) != path || strings.Contains(path, ".codegraph") ||
			strings.Contains(path, "://") || strings.HasPrefix(path, "~") || strings.Contains(path, "$") {
			tb.Errorf("projectPath %q is not a clean absolute root", path)
		}
		if h := p.Handoff; h != nil {
			if h.Arguments["projectPath"] != path || len(h.Arguments) != 1 || h.ToolName != "codegraph_explore" ||
				h.MCPServerHint != "codegraph" || len(h.RequiredFromAgent) != 1 || h.RequiredFromAgent[0] != "query" {
				tb.Errorf("project %s: bad handoff %+v", p.ProjectID, h)
			}
		}
	}
	if len(textPaths) != len(structPaths) {
		tb.Errorf("text shows %d projectPath lines, structuredContent %d projects:\n%s", len(textPaths), len(structPaths), a.text)
	} else {
		for i := range textPaths {
			if textPaths[i] != structPaths[i] {
				tb.Errorf("project %d: text path %q != structured path %q", i, textPaths[i], structPaths[i])
			}
		}
	}
	if len(structPaths) > 0 && slicesContainsNonEmpty(structPaths) && !strings.Contains(a.text, "codegraph_explore") {
		tb.Errorf("text lacks the codegraph_explore hint:\n%s", a.text)
	}
	if e.NextCursor != nil && !strings.Contains(a.text, *e.NextCursor) {
		tb.Errorf("text does not show nextCursor")
	}
}

func slicesContainsNonEmpty(xs []string) bool {
	for _, x := range xs {
		if x != "" {
			return true
		}
	}
	return false
}

// pathsInText returns the projectPath of each project block of a text
// answer ("" for "none").
func pathsInText(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		rest, ok := strings.CutPrefix(line, "   projectPath: ")
		if !ok {
			continue
		}
		if strings.HasPrefix(rest, "none — ") || rest == "none" {
			rest = ""
		}
		out = append(out, rest)
	}
	return out
}

// ids returns the projectIds of an answer, in order.
func (a answer) ids() []string {
	var out []string
	for _, p := range a.env.Projects {
		out = append(out, p.ProjectID)
	}
	return out
}

// byName finds a project of an answer by name.
func (a answer) byName(name string) *server.Project {
	for i := range a.env.Projects {
		if a.env.Projects[i].Name == name {
			return &a.env.Projects[i]
		}
	}
	return nil
}

func (a answer) names() []string {
	var out []string
	for _, p := range a.env.Projects {
		out = append(out, p.Name)
	}
	return out
}

func mcpListTools() mcp.ListToolsRequest { return mcp.ListToolsRequest{} }
