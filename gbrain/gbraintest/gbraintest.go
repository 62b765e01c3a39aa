// Package gbraintest gives tests a GBrain. It owns:
//   - the fake GBrain MCP server (./fakegbrain): built once per test binary,
//     with its own state and control files per test, a [gbrain.Connection]
//     to start it over stdio ([Fake.Connection]) or over HTTP with OAuth
//     clients and tokens ([Fake.ServeHTTP]), and direct access to its state
//     — call counts, stored pages, fault switches, and writes "behind
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
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cgcat/cgcat/gbrain"
	"github.com/cgcat/cgcat/gbrain/gbraintest/internal/fakebrain"
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

// Fake is one fake brain: a state file, a control file and the program.
type Fake struct {
	Bin         string
	Dir         string   // the test's temp dir holding both files
	StatePath   string   // GBRAIN_FAKE_STATE
	ControlPath string   // GBRAIN_FAKE_CONTROL
	Sources     []string // registered besides "default" (GBRAIN_FAKE_SOURCES)
	// Env is added to the Connection (e.g. GBRAIN_FAKE_FORCE_SOURCE).
	Env map[string]string
}

// New prepares a fake brain with the given sources registered (besides
// "default").
func New(t testing.TB, sources ...string) *Fake {
	t.Helper()
	dir := t.TempDir()
	return &Fake{
		Bin:         Binary(t),
		Dir:         dir,
		StatePath:   filepath.Join(dir, "gbrain-state.json"),
		ControlPath: filepath.Join(dir, "gbrain-control.json"),
		Sources:     sources,
		Env:         map[string]string{},
	}
}

// Connection starts the fake as `fakegbrain serve` over stdio.
func (f *Fake) Connection() gbrain.Connection {
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

// Dial connects a client to a new fake process; the client is closed when
// the test ends. Zero timeouts in opts become 10 s (handshake) and 5 s
// (call).
func (f *Fake) Dial(t testing.TB, opts gbrain.Options) *gbrain.Client {
	t.Helper()
	if opts.HandshakeTimeout == 0 {
		opts.HandshakeTimeout = 10 * time.Second
	}
	if opts.CallTimeout == 0 {
		opts.CallTimeout = 5 * time.Second
	}
	c, err := gbrain.Dial(context.Background(), f.Connection(), opts)
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
	if err := fakebrain.WriteControl(f.ControlPath, c); err != nil {
		t.Fatal(err)
	}
}

// Calls returns the number of calls per tool so far.
func (f *Fake) Calls(t testing.TB) map[string]int {
	t.Helper()
	st, err := fakebrain.Read(f.StatePath)
	if err != nil {
		t.Fatal(err)
	}
	return st.Calls
}

// ResetCalls zeroes the call counts.
func (f *Fake) ResetCalls(t testing.TB) {
	t.Helper()
	f.update(t, func(st *fakebrain.State) error { st.Calls = map[string]int{}; return nil })
}

// Starts lists the fake processes started so far.
func (f *Fake) Starts(t testing.TB) []Start {
	t.Helper()
	st, err := fakebrain.Read(f.StatePath)
	if err != nil {
		t.Fatal(err)
	}
	return st.Starts
}

// Page returns the stored page (nil when absent), deleted or not.
func (f *Fake) Page(t testing.TB, source, slug string) *Page {
	t.Helper()
	st, err := fakebrain.Read(f.StatePath)
	if err != nil {
		t.Fatal(err)
	}
	return st.Find(source, slug)
}

// Pages returns every stored page, deleted or not.
func (f *Fake) Pages(t testing.TB) []*Page {
	t.Helper()
	st, err := fakebrain.Read(f.StatePath)
	if err != nil {
		t.Fatal(err)
	}
	return st.Pages
}

// Content is the page's content as get_page would return it ("" if absent).
func (f *Fake) Content(t testing.TB, source, slug string) string {
	t.Helper()
	p := f.Page(t, source, slug)
	if p == nil {
		return ""
	}
	return fakebrain.Render(p)
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
		return nil
	})
}

func (f *Fake) update(t testing.TB, fn func(*fakebrain.State) error) {
	t.Helper()
	if err := fakebrain.Update(f.StatePath, fn); err != nil {
		t.Fatal(err)
	}
}

// HTTPStats counts what the fake's HTTP side saw: tokens issued, token
// requests refused, 401 answers and authenticated MCP requests.
type HTTPStats = fakebrain.HTTPStats

// HTTPOptions start `fakegbrain serve --http`.
type HTTPOptions struct {
	// TokenTTL is the server's --token-ttl in seconds (0: 3600, GBrain's
	// default). A client registered with its own TTL keeps it.
	TokenTTL int
	// PublicURL is --public-url: the issuer the discovery document names
	// (default http://localhost:PORT/, whatever address was dialed).
	PublicURL string
	// Env is added to the server's environment (e.g.
	// GBRAIN_OAUTH_TOKEN_RATE_LIMIT_MAX).
	Env map[string]string
}

