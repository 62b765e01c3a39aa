//go:build linux

package lifecycle

// Real processes: the cgcat binary (built once per test run), `cgcat serve`
// spoken to over real stdio with the mcp-go client, one-shot CLI commands,
// and a watch on the scan lease that tells when no process can have held it.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"golang.org/x/sys/unix"

	"github.com/cgcat/cgcat/local/fixture"
)

// buildCgcat builds ./cmd/cgcat into dir.
func buildCgcat(dir string) (string, error) {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..", "..")
	bin := filepath.Join(dir, "cgcat")
	cmd := fixture.BuildCommand(bin)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build cgcat: %v\n%s", err, out)
	}
	return bin, nil
}

// tail keeps the last n bytes written to it.
type tail struct {
	mu  sync.Mutex
	n   int
	buf []byte
}

func newTail(n int) *tail { return &tail{n: n} }

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.n {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-t.n:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// envelope is the tools' answer as these tests read it. Unknown fields are
// ignored (the envelope may grow); the fields the invariants need are here,
// movedTo and warnings included (issue 12 items 6 and 8).
type envelope struct {
	SchemaVersion   int       `json:"schemaVersion"`
	Status          string    `json:"status"`
	Message         string    `json:"message"`
	MachineID       string    `json:"machineId"`
	CatalogRevision uint64    `json:"catalogRevision"`
	ScanState       string    `json:"scanState"`
	Coverage        string    `json:"coverage"`
	Projects        []project `json:"projects"`
	NextCursor      *string   `json:"nextCursor"`
	GBrainState     string    `json:"gbrainState"`
}

type project struct {
	ProjectID      string   `json:"projectId"`
	RecordRevision uint64   `json:"recordRevision"`
	Name           string   `json:"name"`
	Description    string   `json:"description"`
	ProjectPath    *string  `json:"projectPath"`
	Availability   string   `json:"availability"`
	IndexState     string   `json:"indexState"`
	Packages       []string `json:"packages"`
	MovedTo        string   `json:"movedTo"`
	Warnings       []string `json:"warnings"`
	Why            string   `json:"why"`
	Handoff        *struct {
		Arguments map[string]string `json:"arguments"`
	} `json:"handoff"`
}

func (p project) path() string {
	if p.ProjectPath == nil {
		return ""
	}
	return *p.ProjectPath
}

// answer is one answer of a tool or a CLI twin.
type answer struct {
	who   string // "serve main", "cli projects", ...
	env   envelope
	raw   string // everything the process said: text content and JSON
	text  string // a serve's text content ("" for the CLI)
	query bool   // a projects call with a query (GBrain recall runs in it)
	// quiet: no process held, took or tried the scan lease while the call
	// ran, so scanState "running" cannot be true (invariant e).
	quiet bool
	// elapsed: how long the call (or the CLI run) took.
	elapsed time.Duration
}

// serveProc is one real `cgcat serve` with an MCP client on its pipes.
type serveProc struct {
	name    string
	cmd     *exec.Cmd
	c       *client.Client
	stdin   io.WriteCloser
	stderr  *tail
	exited  chan struct{}
	waitErr error
	frozen  bool
	started int // step it was started at
}

func startServe(bin, cfg string, env []string, name string) (*serveProc, error) {
	p := &serveProc{name: name, stderr: newTail(32 << 10), exited: make(chan struct{})}
	p.cmd = exec.Command(bin, "serve", "--config", cfg)
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
	go func() { p.waitErr = p.cmd.Wait(); close(p.exited) }()
	p.c = client.NewClient(transport.NewIO(out, p.stdin, io.NopCloser(strings.NewReader(""))))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := p.c.Start(ctx); err != nil {
		p.kill()
		return nil, fmt.Errorf("start %s: %v", name, err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "cgcat-lifecycle-test", Version: "1"}
	if _, err := p.c.Initialize(ctx, init); err != nil {
		p.kill()
		return nil, fmt.Errorf("initialize %s: %v\nstderr:\n%s", name, err, p.stderr.String())
	}
	return p, nil
}

func (p *serveProc) alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// call runs one tool call. A transport failure or a tool error (isError) is
// an error: every call must answer (R22 allows isError only for an
// internal fault, and none is provoked here).
func (p *serveProc) call(tool string, args map[string]any) (answer, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := p.c.CallTool(ctx, req)
	a := answer{who: "serve " + p.name + " " + tool}
	if err != nil {
		return a, fmt.Errorf("%s %v: %v", a.who, args, err)
	}
	var text strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	a.text = text.String()
	a.raw = a.text + "\n" + string(res.RawStructuredContent)
	if res.IsError {
		return a, fmt.Errorf("%s %v: tool error: %s", a.who, args, text.String())
	}
	if err := json.Unmarshal(res.RawStructuredContent, &a.env); err != nil {
		return a, fmt.Errorf("%s: structuredContent does not decode: %v: %.300s", a.who, err, res.RawStructuredContent)
	}
	return a, nil
}

func (p *serveProc) signal(sig syscall.Signal) {
	if p.cmd.Process != nil {
		_ = p.cmd.Process.Signal(sig)
	}
}

// stop closes stdin (a host going away) and waits for the exit; a process
// that does not exit within 10 s is killed and reported.
func (p *serveProc) stop() error {
	if p.frozen {
		p.signal(syscall.SIGCONT)
		p.frozen = false
	}
	_ = p.c.Close()
	_ = p.stdin.Close()
	select {
	case <-p.exited:
		return nil
	case <-time.After(10 * time.Second):
		p.kill()
		return fmt.Errorf("serve %s did not exit within 10 s of stdin closing", p.name)
	}
}

func (p *serveProc) kill() {
	p.signal(syscall.SIGCONT)
	p.signal(syscall.SIGKILL)
	<-p.exited
	_ = p.c.Close()
}

// cliResult is one run of a one-shot command.
type cliResult struct {
	args     []string
	stdout   string
	stderr   string
	code     int
	timedOut bool
	elapsed  time.Duration
}

func (r cliResult) String() string {
	return fmt.Sprintf("cgcat %s: exit %d%s\nstdout: %.1500s\nstderr: %.1500s", strings.Join(r.args, " "), r.code,
		map[bool]string{true: " (killed: no answer in time)"}[r.timedOut], r.stdout, r.stderr)
}

// runCLI runs the binary with a bound on its run time (so a process blocked
// by another one cannot hang the test; the bound is reported, not measured).
func runCLI(bin string, env []string, timeout time.Duration, args ...string) cliResult {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	cmd.WaitDelay = 2 * time.Second
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

// bgScan is a `cgcat scan` running in the background (to be killed, frozen,
// or left to finish).
type bgScan struct {
	cmd      *exec.Cmd
	done     chan struct{}
	err      error
	progress chan struct{} // one per committed slice
	out      *tail
	frozen   bool
}

func startScan(bin string, env []string, cfg string) (*bgScan, error) {
	s := &bgScan{done: make(chan struct{}), progress: make(chan struct{}, 1024), out: newTail(8 << 10)}
	s.cmd = exec.Command(bin, "scan", "--config", cfg)
	s.cmd.Env = append(append([]string(nil), env...), "CGCAT_PROGRESS=lines")
	stderr, err := s.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	s.cmd.Stdout = s.out
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			if strings.HasPrefix(line, "progress ") {
				select {
				case s.progress <- struct{}{}:
				default:
				}
				continue
			}
			s.out.Write([]byte(line + "\n"))
		}
		s.err = s.cmd.Wait()
		close(s.done)
	}()
	return s, nil
}

func (s *bgScan) finished() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

func (s *bgScan) kill() {
	_ = s.cmd.Process.Signal(syscall.SIGCONT)
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.done
}

// ---- the scan lease -------------------------------------------------------

// leaseWatch watches the data dir with inotify for any write to, change
// or replacement of scan.lease. Together with /proc/locks before and after
// a call, it proves that no process held the lease during the call: one
// that held it before the call or still holds it after is in /proc/locks;
// one that took it during the call wrote its pid and mtime into the file
// right after locking it (IN_MODIFY, IN_ATTRIB, queued before the write
// returns), and one that tried and failed opened the file for writing and
// closed it (IN_CLOSE_WRITE); a steal replaces the file. Plain opens for
// reading are not counted: every answer reads the file (lease.Active) to
// tell whether a pass is running, so counting them proved nothing ever.
type leaseWatch struct {
	fd   int
	dir  string
	name string
}

func newLeaseWatch(dir string) (*leaseWatch, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, err
	}
	mask := uint32(unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_CREATE | unix.IN_MOVED_TO | unix.IN_DELETE | unix.IN_CLOSE_WRITE)
	if _, err := unix.InotifyAddWatch(fd, dir, mask); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return &leaseWatch{fd: fd, dir: dir, name: "scan.lease"}, nil
}

