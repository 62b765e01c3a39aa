//go:build linux

// Package faults holds the fault suite of issue 11: real cgcat processes
// against damaged stores, frozen lock holders, replaced data dirs, hostile
// trees (symlink swaps, bind mounts, escape sequences) and full disks. Each
// case fails against a binary without its fix. It has no code of its own.
//
//	go test ./cmd/cgcat/faults -v      # figures (freeze → answer, records kept) are logged
//
// Root-only cases (bind mount, tmpfs) skip with the reason when not root.
package faults

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"golang.org/x/sys/unix"

	"github.com/cgcat/cgcat/local/fixture"
)

var cgcatBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "cgcat-faults-")
	if err != nil {
		panic(err)
	}
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..", "..")
	cgcatBin = filepath.Join(dir, "cgcat")
	cmd := fixture.BuildCommand(cgcatBin)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build cgcat: %v\n%s", err, out)
		os.Exit(2)
	}
	code := m.Run()
	os.RemoveAll(dir)
	if bigDir != "" {
		os.RemoveAll(bigDir)
	}
	os.Exit(code)
}

// env is an isolated user for the child processes: HOME and the host
// config dirs point into the test's temp dir, so doctor never reads the
// real user's files.
func env(base string, extra ...string) []string {
	home := filepath.Join(base, "home")
	_ = os.MkdirAll(home, 0o755)
	return append(append(os.Environ(),
		"HOME="+home,
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_DATA_HOME="+filepath.Join(home, ".local", "share"),
		"CODEX_HOME="+filepath.Join(home, ".codex"),
		"CGCAT_CONFIG=",
		"OPENCODE_CONFIG=",
	), extra...)
}

func canonTemp(t testing.TB) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

const sqliteMagic = "SQLite format 3\x00"

// mkProject makes dir a CodeGraph project with a package.json.
func mkProject(t testing.TB, dir, name, desc string) {
	t.Helper()
	cg := filepath.Join(dir, ".codegraph")
	if err := os.MkdirAll(cg, 0o755); err != nil {
		t.Fatal(err)
	}
	db := append([]byte(sqliteMagic), make([]byte, 240)...)
	if err := os.WriteFile(filepath.Join(cg, "codegraph.db"), db, 0o644); err != nil {
		t.Fatal(err)
	}
	pj, _ := json.Marshal(map[string]any{"name": name, "description": desc, "version": "1.0.0", "keywords": []string{name + "-kw"}})
	if err := os.WriteFile(filepath.Join(dir, "package.json"), pj, 0o644); err != nil {
		t.Fatal(err)
	}
}

// genProjects makes groups×per projects under root/gNN/pNNN; it returns
// their paths.
func genProjects(t testing.TB, root string, groups, per int) []string {
	t.Helper()
	var out []string
	for g := range groups {
		for p := range per {
			d := filepath.Join(root, fmt.Sprintf("g%02d", g), fmt.Sprintf("p%03d", p))
			mkProject(t, d, fmt.Sprintf("pkg-%d-%d", g, p), fmt.Sprintf("project %d of group %d", p, g))
			out = append(out, d)
		}
	}
	return out
}

type cfgOpts struct {
	data         string
	roots, share []string
	deny         []string
	slice        int
	refresh      int
	maxDepth     int
}

func writeConfig(t testing.TB, path string, o cfgOpts) string {
	t.Helper()
	if o.slice == 0 {
		o.slice = 2000
	}
	if o.refresh == 0 {
		o.refresh = 3600
	}
	if o.maxDepth == 0 {
		o.maxDepth = 6
	}
	if o.share == nil {
		o.share = []string{}
	}
	if o.deny == nil {
		o.deny = []string{}
	}
	doc := map[string]any{
		"version": 1,
		"dataDir": o.data,
		"discovery": map[string]any{
			"roots": o.roots, "maxDirectoriesPerSlice": o.slice, "maxDirectoriesPerRound": max(o.slice, 100000),
			"refreshIntervalSeconds": o.refresh, "maxDepth": o.maxDepth,
		},
		"sharing": map[string]any{"roots": o.share, "denyRoots": o.deny, "exposeAbsolutePaths": true},
	}
	b, _ := json.MarshalIndent(doc, "", "  ")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// ---- one-shot commands ----------------------------------------------------------

type cliResult struct {
	args     []string
	stdout   string
	stderr   string
	code     int
	timedOut bool
	elapsed  time.Duration
}

func (r cliResult) String() string {
	return fmt.Sprintf("cgcat %s: exit %d%s (%s)\nstdout: %s\nstderr: %s", strings.Join(r.args, " "), r.code,
		map[bool]string{true: " (killed: no answer in time)"}[r.timedOut], r.elapsed.Round(time.Millisecond), short(r.stdout), short(r.stderr))
}

// short keeps the start of a long output; of a Go panic, its message and
// first frame.
func short(s string) string {
	if i := strings.Index(s, "panic:"); i >= 0 {
		lines := strings.SplitN(s[i:], "\n", 6)
		return s[:min(i, 300)] + strings.Join(lines[:min(len(lines), 5)], "\n") + "\n\t…"
	}
	if len(s) > 1200 {
		return s[:1200] + "…"
	}
	return s
}

func (r cliResult) out() string { return r.stdout + r.stderr }

func (r cliResult) panicked() bool {
	return strings.Contains(r.out(), "panic:") || strings.Contains(r.out(), "goroutine ")
}

func run(env []string, timeout time.Duration, stdin string, args ...string) cliResult {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, cgcatBin, args...)
	cmd.Env = env
	cmd.WaitDelay = 2 * time.Second
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	t0 := time.Now()
	err := cmd.Run()
	r := cliResult{args: args, stdout: out.String(), stderr: errb.String(), elapsed: time.Since(t0)}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		r.timedOut, r.code = true, -1
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		r.code, r.stderr = -1, r.stderr+err.Error()
	}
	return r
}

