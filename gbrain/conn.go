package gbrain

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// ProtocolVersion is the MCP revision we ask for; GBrain 0.46.28 answers it.
// Pinning it keeps mcp-go on the initialize handshake (without a pin it first
// probes server/discover, which GBrain does not implement).
const ProtocolVersion = mcp.ProtocolVersion20250618

// Defaults for a zero [Options] field.
const (
	// DefaultHandshakeTimeout outlasts GBrain's silent wait (up to 30 s) for a
	// brain held by another gbrain command.
	DefaultHandshakeTimeout = 35 * time.Second
	// DefaultCallTimeout bounds one tool call. A caller's shorter context
	// deadline wins.
	DefaultCallTimeout = 15 * time.Second
	// StderrTailSize is how much of the child's stderr is kept for messages.
	StderrTailSize = 4096
)

// idleConnTimeout is shorter than GBrain's HTTP keep-alive timeout (5 s).
const idleConnTimeout = 4 * time.Second

// Connection says how to reach GBrain: either a stdio child (Command, with
// Args, Env and Cwd) or an HTTP URL (`gbrain serve --http`, its MCP endpoint
// such as http://127.0.0.1:3131/mcp). An HTTP connection authenticates with
// OAuth client credentials (the client id and secret in the environment
// variables named ClientIDEnv and ClientSecretEnv: tokens are fetched from
// GBrain's token endpoint and renewed before they expire) or with a static
// bearer token (in the variable named TokenEnv; GBrain writes a static
// token's pages to its `default` source). Secrets are read from the
// environment when dialing and never stored here.
type Connection struct {
	Command         string            `json:"command,omitempty"` // absolute path of the gbrain executable
	Args            []string          `json:"args,omitempty"`    // e.g. ["serve"]
	Env             map[string]string `json:"env,omitempty"`     // added to cgcat's environment
	Cwd             string            `json:"cwd,omitempty"`     // absolute; empty = cgcat's working directory
	URL             string            `json:"url,omitempty"`     // http(s) MCP endpoint
	TokenEnv        string            `json:"tokenEnv,omitempty"`
	ClientIDEnv     string            `json:"clientIdEnv,omitempty"`
	ClientSecretEnv string            `json:"clientSecretEnv,omitempty"`
}

// HTTP reports whether this is an HTTP connection.
func (c Connection) HTTP() bool { return c.URL != "" }

// AuthMode is how an HTTP connection authenticates: AuthClientCredentials,
// AuthStaticToken or AuthNone ("" for a stdio connection).
func (c Connection) AuthMode() string {
	switch {
	case c.URL == "":
		return ""
	case c.ClientIDEnv != "":
		return AuthClientCredentials
	case c.TokenEnv != "":
		return AuthStaticToken
	}
	return AuthNone
}

// Validate checks the connection's shape without touching anything.
func (c Connection) Validate() error {
	switch {
	case c.Command != "" && c.URL != "":
		return errors.New("gbrain connection: set either command or url, not both")
	case c.Command == "" && c.URL == "":
		return errors.New("gbrain connection: command or url is required")
	case c.Command != "":
		if !filepath.IsAbs(c.Command) {
			return fmt.Errorf("gbrain connection: command %q must be an absolute path", c.Command)
		}
		if c.Cwd != "" && !filepath.IsAbs(c.Cwd) {
			return fmt.Errorf("gbrain connection: cwd %q must be an absolute path", c.Cwd)
		}
		for k := range c.Env {
			if k == "" || strings.ContainsAny(k, "=\x00") {
				return fmt.Errorf("gbrain connection: bad environment variable name %q", k)
			}
		}
		if c.TokenEnv != "" || c.ClientIDEnv != "" || c.ClientSecretEnv != "" {
			return errors.New("gbrain connection: tokenEnv, clientIdEnv and clientSecretEnv apply to url connections only")
		}
	default:
		u, err := url.Parse(c.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("gbrain connection: url %q must be an absolute http(s) URL", c.URL)
		}
		if u.User != nil {
			return errors.New("gbrain connection: url must not carry credentials; name environment variables in clientIdEnv and clientSecretEnv")
		}
		if len(c.Args) > 0 || len(c.Env) > 0 || c.Cwd != "" {
			return errors.New("gbrain connection: args, env and cwd apply to command connections only")
		}
		return c.validateAuth()
	}
	return nil
}

