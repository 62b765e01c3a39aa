package projection

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/cgcat/cgcat/gbrain"
	"github.com/cgcat/cgcat/local/config"
)

// ErrDisabled means the config does not turn GBrain on.
var ErrDisabled = errors.New("GBrain is off in this config")

// ErrNotConnected means there is no live GBrain connection right now.
var ErrNotConnected = errors.New("not connected to GBrain")

// EnableHint says how to turn GBrain on.
const EnableHint = `GBrain is off (the default). To keep reference-only project cards in GBrain, set "gbrain": {"enabled": true, "connectionRef": "NAME", "expectedSource": "codegraph-catalog"} in the config and add "connections": {"NAME": {"command": "/abs/path/to/gbrain", "args": ["serve"]}} (or, for ` + "`gbrain serve --http`" + `, {"url": "http://127.0.0.1:3131/mcp", "clientIdEnv": "VAR1", "clientSecretEnv": "VAR2"} with the id and secret of ` + "`gbrain auth register-client NAME --grant-types client_credentials --scopes \"read write\" --source codegraph-catalog`" + ` in those variables); create the source once with ` + "`gbrain sources add codegraph-catalog`" + `.`

// Connection returns the GBrain connection the config names (R7).
func Connection(cfg *config.Config) (gbrain.Connection, error) {
	if !cfg.GBrain.Enabled {
		return gbrain.Connection{}, ErrDisabled
	}
	c, ok := cfg.Connections[cfg.GBrain.ConnectionRef]
	if !ok {
		return gbrain.Connection{}, fmt.Errorf("gbrain.connectionRef names %q, which is not in the top-level connections map", cfg.GBrain.ConnectionRef)
	}
	return gbrain.Connection{Command: c.Command, Args: c.Args, Env: c.Env, Cwd: c.Cwd, URL: c.URL,
		TokenEnv: c.TokenEnv, ClientIDEnv: c.ClientIDEnv, ClientSecretEnv: c.ClientSecretEnv}, nil
}

// Dialer connects to GBrain and returns the connection once it answered
// the handshake: gbrain.Dial for the connection a config names
// ([DialerFor]), or an in-process fake in tests.
type Dialer func(ctx context.Context) (gbrain.Brain, error)

// DialerFor dials conn with opts.
func DialerFor(conn gbrain.Connection, opts gbrain.Options) Dialer {
	return func(ctx context.Context) (gbrain.Brain, error) {
		c, err := gbrain.Dial(ctx, conn, opts)
		if err != nil {
			return nil, err
		}
		return c, nil
	}
}

// Conn is a GBrain connection that is dialed on demand and dialed again
// once lost. Every fresh connection is checked: the expected source must be
// registered (put_page would otherwise fail, or worse, land elsewhere).
// Safe for concurrent use.
type Conn struct {
	dial     Dialer
	keepOpen bool // HTTP: cheap to keep, holds no brain

	dialMu sync.Mutex // one dial at a time

	mu      sync.Mutex
	c       gbrain.Brain // counted
	lastErr error
	dials   int
	closed  bool

	calls   callCounts
	warming chan struct{} // a background dial under way (Warm)
}

// NewConn prepares (does not dial) the connection the config names.
func NewConn(cfg *config.Config, log *slog.Logger) (*Conn, error) {
	conn, err := Connection(cfg)
	if err != nil {
		return nil, err
	}
	return NewConnWith(conn, gbrain.Options{ExpectedSource: cfg.GBrain.ExpectedSource, ExpectedBrain: cfg.GBrain.ExpectedBrain, Logger: log}), nil
}

// NewConnWith prepares a connection from its parts.
func NewConnWith(conn gbrain.Connection, opts gbrain.Options) *Conn {
	return &Conn{dial: DialerFor(conn, opts), keepOpen: conn.HTTP()}
}

// NewConnDialer prepares a connection made by dial; keepOpen says it is
// cheap to keep open between rounds (as HTTP is), else it is short-lived
// (as a stdio child holding a PGLite brain must be).
func NewConnDialer(dial Dialer, keepOpen bool) *Conn {
	return &Conn{dial: dial, keepOpen: keepOpen}
}

// Client returns the live client, dialing (and checking the source) when
// there is none or the last one was lost. Dial errors are *gbrain.DialError
// (IsTransient tells whether trying later may help); a missing source is
// Definite.
func (k *Conn) Client(ctx context.Context) (gbrain.Brain, error) {
	if c := k.Current(); c != nil {
		return c, nil
	}
	k.dialMu.Lock()
	defer k.dialMu.Unlock()
	if c := k.Current(); c != nil {
		return c, nil
	}
	k.mu.Lock()
	if k.closed {
		k.mu.Unlock()
		return nil, &gbrain.CallError{Tool: "dial", Class: gbrain.Definite, Err: gbrain.ErrClosed}
	}
	old := k.c
	k.c = nil
	k.dials++
	k.mu.Unlock()
	if old != nil {
		_ = old.Close()
	}
	c, err := k.dial(ctx)
	if err == nil {
		c = counted{Brain: c, n: &k.calls}
		if err = c.CheckSource(ctx); err != nil {
			_ = c.Close()
			c = nil
		}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.lastErr = err
	if err != nil {
		return nil, err
	}
	if k.closed {
		_ = c.Close()
		return nil, &gbrain.CallError{Tool: "dial", Class: gbrain.Definite, Err: gbrain.ErrClosed}
	}
	k.c = c
	return c, nil
}

// Warm starts a dial in the background when there is no live connection
// and none is under way. The channel is closed once the connection is live
// or the dial ended (LastError then says why).
func (k *Conn) Warm() <-chan struct{} {
	if k.Current() != nil {
		done := make(chan struct{})
		close(done)
		return done
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.warming != nil {
		return k.warming
	}
	done := make(chan struct{})
	k.warming = done
	go func() {
		_, _ = k.Client(context.Background())
		k.mu.Lock()
		k.warming = nil
		k.mu.Unlock()
		close(done)
	}()
	return done
}

// Current returns the live client, or nil when not connected (never dials).
func (k *Conn) Current() gbrain.Brain {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.c == nil || k.c.Lost() != nil {
		return nil
	}
	return k.c
}

// LastError is why the last dial failed (nil after a successful one), or
// why the live connection was lost.
func (k *Conn) LastError() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.c != nil {
		return k.c.Lost()
	}
	return k.lastErr
}

// Calls counts the calls made per tool so far, across redials.
func (k *Conn) Calls() map[string]int { return k.calls.snapshot() }

// Dials counts dial attempts.
func (k *Conn) Dials() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.dials
}

// HTTP reports whether this is an HTTP connection (cheap to keep open; a
// stdio child may hold a PGLite brain that admits one process).
func (k *Conn) HTTP() bool { return k.keepOpen }

// Drop closes the live client, if any, and keeps the Conn usable: the next
// Client dials again. It is how a short connection ends after a round.
func (k *Conn) Drop() {
	k.dialMu.Lock()
	defer k.dialMu.Unlock()
	k.mu.Lock()
	c := k.c
	k.c = nil
	k.mu.Unlock()
	if c != nil {
		_ = c.Close()
	}
}

// Close ends the connection (the child's stdin first, see gbrain.Client.Close).
// Later calls to Client fail.
func (k *Conn) Close() error {
	k.mu.Lock()
	k.closed = true
	c := k.c
	k.c = nil
	k.mu.Unlock()
	if c != nil {
		return c.Close()
	}
	return nil
}
