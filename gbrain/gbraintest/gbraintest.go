// Package gbraintest gives tests a GBrain. It owns:
//   - the fake GBrain MCP server, in two forms that run the same code
//     (internal/fakeserver over internal/fakebrain): a process
//     (./fakegbrain, built once per test binary, with its own state and
//     control files per test; [New]) started over stdio
//     ([Fake.Connection]), and an in-process fake ([NewInProcess]) whose
//     state lives in memory and whose connections are in-process
//     transports — no process, no file, for unit tests. Both serve HTTP
//     with OAuth clients and tokens ([Fake.ServeHTTP]: a process, or a
//     listener of the test process), dial a [gbrain.Client]
//     ([Fake.Dial], [Fake.Dialer]), and give direct access to the state —
//     call counts, stored pages, fault switches, and writes "behind
//     cgcat's back" as another GBrain client would make them;
//   - [Real], a real GBrain (its source tree run with bun against a Postgres
//     brain) for the tests that look for one, skipped unless the environment
//     names one.
//
// Only tests import it; it is never part of the cgcat binary. A test binary
// that uses it should remove the build with
//
//	func TestMain(m *testing.M) { os.Exit(gbraintest.Main(m)) }
package gbraintest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/cgcat/cgcat/gbrain"
	"github.com/cgcat/cgcat/gbrain/gbraintest/internal/fakebrain"
	"github.com/cgcat/cgcat/gbrain/gbraintest/internal/fakeserver"
)

// FakePackage is the import path of the fake server program.
const FakePackage = "github.com/cgcat/cgcat/gbrain/gbraintest/fakegbrain"

// Re-exported fake types.
type (
	// Control holds the fault switches; see the field docs.
	Control = fakebrain.Control
	// Page is a page as the fake stores it.
	Page = fakebrain.Page
	// Start records one start of the fake process.
	Start = fakebrain.Start
)

var (
	buildOnce sync.Once
	buildDir  string
	buildBin  string
	buildErr  error
)

// Binary builds the fake server (once per test binary) and returns its path.
func Binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		goBin, err := exec.LookPath("go")
		if err != nil {
			goBin = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
		}
		buildDir, err = os.MkdirTemp("", "cgcat-fakegbrain-")
		if err != nil {
			buildErr = err
			return
		}
		buildBin = filepath.Join(buildDir, "fakegbrain")
		cmd := exec.Command(goBin, "build", "-o", buildBin, FakePackage)
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build %s: %v\n%s", FakePackage, err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildBin
}

// Main runs the tests and removes the built fake afterwards.
func Main(m *testing.M) int {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	return code
}

// Fake is one fake brain: a state file, a control file and the program
// ([New]), or a state and fault switches in memory served in this process
// ([NewInProcess]).
type Fake struct {
	Bin         string   // the program ("" for an in-process fake)
	Dir         string   // the test's temp dir (state, control, ready files)
	StatePath   string   // GBRAIN_FAKE_STATE ("" in process)
	ControlPath string   // GBRAIN_FAKE_CONTROL ("" in process)
	Sources     []string // registered besides "default" (GBRAIN_FAKE_SOURCES)
	// Env is added to the Connection (e.g. GBRAIN_FAKE_FORCE_SOURCE, which
	// an in-process fake honours too).
	Env map[string]string

	store    *fakebrain.Store
	controls fakebrain.Controls
}

// New prepares a fake brain run as a process, with the given sources
// registered (besides "default").
func New(t testing.TB, sources ...string) *Fake {
	t.Helper()
	dir := t.TempDir()
	f := &Fake{
		Bin:         Binary(t),
		Dir:         dir,
		StatePath:   filepath.Join(dir, "gbrain-state.json"),
		ControlPath: filepath.Join(dir, "gbrain-control.json"),
		Sources:     sources,
		Env:         map[string]string{},
	}
	f.store = fakebrain.FileStore(f.StatePath)
	f.controls = fakebrain.ControlFile(f.ControlPath)
	return f
}

// NewInProcess prepares a fake brain served inside the test process: the
// same tools, answers and fault switches as the process (over an
// in-process MCP transport, or over HTTP on a listener of this process),
// its state in memory. A dial is a new "process": a fault that drops a
// connection ends that one only. A dial fails as the client reports a
// process that exits at start-up (Control.ExitAtStart); a slow start
// (StartDelayMs) needs a process: use [New].
func NewInProcess(t testing.TB, sources ...string) *Fake {
	t.Helper()
	return &Fake{Dir: t.TempDir(), Sources: sources, Env: map[string]string{},
		store: fakebrain.MemoryStore(), controls: &fakebrain.ControlMemory{}}
}