func (c Connection) validateAuth() error {
	switch {
	case c.TokenEnv != "" && (c.ClientIDEnv != "" || c.ClientSecretEnv != ""):
		return errors.New("gbrain connection: set either tokenEnv (a static token) or clientIdEnv and clientSecretEnv (OAuth client credentials), not both")
	case c.ClientIDEnv != "" && c.ClientSecretEnv == "":
		return errors.New("gbrain connection: clientIdEnv needs clientSecretEnv (the variable holding the client secret)")
	case c.ClientSecretEnv != "" && c.ClientIDEnv == "":
		return errors.New("gbrain connection: clientSecretEnv needs clientIdEnv (the variable holding the client id)")
	}
	for _, f := range []struct{ field, v string }{{"tokenEnv", c.TokenEnv}, {"clientIdEnv", c.ClientIDEnv}, {"clientSecretEnv", c.ClientSecretEnv}} {
		if err := checkEnvName(f.v); f.v != "" && err != nil {
			return fmt.Errorf("gbrain connection: %s: %w", f.field, err)
		}
	}
	return nil
}

// checkEnvName checks that name can be the name of an environment variable
// holding a credential (letters, digits and _, not starting with a digit) and
// does not look like a GBrain credential itself (gbrain_…): secrets live in
// the environment, never in the config file.
func checkEnvName(name string) error {
	if strings.HasPrefix(strings.ToLower(name), "gbrain_cl_") || strings.HasPrefix(strings.ToLower(name), "gbrain_cs_") ||
		strings.HasPrefix(strings.ToLower(name), "gbrain_at_") || (strings.HasPrefix(name, "gbrain_") && len(name) > 40) {
		return errors.New("this looks like a GBrain credential, not the name of an environment variable: put the value in an environment variable and write that variable's name here (secrets never go into the config file)")
	}
	if name == "" {
		return errors.New("is empty")
	}
	for i, r := range name {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			return fmt.Errorf("%q is not an environment variable name (letters, digits and _, not starting with a digit)", name)
		}
	}
	return nil
}

// Options tune a [Client]. The zero value is usable but unpinned: without
// ExpectedSource the client reads whatever source the server follows and
// refuses to write.
type Options struct {
	// ExpectedSource is the GBrain source every card lives in. It must match
	// [a-z0-9-]{1,32}. A stdio child gets GBRAIN_SOURCE set to it; every page
	// read is checked against it; PutPage refuses to run without it.
	ExpectedSource string
	// ExpectedBrain is the GBrain brain id the cards live in ("host", the
	// brain of ~/.gbrain, or a mount id). A stdio child gets GBRAIN_BRAIN_ID
	// set to it, as GBrain resolves its brain from that variable before its
	// working directory; "" leaves the child's choice alone. Over HTTP the
	// server decides (GBrain does not tell which brain a token serves).
	ExpectedBrain string
	// HandshakeTimeout bounds start-up to the initialize answer; zero means
	// DefaultHandshakeTimeout.
	HandshakeTimeout time.Duration
	// CallTimeout bounds each tool call; zero means DefaultCallTimeout.
	CallTimeout time.Duration
	// Logger receives warnings (an unknown-parameter notice from GBrain,
	// mcp-go's transport errors). Nil discards them.
	Logger *slog.Logger
	// ClientName and ClientVersion are sent in initialize; default "cgcat"
	// and "dev".
	ClientName, ClientVersion string
	// OnStderr, when set, is called with every line a stdio child writes to
	// stderr, as soon as it is written (a command-line user sees what GBrain
	// says while it starts, e.g. that its brain is held by another
	// process). It must not block.
	OnStderr func(line string)
}

// ServerInfo is what GBrain said in its initialize answer.
type ServerInfo struct {
	Name            string
	Version         string
	ProtocolVersion string
}

// Client is one MCP connection to GBrain. Its methods are safe for
// concurrent use. Every method error is a *CallError carrying its [Class].
// A connection that was lost stays lost: calls then fail Transient with
// ErrNotConnected and the caller dials again.
type Client struct {
	conn   Connection
	opts   Options
	log    *slog.Logger
	mc     *client.Client
	tr     transport.Interface
	cmd    *exec.Cmd // stdio only; set by the command factory during Start
	stderr *tailBuffer
	info   ServerInfo

	auth     *tokenSource    // HTTP only
	httpBase *http.Transport // HTTP only

	callsMu sync.Mutex
	calls   map[string]int // tool calls sent (each attempt)

	wsMu  sync.Mutex
	wsGen uint64       // token generation whose write source was checked
	ws    *WriteSource // the last write-source check that passed (HTTP)

	cancelLife context.CancelFunc

	mu     sync.Mutex
	closed bool
	lost   error // why the connection is gone, once it is

	reapOnce sync.Once
	exited   *ProcessExitedError
}

