package gbrain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// maxAnswerBytes bounds the JSON text we parse from one answer.
const maxAnswerBytes = 16 << 20

// call runs one tool call and decodes the JSON text of content[0] into out.
// Every failure comes back as a *CallError with its class; mutating says
// whether a lost answer leaves the outcome unknown.
func (c *Client) call(ctx context.Context, tool string, args map[string]any, mutating bool, out any) error {
	if err := c.connected(); err != nil {
		return &CallError{Tool: tool, Class: Transient, Err: err}
	}
	cctx, cancel := context.WithTimeout(ctx, c.opts.CallTimeout)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, class, err := c.send(ctx, cctx, req, mutating)
	if err == nil {
		class, err = c.readAnswer(tool, res, mutating, out)
	}
	if err != nil {
		return &CallError{Tool: tool, Class: class, Err: err}
	}
	return nil
}

// outcomeClass is the class of a failure that leaves the call's outcome
// unknown: Transient for a read, Ambiguous for a write.
func outcomeClass(mutating bool) Class {
	if mutating {
		return Ambiguous
	}
	return Transient
}

// connected says why no call can be sent: the client was closed or its
// connection was lost. Both are Transient.
func (c *Client) connected() error {
	c.mu.Lock()
	closed, lost := c.closed, c.lost
	c.mu.Unlock()
	if closed {
		return ErrClosed
	}
	if lost != nil {
		return fmt.Errorf("%w: %w", ErrNotConnected, lost)
	}
	return nil
}

// send sends the request (a read refused for its token once more) and
// classifies a call that brought no tool result back.
func (c *Client) send(ctx, cctx context.Context, req mcp.CallToolRequest, mutating bool) (*mcp.CallToolResult, Class, error) {
	c.countCall(req.Params.Name)
	res, err := c.mc.CallTool(cctx, req)
	if err != nil && c.auth != nil {
		// HTTP: a call refused before GBrain ran it (no token, a 401)
		// changed nothing. A refused read is sent once more with a new
		// token; a refused write is left to the caller, who may send it
		// again (it surely was not applied) — this package never
		// re-sends a write by itself.
		class, cause, retry := c.authFailure(err, mutating)
		if retry {
			c.countCall(req.Params.Name)
			res, err = c.mc.CallTool(cctx, req)
			if err != nil {
				class, cause, _ = c.authFailure(err, true)
			}
		}
		if cause != nil {
			return nil, class, cause
		}
	}
	if err != nil {
		class, cause := c.sendFailure(ctx, cctx, err, mutating)
		return nil, class, cause
	}
	return res, 0, nil
}

// sendFailure classifies an error from sending a call: a lost connection,
// the caller giving up, the call timeout, nothing reaching GBrain, a wire
// failure, a JSON-RPC error, or an answer that is not a tool result.
func (c *Client) sendFailure(ctx, cctx context.Context, err error, mutating bool) (Class, error) {
	lostClass := outcomeClass(mutating)
	switch {
	case connectionGone(err):
		cause := c.markLost(err)
		if notSent(err) {
			return Transient, fmt.Errorf("%w: %w", ErrNotConnected, cause)
		}
		return lostClass, fmt.Errorf("%w mid-call: %w", ErrConnectionLost, cause)
	case ctx.Err() != nil:
		return lostClass, ctx.Err()
	case errors.Is(cctx.Err(), context.DeadlineExceeded):
		return lostClass, fmt.Errorf("%w after %s", ErrCallTimeout, c.opts.CallTimeout)
	}
	if c.auth != nil && dialFailed(err) {
		// Nothing reached GBrain (connection refused, no route).
		return Transient, fmt.Errorf("%w: %w", ErrNotConnected, err)
	}
	var te *transport.Error
	if errors.As(err, &te) {
		// HTTP transport failures and anything unforeseen on the wire:
		// the outcome is unknown.
		return lostClass, err
	}
	if isProtocolError(err) {
		// GBrain answered with a JSON-RPC error: nothing was done.
		return Definite, err
	}
	// An answer mcp-go could not read as a tool result.
	if mutating {
		return Ambiguous, fmt.Errorf("%w: %w", ErrGarbage, err)
	}
	return Definite, fmt.Errorf("%w: %w", ErrGarbage, err)
}