// InProcess reports whether the fake runs inside the test process.
func (f *Fake) InProcess() bool { return f.Bin == "" }

// Connection starts the fake as `fakegbrain serve` over stdio. An
// in-process fake has none: use Dialer.
func (f *Fake) Connection() gbrain.Connection {
	if f.InProcess() {
		panic("gbraintest: an in-process fake has no stdio connection; use Dialer")
	}
	env := map[string]string{
		"GBRAIN_FAKE_STATE":   f.StatePath,
		"GBRAIN_FAKE_CONTROL": f.ControlPath,
		"GBRAIN_FAKE_SOURCES": strings.Join(f.Sources, ","),
	}
	for k, v := range f.Env {
		env[k] = v
	}
	return gbrain.Connection{Command: f.Bin, Args: []string{"serve"}, Env: env}
}

// Dialer returns a function that connects a new client as Dial does
// (a new process, or a new in-process connection).
func (f *Fake) Dialer(opts gbrain.Options) func(ctx context.Context) (*gbrain.Client, error) {
	return func(ctx context.Context) (*gbrain.Client, error) {
		if !f.InProcess() {
			return gbrain.Dial(ctx, f.Connection(), opts)
		}
		return f.dialInProcess(ctx, opts)
	}
}

// dialInProcess is a stdio start of the fake without a process: the server's
// source is what the client would pin (GBRAIN_SOURCE) when well-formed.
func (f *Fake) dialInProcess(ctx context.Context, opts gbrain.Options) (*gbrain.Client, error) {
	src := "default"
	if fakebrain.ValidSource(opts.ExpectedSource) {
		src = opts.ExpectedSource
	}
	if forced := f.Env["GBRAIN_FAKE_FORCE_SOURCE"]; forced != "" {
		src = forced
	}
	// A process that dies at start-up, as the client sees it.
	ctl, err := f.controls.Read()
	if err != nil {
		return nil, err
	}
	switch ctl.ExitAtStart {
	case "pglite":
		return nil, &gbrain.DialError{Class: gbrain.Definite, Err: &gbrain.ProcessExitedError{Code: 1,
			Stderr: "[gbrain] Error: GBrain's local database is already open through `gbrain serve`. PGLite cannot open it at the same time."}}
	case "crash":
		return nil, &gbrain.DialError{Class: gbrain.Transient, Err: fmt.Errorf("gbrain handshake: %w",
			&gbrain.ProcessExitedError{Code: 3, Stderr: "[gbrain] fatal: simulated crash at start-up"})}
	}
	srv := f.server(&fakebrain.Brain{Source: src, Registered: f.Sources})
	if err := f.store.Update(func(st *fakebrain.State) error {
		st.Starts = append(st.Starts, fakebrain.Start{PID: os.Getpid(), Source: src, EnvSource: opts.ExpectedSource,
			EnvBrain: opts.ExpectedBrain, SkipHooks: "1", Args: []string{"serve", "--in-process"}})
		return nil
	}); err != nil {
		return nil, err
	}
	return gbrain.DialTransport(ctx, srv.Transport(srv.MCP()), opts)
}

// RawTransport is a bare in-process connection to an in-process fake
// serving source, for tests of the fake itself with a client of their own.
func (f *Fake) RawTransport(source string) transport.Interface {
	srv := f.server(&fakebrain.Brain{Source: source, Registered: f.Sources})
	return srv.Transport(srv.MCP())
}

func (f *Fake) server(b *fakebrain.Brain) *fakeserver.Server {
	return &fakeserver.Server{Store: f.store, Controls: f.controls, Registered: f.Sources, Brain: b}
}