// Dial starts (stdio) or reaches (HTTP) GBrain and completes the MCP
// handshake within opts.HandshakeTimeout. ctx bounds the handshake only; the
// connection lives until [Client.Close].
//
// Errors are *DialError: Definite for a bad connection or options, a command
// that cannot start, a refused token, a PGLite brain already open elsewhere
// (errors.Is ErrBrainLocked; the message says how to fix it); Transient for a
// handshake timeout (ErrHandshakeTimeout) or a child that exited for another
// reason (ErrProcessExited, with its exit code and stderr tail).
func Dial(ctx context.Context, conn Connection, opts Options) (*Client, error) {
	if err := conn.Validate(); err != nil {
		return nil, &DialError{Class: Definite, Err: err}
	}
	if opts.ExpectedSource != "" && !ValidSourceID(opts.ExpectedSource) {
		return nil, &DialError{Class: Definite, Err: fmt.Errorf("%w: %q (want [a-z0-9-]{1,32})", ErrInvalidSourceID, opts.ExpectedSource)}
	}
	if opts.ExpectedBrain != "" && !ValidBrainID(opts.ExpectedBrain) {
		return nil, &DialError{Class: Definite, Err: fmt.Errorf("gbrain connection: expected brain %q is not a GBrain brain id (\"host\" or a mount id of [a-z0-9-])", opts.ExpectedBrain)}
	}
	if v, ok := conn.Env["GBRAIN_BRAIN_ID"]; ok && opts.ExpectedBrain != "" && v != opts.ExpectedBrain {
		return nil, &DialError{Class: Definite, Err: fmt.Errorf("gbrain connection: env GBRAIN_BRAIN_ID=%q conflicts with the expected brain %q", v, opts.ExpectedBrain)}
	}
	if v, ok := conn.Env["GBRAIN_SOURCE"]; ok && v != opts.ExpectedSource {
		return nil, &DialError{Class: Definite, Err: fmt.Errorf("gbrain connection: env GBRAIN_SOURCE=%q conflicts with the expected source %q", v, opts.ExpectedSource)}
	}
	if opts.HandshakeTimeout <= 0 {
		opts.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = DefaultCallTimeout
	}
	if opts.ClientName == "" {
		opts.ClientName = "cgcat"
	}
	if opts.ClientVersion == "" {
		opts.ClientVersion = "dev"
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}

	c := &Client{conn: conn, opts: opts, log: logger}
	if conn.Command != "" {
		c.stderr = newTailBuffer(StderrTailSize)
		c.stderr.onLine = opts.OnStderr
		env := childEnv(conn, opts)
		c.tr = transport.NewStdioWithOptions(conn.Command, nil, conn.Args,
			transport.WithCommandLogger(logger),
			transport.WithCommandFunc(func(ctx context.Context, command string, _ []string, args []string) (*exec.Cmd, error) {
				cmd := exec.CommandContext(ctx, command, args...)
				cmd.Env = env
				cmd.Dir = conn.Cwd
				// A writer that is not an *os.File: exec copies stderr in a
				// goroutine that cmd.Wait waits for, so the tail is complete
				// once the process has been reaped. mcp-go leaves a
				// preset Stderr alone.
				cmd.Stderr = c.stderr
				cmd.WaitDelay = 2 * time.Second
				c.cmd = cmd
				return cmd, nil
			}))
	} else {
		// One HTTP transport per client (its idle connections end with
		// it); the token source adds the bearer token to every request,
		// fetching and renewing OAuth tokens as they are needed.
		base := http.DefaultTransport.(*http.Transport).Clone()
		// GBrain (Node) closes an idle keep-alive connection after 5 s
		// ("Keep-Alive: timeout=5"). A write sent on a connection the
		// server is closing fails after it left, which is ambiguous:
		// drop idle connections before the server does.
		base.IdleConnTimeout = idleConnTimeout
		c.httpBase = base
		src, err := newTokenSource(conn, &http.Client{Transport: base, Timeout: opts.CallTimeout}, logger)
		if err != nil {
			base.CloseIdleConnections()
			return nil, &DialError{Class: Definite, Err: err}
		}
		c.auth = src
		tr, err := transport.NewStreamableHTTP(conn.URL,
			transport.WithHTTPLogger(logger),
			transport.WithHTTPBasicClient(&http.Client{Transport: &authTransport{base: base, src: src}}))
		if err != nil {
			base.CloseIdleConnections()
			return nil, &DialError{Class: Definite, Err: fmt.Errorf("gbrain connection: %w", err)}
		}
		c.tr = tr
	}
	c.mc = client.NewClient(c.tr, client.WithProtocolVersion(ProtocolVersion))

	// mcp-go kills the child when the context given to Start ends, so it gets
	// one that lives as long as the Client (values kept, cancellation not).
	life, cancel := context.WithCancel(context.WithoutCancel(ctx))
	c.cancelLife = cancel
	if err := c.mc.Start(life); err != nil {
		cancel()
		return nil, &DialError{Class: Definite, Err: fmt.Errorf("start gbrain %s: %w", c.target(), err)}
	}

	hctx, hcancel := context.WithTimeout(ctx, opts.HandshakeTimeout)
	defer hcancel()
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = ProtocolVersion
	req.Params.ClientInfo = mcp.Implementation{Name: opts.ClientName, Version: opts.ClientVersion}
	res, err := c.mc.Initialize(hctx, req)
	if err != nil {
		derr := c.handshakeError(ctx, hctx, err)
		c.shutdown()
		return nil, derr
	}
	c.info = ServerInfo{Name: res.ServerInfo.Name, Version: res.ServerInfo.Version, ProtocolVersion: res.ProtocolVersion}
	if res.ServerInfo.Name != "gbrain" {
		logger.Warn("the MCP server does not call itself gbrain", "name", res.ServerInfo.Name, "version", res.ServerInfo.Version)
	}
	return c, nil
}