// HTTPServer is a running fake `gbrain serve --http`, stopped when the test
// ends.
type HTTPServer struct {
	// Base is http://127.0.0.1:PORT; MCP is its MCP endpoint (Base + "/mcp").
	Base, MCP string
	cmd       *exec.Cmd
	waited    chan struct{}
}

// ServeHTTP starts the fake as `fakegbrain serve --http` on a free port of
// 127.0.0.1 and waits until it listens.
func (f *Fake) ServeHTTP(t testing.TB, o HTTPOptions) *HTTPServer {
	t.Helper()
	ready := filepath.Join(f.Dir, fmt.Sprintf("http-ready-%d", time.Now().UnixNano()))
	args := []string{"serve", "--http", "--port", "0", "--bind", "127.0.0.1"}
	if o.TokenTTL > 0 {
		args = append(args, "--token-ttl", strconv.Itoa(o.TokenTTL))
	}
	if o.PublicURL != "" {
		args = append(args, "--public-url", o.PublicURL)
	}
	cmd := exec.Command(f.Bin, args...)
	env := os.Environ()
	for k, v := range f.Connection().Env {
		env = append(env, k+"="+v)
	}
	for k, v := range o.Env {
		env = append(env, k+"="+v)
	}
	cmd.Env = append(env, "GBRAIN_FAKE_READY="+ready)
	stderr := newTail()
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &HTTPServer{cmd: cmd, waited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(s.waited) }()
	t.Cleanup(s.Stop)
	deadline := time.Now().Add(15 * time.Second)
	for {
		if b, err := os.ReadFile(ready); err == nil && len(b) > 0 {
			s.Base = string(b)
			s.MCP = s.Base + "/mcp"
			return s
		}
		select {
		case <-s.waited:
			t.Fatalf("fake gbrain serve --http exited: %s", stderr)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("fake gbrain serve --http did not listen within 15 s: %s", stderr)
		}
	}
}

// Stop ends the server (idempotent).
func (s *HTTPServer) Stop() {
	select {
	case <-s.waited:
		return
	default:
	}
	_ = s.cmd.Process.Kill()
	<-s.waited
}

var credSeq atomic.Int64

// Connection is an HTTP connection to this server with OAuth client
// credentials: id and secret go into two fresh environment variables
// (t.Setenv) that the connection names.
func (s *HTTPServer) Connection(t testing.TB, id, secret string) gbrain.Connection {
	t.Helper()
	n := credSeq.Add(1)
	idEnv, secretEnv := fmt.Sprintf("CGCAT_FAKE_GBRAIN_CLIENT_ID_%d", n), fmt.Sprintf("CGCAT_FAKE_GBRAIN_CLIENT_SECRET_%d", n)
	t.Setenv(idEnv, id)
	t.Setenv(secretEnv, secret)
	return gbrain.Connection{URL: s.MCP, ClientIDEnv: idEnv, ClientSecretEnv: secretEnv}
}

// TokenConnection is an HTTP connection with a static bearer token (in a
// fresh environment variable).
func (s *HTTPServer) TokenConnection(t testing.TB, token string) gbrain.Connection {
	t.Helper()
	env := fmt.Sprintf("CGCAT_FAKE_GBRAIN_TOKEN_%d", credSeq.Add(1))
	t.Setenv(env, token)
	return gbrain.Connection{URL: s.MCP, TokenEnv: env}
}

// RegisterClient is `gbrain auth register-client NAME --grant-types
// client_credentials --scopes SCOPES --source SOURCE [--token-ttl TTL]`:
// it returns the client id and secret. scopes nil means "read write".
func (f *Fake) RegisterClient(t testing.TB, name, source string, scopes []string, tokenTTL int) (id, secret string) {
	t.Helper()
	if scopes == nil {
		scopes = []string{"read", "write"}
	}
	f.update(t, func(st *fakebrain.State) error {
		b := &fakebrain.Brain{Registered: f.Sources}
		var err error
		id, secret, err = b.RegisterClient(st, name, []string{"client_credentials"}, scopes, source, tokenTTL)
		return err
	})
	return id, secret
}

// CreateToken is `gbrain auth create NAME`: a static token (writes to
// "default").
func (f *Fake) CreateToken(t testing.TB, name string) string {
	t.Helper()
	var tok string
	f.update(t, func(st *fakebrain.State) error { tok = fakebrain.CreateToken(st, name); return nil })
	return tok
}

// ExpireTokens makes every OAuth access token issued so far expired, as if
// their time had run out: the next request with one gets a 401.
func (f *Fake) ExpireTokens(t testing.TB) {
	t.Helper()
	f.update(t, func(st *fakebrain.State) error { fakebrain.ExpireTokens(st, time.Now()); return nil })
}

// HTTP returns the HTTP counts so far.
func (f *Fake) HTTP(t testing.TB) HTTPStats {
	t.Helper()
	st, err := fakebrain.Read(f.StatePath)
	if err != nil {
		t.Fatal(err)
	}
	return st.HTTP
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