// ---- serve over stdio ------------------------------------------------------

type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 64<<10 {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-(64<<10):]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

type serveProc struct {
	cmd    *exec.Cmd
	c      *client.Client
	stdin  io.WriteCloser
	stderr *tail
	exited chan struct{}
}

// startServe starts `cgcat serve args…` and completes initialize within
// the timeout.
func startServe(t testing.TB, env []string, timeout time.Duration, args ...string) (*serveProc, error) {
	p := &serveProc{stderr: &tail{}, exited: make(chan struct{})}
	p.cmd = exec.Command(cgcatBin, append([]string{"serve"}, args...)...)
	p.cmd.Env = env
	p.cmd.Stderr = p.stderr
	var err error
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { _ = p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(p.kill)
	p.c = client.NewClient(transport.NewIO(out, p.stdin, io.NopCloser(strings.NewReader(""))))
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := p.c.Start(ctx); err != nil {
		return p, err
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "cgcat-faults-test", Version: "1"}
	if _, err := p.c.Initialize(ctx, init); err != nil {
		return p, fmt.Errorf("initialize: %v\nstderr:\n%s", err, short(p.stderr.String()))
	}
	return p, nil
}

func (p *serveProc) kill() {
	if p.cmd.Process != nil {
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
	}
	<-p.exited
	_ = p.c.Close()
}

// envelope is the part of an answer these tests read.
type envelope struct {
	Status          string    `json:"status"`
	Message         string    `json:"message"`
	MachineID       string    `json:"machineId"`
	CatalogRevision uint64    `json:"catalogRevision"`
	ScanState       string    `json:"scanState"`
	Coverage        string    `json:"coverage"`
	NextCursor      *string   `json:"nextCursor"`
	Projects        []project `json:"projects"`
}

type project struct {
	ProjectID    string   `json:"projectId"`
	Name         string   `json:"name"`
	Description  string   `json:"description"`
	ProjectPath  *string  `json:"projectPath"`
	Availability string   `json:"availability"`
	Packages     []string `json:"packages"`
}

func (p project) path() string {
	if p.ProjectPath == nil {
		return ""
	}
	return *p.ProjectPath
}

// call runs a tool call; raw is the text and structured content together.
func (p *serveProc) call(timeout time.Duration, tool string, args map[string]any) (envelope, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := p.c.CallTool(ctx, req)
	if err != nil {
		return envelope{}, "", err
	}
	var text strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	raw := text.String() + "\n" + string(res.RawStructuredContent)
	if res.IsError {
		return envelope{}, raw, fmt.Errorf("tool error: %s", text.String())
	}
	var e envelope
	if err := json.Unmarshal(res.RawStructuredContent, &e); err != nil {
		return e, raw, fmt.Errorf("decode: %v", err)
	}
	return e, raw, nil
}

// listAll pages through the plain listing: id → path ("" for none).
func (p *serveProc) listAll(timeout time.Duration) (map[string]string, string, error) {
	out := map[string]string{}
	var all strings.Builder
	args := map[string]any{"limit": 50}
	for page := 0; page < 1000; page++ {
		e, raw, err := p.call(timeout, "local_codegraph_projects", args)
		all.WriteString(raw)
		if err != nil {
			return out, all.String(), err
		}
		for _, pr := range e.Projects {
			if _, dup := out[pr.ProjectID]; dup {
				return out, all.String(), fmt.Errorf("id %s twice in one listing", pr.ProjectID)
			}
			out[pr.ProjectID] = pr.path()
		}
		if e.NextCursor == nil {
			return out, all.String(), nil
		}
		args = map[string]any{"limit": 50, "cursor": *e.NextCursor}
	}
	return out, all.String(), errors.New("listing never ends")
}

// copyDir copies a directory tree (regular files and dirs only).
func copyDir(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if fi.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, fi.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
}

func rng(t testing.TB) *rand.Rand {
	seed := uint64(time.Now().UnixNano())
	t.Logf("random moments from seed %d", seed)
	return rand.New(rand.NewPCG(seed, 7))
}

// bgProc is a one-shot command running in the background.
type bgProc struct {
	cmd    *exec.Cmd
	out    *tail
	exited chan struct{}
	err    error
}

func startBg(t testing.TB, env []string, args ...string) *bgProc {
	t.Helper()
	p := &bgProc{out: &tail{}, exited: make(chan struct{})}
	p.cmd = exec.Command(cgcatBin, args...)
	p.cmd.Env = env
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(p.kill)
	return p
}

func (p *bgProc) pid() int { return p.cmd.Process.Pid }

func (p *bgProc) done() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

func (p *bgProc) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGCONT)
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
}

// wait waits for the exit, killing the process after d.
func (p *bgProc) wait(d time.Duration) error {
	select {
	case <-p.exited:
		return p.err
	case <-time.After(d):
		p.kill()
		return fmt.Errorf("killed after %s", d)
	}
}

// holdsLock reports whether pid holds a lock on the file at path (per
// /proc/locks): for catalog.db/LOCK, LevelDB's own lock, held only while
// the process has the store open (inside a batch).
func holdsLock(pid int, path string) bool {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return false
	}
	id := fmt.Sprintf("%02x:%02x:%d", unix.Major(st.Dev), unix.Minor(st.Dev), st.Ino)
	b, err := os.ReadFile("/proc/locks")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 6 || f[1] == "->" {
			continue
		}
		if f[4] == fmt.Sprint(pid) && f[5] == id {
			return true
		}
	}
	return false
}