func (c *Client) target() string {
	if c.conn.Command != "" {
		return c.conn.Command
	}
	return c.conn.URL
}

func (c *Client) handshakeError(ctx, hctx context.Context, err error) *DialError {
	if c.cmd != nil && connectionGone(err) {
		pe := c.reap()
		if pe.BrainLocked() {
			return &DialError{Class: Definite, Err: pe}
		}
		return &DialError{Class: Transient, Err: fmt.Errorf("gbrain handshake: %w", pe)}
	}
	if ctx.Err() != nil {
		return &DialError{Class: Transient, Err: fmt.Errorf("gbrain handshake: %w", ctx.Err())}
	}
	if errors.Is(hctx.Err(), context.DeadlineExceeded) {
		return &DialError{Class: Transient, Err: &HandshakeTimeoutError{After: c.opts.HandshakeTimeout, Stderr: c.stderrTail()}}
	}
	var ae *AuthError
	if errors.As(err, &ae) {
		return &DialError{Class: ae.Class, Err: fmt.Errorf("gbrain handshake with %s: %w", c.conn.URL, ae.Err)}
	}
	var authErr *transport.AuthorizationRequiredError
	if errors.As(err, &authErr) {
		why := ""
		if r := c.auth.lastReason(); r != "" {
			why = " (" + r + ")"
		}
		return &DialError{Class: Definite, Err: fmt.Errorf("%w: gbrain handshake with %s: GBrain refused %s%s", ErrUnauthorized, c.conn.URL, c.auth.describe(), why)}
	}
	if c.cmd == nil && errors.Is(err, transport.ErrLegacySSEServer) {
		return &DialError{Class: Definite, Err: fmt.Errorf("gbrain handshake with %s: the server answered HTTP 4xx to initialize; url must be the MCP endpoint of `gbrain serve --http` (it is /mcp, e.g. http://127.0.0.1:3131/mcp)", c.conn.URL)}
	}
	if c.cmd == nil {
		// HTTP: refused connection, DNS, 5xx — a later dial may work.
		return &DialError{Class: Transient, Err: fmt.Errorf("gbrain handshake with %s: %w", c.conn.URL, err)}
	}
	return &DialError{Class: Definite, Err: fmt.Errorf("gbrain handshake: %w", err)}
}

// childEnv is cgcat's environment without any inherited GBRAIN_SOURCE, plus
// the connection's env, plus the pinned source and the start-up hook switch.
func childEnv(conn Connection, opts Options) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "GBRAIN_SOURCE=") || strings.HasPrefix(kv, "GBRAIN_SKIP_STARTUP_HOOKS=") ||
			(opts.ExpectedBrain != "" && strings.HasPrefix(kv, "GBRAIN_BRAIN_ID=")) {
			continue
		}
		env = append(env, kv)
	}
	for k, v := range conn.Env {
		if k == "GBRAIN_SOURCE" || k == "GBRAIN_SKIP_STARTUP_HOOKS" || (k == "GBRAIN_BRAIN_ID" && opts.ExpectedBrain != "") {
			continue
		}
		env = append(env, k+"="+v)
	}
	if opts.ExpectedSource != "" {
		env = append(env, "GBRAIN_SOURCE="+opts.ExpectedSource)
	}
	if opts.ExpectedBrain != "" {
		env = append(env, "GBRAIN_BRAIN_ID="+opts.ExpectedBrain)
	}
	// The only network attempt GBrain makes at start-up is an update check.
	env = append(env, "GBRAIN_SKIP_STARTUP_HOOKS=1")
	return env
}

