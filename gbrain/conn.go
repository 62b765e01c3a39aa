package gbrain

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
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
	if err := checkDial(conn, opts); err != nil {
		return nil, &DialError{Class: Definite, Err: err}
	}
	opts = opts.withDefaults()
	c := &Client{conn: conn, opts: opts, log: opts.Logger}
	if conn.Command != "" {
		c.tr = c.stdioTransport()
	} else if err := c.openHTTPTransport(); err != nil {
		return nil, err
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
	if err := c.handshake(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// checkDial refuses a connection or options that can never work: a bad
// connection, source or brain id, or an environment that contradicts them.
func checkDial(conn Connection, opts Options) error {
	if err := conn.Validate(); err != nil {
		return err
	}
	if opts.ExpectedSource != "" && !ValidSourceID(opts.ExpectedSource) {
		return fmt.Errorf("%w: %q (want [a-z0-9-]{1,32})", ErrInvalidSourceID, opts.ExpectedSource)
	}
	if opts.ExpectedBrain != "" && !ValidBrainID(opts.ExpectedBrain) {
		return fmt.Errorf("gbrain connection: expected brain %q is not a GBrain brain id (\"host\" or a mount id of [a-z0-9-])", opts.ExpectedBrain)
	}
	if v, ok := conn.Env["GBRAIN_BRAIN_ID"]; ok && opts.ExpectedBrain != "" && v != opts.ExpectedBrain {
		return fmt.Errorf("gbrain connection: env GBRAIN_BRAIN_ID=%q conflicts with the expected brain %q", v, opts.ExpectedBrain)
	}
	if v, ok := conn.Env["GBRAIN_SOURCE"]; ok && v != opts.ExpectedSource {
		return fmt.Errorf("gbrain connection: env GBRAIN_SOURCE=%q conflicts with the expected source %q", v, opts.ExpectedSource)
	}
	return nil
}

// withDefaults fills the options left at their zero value.
func (opts Options) withDefaults() Options {
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
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return opts
}

// stdioTransport starts GBrain as a child process whose stderr tail the
// client keeps.
func (c *Client) stdioTransport() transport.Interface {
	conn, opts := c.conn, c.opts
	c.stderr = newTailBuffer(StderrTailSize)
	c.stderr.onLine = opts.OnStderr
	env := childEnv(conn, opts)
	return transport.NewStdioWithOptions(conn.Command, nil, conn.Args,
		transport.WithCommandLogger(c.log),
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
}

// openHTTPTransport reaches GBrain over streamable HTTP. Errors are
// *DialError, Definite.
func (c *Client) openHTTPTransport() error {
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
	src, err := newTokenSource(c.conn, &http.Client{Transport: base, Timeout: c.opts.CallTimeout}, c.log)
	if err != nil {
		base.CloseIdleConnections()
		return &DialError{Class: Definite, Err: err}
	}
	c.auth = src
	tr, err := transport.NewStreamableHTTP(c.conn.URL,
		transport.WithHTTPLogger(c.log),
		transport.WithHTTPBasicClient(&http.Client{Transport: &authTransport{base: base, src: src}, CheckRedirect: sameOriginRedirects(src.origin)}))
	if err != nil {
		base.CloseIdleConnections()
		return &DialError{Class: Definite, Err: fmt.Errorf("gbrain connection: %w", err)}
	}
	c.tr = tr
	return nil
}

// handshake sends initialize within opts.HandshakeTimeout and keeps what
// GBrain said about itself. On failure the connection is shut down and the
// error is a *DialError.
func (c *Client) handshake(ctx context.Context) error {
	hctx, hcancel := context.WithTimeout(ctx, c.opts.HandshakeTimeout)
	defer hcancel()
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = ProtocolVersion
	req.Params.ClientInfo = mcp.Implementation{Name: c.opts.ClientName, Version: c.opts.ClientVersion}
	res, err := c.mc.Initialize(hctx, req)
	if err != nil {
		derr := c.handshakeError(ctx, hctx, err)
		if ctx.Err() != nil {
			// The caller gave up (a signal): a child that does not leave
			// at stdin EOF is killed soon, not after mcp-go's 5 s.
			defer c.killAfter(abandonGrace)()
		}
		c.shutdown()
		return derr
	}
	c.info = ServerInfo{Name: res.ServerInfo.Name, Version: res.ServerInfo.Version, ProtocolVersion: res.ProtocolVersion}
	if res.ServerInfo.Name != "gbrain" {
		c.log.Warn("the MCP server does not call itself gbrain", "name", res.ServerInfo.Name, "version", res.ServerInfo.Version)
	}
	return nil
}

// abandonGrace is how long a stdio child whose caller gave up during the
// handshake has to exit at stdin EOF before it is killed.
const abandonGrace = 300 * time.Millisecond

// killAfter kills the stdio child if it is still there after d; the
// returned func cancels that.
func (c *Client) killAfter(d time.Duration) (stop func()) {
	cmd := c.cmd
	if cmd == nil || cmd.Process == nil {
		return func() {}
	}
	t := time.AfterFunc(d, func() { _ = cmd.Process.Kill() })
	return func() { t.Stop() }
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
	if errors.Is(err, ErrRedirect) {
		return &DialError{Class: Definite, Err: fmt.Errorf("gbrain handshake with %s: %w", c.conn.URL, stripURLError(err))}
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

// ServerInfo is what GBrain said about itself in the handshake.
func (c *Client) ServerInfo() ServerInfo { return c.info }

// ExpectedSource is the source this client is pinned to ("" if unpinned).
func (c *Client) ExpectedSource() string { return c.opts.ExpectedSource }

// Auth describes how an HTTP connection authenticates and how its tokens
// fared (never a secret). For a stdio connection it is the zero value.
func (c *Client) Auth() AuthInfo {
	if c.auth == nil {
		return AuthInfo{}
	}
	return c.auth.info()
}
