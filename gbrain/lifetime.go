package gbrain

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"

	"github.com/mark3labs/mcp-go/client/transport"
)

// Lost returns why the connection is gone (nil while it is usable): once
// lost, every call fails Transient with ErrNotConnected and the caller must
// Close this client and Dial again. Close alone does not count as lost.
func (c *Client) Lost() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lost
}

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