// Lost returns why the connection is gone (nil while it is usable): once
// lost, every call fails Transient with ErrNotConnected and the caller must
// Close this client and Dial again. Close alone does not count as lost.
func (c *Client) Lost() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lost
}

// ServerInfo is what GBrain said about itself in the handshake.
func (c *Client) ServerInfo() ServerInfo { return c.info }

// ExpectedSource is the source this client is pinned to ("" if unpinned).
func (c *Client) ExpectedSource() string { return c.opts.ExpectedSource }

// StderrTail returns the last StderrTailSize bytes the stdio child wrote to
// stderr ("" for HTTP).
func (c *Client) StderrTail() string { return c.stderrTail() }

func (c *Client) stderrTail() string {
	if c.stderr == nil {
		return ""
	}
	return c.stderr.String()
}

// Close ends the connection. For a stdio child it closes the child's stdin
// first (GBrain exits on EOF), waits up to 2 s, then sends SIGTERM, and
// SIGKILL 3 s later (mcp-go's shutdown sequence). Close is idempotent and
// returns nil once the child is gone, however it ended.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.mu.Unlock()
	return c.shutdown()
}

func (c *Client) shutdown() error {
	if c.cmd != nil {
		c.reap()
		return nil
	}
	err := c.mc.Close()
	c.cancelLife()
	if c.httpBase != nil {
		c.httpBase.CloseIdleConnections()
	}
	return err
}

// CallCounts returns how many calls of each tool this client has sent so
// far, re-sent ones included (figures and tests).
func (c *Client) CallCounts() map[string]int {
	c.callsMu.Lock()
	defer c.callsMu.Unlock()
	out := make(map[string]int, len(c.calls))
	for k, v := range c.calls {
		out[k] = v
	}
	return out
}

func (c *Client) countCall(tool string) {
	c.callsMu.Lock()
	if c.calls == nil {
		c.calls = map[string]int{}
	}
	c.calls[tool]++
	c.callsMu.Unlock()
}

// Auth describes how an HTTP connection authenticates and how its tokens
// fared (never a secret). For a stdio connection it is the zero value.
func (c *Client) Auth() AuthInfo {
	if c.auth == nil {
		return AuthInfo{}
	}
	return c.auth.info()
}

// reap closes the stdio transport (stdin first, then signals; it waits for
// the process) and records how the child ended. Safe to call many times.
func (c *Client) reap() *ProcessExitedError {
	c.reapOnce.Do(func() {
		_ = c.tr.Close()
		c.cancelLife()
		pe := &ProcessExitedError{Code: -1}
		if c.cmd != nil && c.cmd.ProcessState != nil {
			st := c.cmd.ProcessState
			pe.Code = st.ExitCode()
			if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				pe.Signal = ws.Signal().String()
			}
		}
		pe.Stderr = c.stderrTail()
		c.exited = pe
	})
	return c.exited
}

// connectionGone reports whether err means the peer is gone: mcp-go's
// ErrTransportClosed (stdout EOF), or a write to a closed pipe.
func connectionGone(err error) bool {
	return errors.Is(err, transport.ErrTransportClosed) || notSent(err)
}

// notSent reports a failure to write the request at all (the child's stdin
// is closed): nothing reached GBrain.
func notSent(err error) bool {
	return errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed) || errors.Is(err, io.ErrClosedPipe)
}

// tailBuffer keeps the last n bytes written to it, and hands every
// complete line to onLine when set.
type tailBuffer struct {
	mu      sync.Mutex
	n       int
	buf     []byte
	onLine  func(string)
	partial []byte
}

func newTailBuffer(n int) *tailBuffer { return &tailBuffer{n: n} }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.n; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	if t.onLine != nil {
		t.partial = append(t.partial, p...)
		for {
			i := bytes.IndexByte(t.partial, '\n')
			if i < 0 {
				break
			}
			line := strings.ToValidUTF8(strings.TrimRight(string(t.partial[:i]), "\r"), "")
			t.partial = t.partial[i+1:]
			if strings.TrimSpace(line) != "" {
				t.onLine(line)
			}
		}
		if len(t.partial) > t.n { // a line without end: keep its tail only
			t.partial = t.partial[len(t.partial)-t.n:]
		}
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.ToValidUTF8(string(t.buf), "")
}