// readAnswer decodes a tool result: a tool error GBrain reported, or the
// JSON text of content[0] into out. Unknown-parameter warnings are logged.
func (c *Client) readAnswer(tool string, res *mcp.CallToolResult, mutating bool, out any) (Class, error) {
	text, extra, ok := firstText(res)
	for _, w := range extra {
		if strings.Contains(w, "unknown parameter") {
			c.log.Warn("gbrain warned about a parameter cgcat sent", "tool", tool, "warning", w)
		}
	}
	if res.IsError {
		return toolFailure(text, ok, mutating)
	}
	garbageClass := Definite
	if mutating {
		garbageClass = Ambiguous
	}
	if !ok {
		return garbageClass, garbage("answer has no text content", "")
	}
	if len(text) > maxAnswerBytes {
		return garbageClass, garbage(fmt.Sprintf("answer larger than %d bytes", maxAnswerBytes), text)
	}
	if err := json.Unmarshal([]byte(text), out); err != nil {
		return garbageClass, garbage("not the documented JSON ("+err.Error()+")", text)
	}
	return 0, nil
}

// toolFailure reads an isError answer as GBrain's {error, message,
// suggestion} and classifies it.
func toolFailure(text string, ok, mutating bool) (Class, error) {
	if !ok {
		return Definite, garbage("error answer without text", "")
	}
	var te struct {
		Error      string `json:"error"`
		Message    string `json:"message"`
		Suggestion string `json:"suggestion"`
	}
	if err := json.Unmarshal([]byte(text), &te); err != nil || te.Error == "" {
		return Definite, fmt.Errorf("%w (isError): %w", ErrGarbage, garbage("error answer is not {error, message}", text))
	}
	return toolErrorClass(te.Error, mutating), &ToolError{Code: te.Error, Message: te.Message, Suggestion: te.Suggestion}
}

// authFailure classifies an HTTP call that GBrain did not run: no token
// could be had (the AuthError's class), or GBrain answered 401. retry
// means: a read refused once with an OAuth token; send it again (the
// refused token was dropped, the next request fetches a new one). Two 401s
// in a row, or a 401 for a static token or no credentials, are Definite; a
// write's first 401 is Transient: it was not applied, and the next attempt
// carries a new token. cause is nil when err is not about authorization.
func (c *Client) authFailure(err error, mutating bool) (class Class, cause error, retry bool) {
	var ae *AuthError
	if errors.As(err, &ae) {
		return ae.Class, ae.Err, false
	}
	var ar *transport.AuthorizationRequiredError
	if !errors.As(err, &ar) {
		return 0, nil, false
	}
	why := c.auth.lastReason()
	if why == "" {
		why = "no reason given"
	}
	cause = fmt.Errorf("%w: GBrain refused %s (%s)", ErrUnauthorized, c.auth.describe(), why)
	switch {
	case c.auth.mode != AuthClientCredentials || c.auth.inARow() >= 2:
		return Definite, cause, false
	case !mutating:
		return 0, nil, true
	}
	return Transient, fmt.Errorf("%w; nothing was written, the next attempt fetches a new token", cause), false
}

// dialFailed reports an HTTP request that never reached the server.
func dialFailed(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// isProtocolError recognises the JSON-RPC error answers mcp-go names.
// (Codes it does not know arrive as a bare message, read as garbage.)
func isProtocolError(err error) bool {
	for _, s := range []error{mcp.ErrParseError, mcp.ErrInvalidRequest, mcp.ErrMethodNotFound,
		mcp.ErrInvalidParams, mcp.ErrInternalError, mcp.ErrRequestInterrupted, mcp.ErrResourceNotFound} {
		if errors.Is(err, s) {
			return true
		}
	}
	var uv mcp.UnsupportedProtocolVersionError
	return errors.As(err, &uv)
}

// markLost records that the connection is gone and returns the best
// description of why: for a stdio child, how it exited and its stderr tail.
func (c *Client) markLost(err error) error {
	cause := err
	if c.cmd != nil {
		cause = c.reap()
	}
	c.mu.Lock()
	if c.lost == nil {
		c.lost = cause
	}
	c.mu.Unlock()
	return cause
}

func firstText(res *mcp.CallToolResult) (first string, rest []string, ok bool) {
	for i, ct := range res.Content {
		tc, isText := mcp.AsTextContent(ct)
		if i == 0 {
			if !isText {
				return "", nil, false
			}
			first, ok = tc.Text, true
			continue
		}
		if isText {
			rest = append(rest, tc.Text)
		}
	}
	return first, rest, ok
}