// Dial connects a client to the fake (a new process, or a new in-process
// connection); the client is closed when the test ends. Zero timeouts in
// opts become 10 s (handshake) and 5 s (call).
func (f *Fake) Dial(t testing.TB, opts gbrain.Options) *gbrain.Client {
	t.Helper()
	if opts.HandshakeTimeout == 0 {
		opts.HandshakeTimeout = 10 * time.Second
	}
	if opts.CallTimeout == 0 {
		opts.CallTimeout = 5 * time.Second
	}
	c, err := f.Dialer(opts)(context.Background())
	if err != nil {
		t.Fatalf("dial fake gbrain: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// SetControl replaces the fault switches; running fakes see them at their
// next call.
func (f *Fake) SetControl(t testing.TB, c Control) {
	t.Helper()
	if err := f.controls.Write(c); err != nil {
		t.Fatal(err)
	}
}

// view runs fn on the state under its lock.
func (f *Fake) view(t testing.TB, fn func(*fakebrain.State)) {
	t.Helper()
	if err := f.store.View(func(st *fakebrain.State) error { fn(st); return nil }); err != nil {
		t.Fatal(err)
	}
}

// Calls returns the number of calls per tool so far.
func (f *Fake) Calls(t testing.TB) map[string]int {
	t.Helper()
	out := map[string]int{}
	f.view(t, func(st *fakebrain.State) {
		for k, v := range st.Calls {
			out[k] = v
		}
	})
	return out
}

// ResetCalls zeroes the call counts.
func (f *Fake) ResetCalls(t testing.TB) {
	t.Helper()
	f.update(t, func(st *fakebrain.State) error { st.Calls = map[string]int{}; return nil })
}

// Starts lists the fake processes (or in-process connections) started so
// far.
func (f *Fake) Starts(t testing.TB) []Start {
	t.Helper()
	var out []Start
	f.view(t, func(st *fakebrain.State) { out = append(out, st.Starts...) })
	return out
}

// Page returns a copy of the stored page (nil when absent), deleted or not.
func (f *Fake) Page(t testing.TB, source, slug string) *Page {
	t.Helper()
	var p *Page
	f.view(t, func(st *fakebrain.State) {
		if q := st.Find(source, slug); q != nil {
			p = q.Clone()
		}
	})
	return p
}

// Pages returns a copy of every stored page, deleted or not.
func (f *Fake) Pages(t testing.TB) []*Page {
	t.Helper()
	var out []*Page
	f.view(t, func(st *fakebrain.State) {
		for _, p := range st.Pages {
			out = append(out, p.Clone())
		}
	})
	return out
}

// Content is the page's content as get_page would return it ("" if absent).
func (f *Fake) Content(t testing.TB, source, slug string) string {
	t.Helper()
	s := ""
	f.view(t, func(st *fakebrain.State) {
		if p := st.Find(source, slug); p != nil {
			s = fakebrain.Render(p)
		}
	})
	return s
}

// Put writes a page into source as another GBrain client would (a person
// editing a card behind cgcat's back), with GBrain's put_page semantics. It
// returns the put status.
func (f *Fake) Put(t testing.TB, source, slug, content string) string {
	t.Helper()
	var status string
	f.update(t, func(st *fakebrain.State) error {
		b := &fakebrain.Brain{Source: source, Registered: f.Sources}
		var err error
		status, err = b.Put(st, slug, content)
		return err
	})
	return status
}

// PutMany writes many pages into source in one go, each with GBrain's
// put_page semantics (seeding a big brain for benchmarks).
func (f *Fake) PutMany(t testing.TB, source string, pages map[string]string) {
	t.Helper()
	f.update(t, func(st *fakebrain.State) error {
		b := &fakebrain.Brain{Source: source, Registered: f.Sources}
		for slug, content := range pages {
			if _, err := b.Put(st, slug, content); err != nil {
				return fmt.Errorf("put %s: %w", slug, err)
			}
		}
		return nil
	})
}

// Delete soft-deletes a page in source as another GBrain client would.
func (f *Fake) Delete(t testing.TB, source, slug string) {
	t.Helper()
	f.update(t, func(st *fakebrain.State) error {
		b := &fakebrain.Brain{Source: source, Registered: f.Sources}
		_, err := b.DeletePage(st, map[string]any{"slug": slug})
		return err
	})
}

// Edit changes a stored page in place (nothing recomputed) — corruption
// rather than an edit through GBrain.
func (f *Fake) Edit(t testing.TB, source, slug string, fn func(*Page)) {
	t.Helper()
	f.update(t, func(st *fakebrain.State) error {
		p := st.Find(source, slug)
		if p == nil {
			return fmt.Errorf("fake gbrain: no page %s/%s", source, slug)
		}
		fn(p)
		st.Reindex()
		return nil
	})
}

// EditAll changes every stored page in place (benchmarks: a brain whose
// pages were written long ago).
func (f *Fake) EditAll(t testing.TB, fn func(*Page)) {
	t.Helper()
	f.update(t, func(st *fakebrain.State) error {
		for _, p := range st.Pages {
			fn(p)
		}
		st.Reindex()
		return nil
	})
}

func (f *Fake) update(t testing.TB, fn func(*fakebrain.State) error) {
	t.Helper()
	if err := f.store.Update(fn); err != nil {
		t.Fatal(err)
	}
}

// tail keeps the end of a process's stderr for failure messages.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func newTail() *tail { return &tail{} }

func (w *tail) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	if len(w.buf) > 8192 {
		w.buf = w.buf[len(w.buf)-8192:]
	}
	return len(p), nil
}

func (w *tail) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.buf)
}