func (w *leaseWatch) close() { unix.Close(w.fd) }

// drain reads every queued event and reports whether one was about the
// lease file (or the watch overflowed, which proves nothing).
func (w *leaseWatch) drain() bool {
	touched := false
	buf := make([]byte, 64<<10)
	for {
		n, err := unix.Read(w.fd, buf)
		if n <= 0 || err != nil {
			return touched
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := ""
			if ev.Len > 0 {
				name = strings.TrimRight(string(buf[off+unix.SizeofInotifyEvent:off+unix.SizeofInotifyEvent+int(ev.Len)]), "\x00")
			}
			if ev.Mask&unix.IN_Q_OVERFLOW != 0 || name == w.name {
				touched = true
			}
			off += unix.SizeofInotifyEvent + int(ev.Len)
		}
	}
}

// leaseHolders lists the pids holding a lock on the current scan.lease.
func leaseHolders(dataDir string) []int { return lockHolders(filepath.Join(dataDir, "scan.lease")) }

// lockHolders lists the pids holding a lock on the file at path (from
// /proc/locks; for catalog.db/LOCK, the process inside a store batch).
func lockHolders(path string) []int {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return nil
	}
	id := fmt.Sprintf("%02x:%02x:%d", unix.Major(st.Dev), unix.Minor(st.Dev), st.Ino)
	b, err := os.ReadFile("/proc/locks")
	if err != nil {
		return nil
	}
	var pids []int
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 6 || f[1] == "->" { // "->": a waiter, not a holder
			continue
		}
		if f[5] == id {
			var pid int
			fmt.Sscan(f[4], &pid)
			pids = append(pids, pid)
		}
	}
	return pids
}

// quietCall runs fn and reports whether the scan lease was provably free
// for the whole call.
func (w *leaseWatch) quietCall(fn func()) bool {
	w.drain()
	before := leaseHolders(w.dir)
	fn()
	after := leaseHolders(w.dir)
	touched := w.drain()
	return len(before) == 0 && len(after) == 0 && !touched
}
