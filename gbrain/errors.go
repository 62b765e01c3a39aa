package gbrain

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Class says what a failed call means for the caller.
type Class uint8

const (
	// Definite: the call failed and nothing changed, and repeating the same
	// call will fail the same way (GBrain refused it, or we refused it before
	// sending). Report it; do not retry.
	Definite Class = iota + 1
	// Transient: the call failed and nothing changed (it was not sent, or it
	// was a read), but a later attempt — possibly on a new connection — may
	// succeed. Retry with backoff.
	Transient
	// Ambiguous: a write was sent and then the answer was lost (timeout,
	// connection or process lost, cancelled, garbled answer). The write may
	// or may not have been applied. Never retry blindly: read the page back
	// and compare before deciding.
	Ambiguous
)

func (c Class) String() string {
	switch c {
	case Definite:
		return "definite"
	case Transient:
		return "transient"
	case Ambiguous:
		return "ambiguous"
	}
	return "none"
}

// Classify returns the class of an error returned by this package: every
// error from a [Client] method carries one. Errors from elsewhere are
// Definite; nil is 0.
func Classify(err error) Class {
	if err == nil {
		return 0
	}
	var ce *CallError
	if errors.As(err, &ce) {
		return ce.Class
	}
	var de *DialError
	if errors.As(err, &de) {
		return de.Class
	}
	var ae *AuthError
	if errors.As(err, &ae) {
		return ae.Class
	}
	return Definite
}

// IsTransient reports whether err is a failure that left GBrain unchanged
// and may go away on retry. Ambiguous errors are NOT transient.
func IsTransient(err error) bool { return Classify(err) == Transient }

// IsAmbiguous reports whether err is a write whose outcome is unknown: the
// caller must read back before any retry.
func IsAmbiguous(err error) bool { return Classify(err) == Ambiguous }

// IsDefinite reports whether err is a failure that will not go away on retry.
func IsDefinite(err error) bool { return Classify(err) == Definite }

// Sentinels. Match them with errors.Is; the concrete types below carry the
// details.
var (
	// GBrain error codes (a *ToolError matches the sentinel of its code).
	ErrPageNotFound     = errors.New("page_not_found")
	ErrInvalidParams    = errors.New("invalid_params")
	ErrUnknownTool      = errors.New("unknown_tool")
	ErrInternal         = errors.New("internal_error")
	ErrPermissionDenied = errors.New("permission_denied")
	ErrDatabase         = errors.New("database_error")
	ErrEmbeddingFailed  = errors.New("embedding_failed")
	ErrRateLimited      = errors.New("rate_limited")
	ErrUnavailable      = errors.New("unavailable")
	// ErrAmbiguousSlug is GBrain's {error: "ambiguous_slug"} answer (not
	// flagged isError by GBrain).
	ErrAmbiguousSlug = errors.New("ambiguous_slug")
	// ErrInsufficientScope is GBrain's answer over HTTP when the token's
	// scopes do not cover the tool (e.g. put_page with a read-only token).
	ErrInsufficientScope = errors.New("insufficient_scope")
	// ErrPutRejected is a put_page answer with status "error" (not flagged
	// isError by GBrain; e.g. invalid YAML frontmatter).
	ErrPutRejected = errors.New("put_page answered status error")

	// Connection-level.
	ErrCallTimeout      = errors.New("gbrain call timed out")
	ErrConnectionLost   = errors.New("gbrain connection lost")
	ErrNotConnected     = errors.New("gbrain connection is down")
	ErrClosed           = errors.New("gbrain client closed")
	ErrHandshakeTimeout = errors.New("gbrain handshake timed out")
	ErrProcessExited    = errors.New("gbrain process exited")
	// ErrUnauthorized: GBrain answered HTTP 401 (a missing, unknown, revoked
	// or expired token). Nothing was applied.
	ErrUnauthorized = errors.New("gbrain refused the token (HTTP 401)")
	// ErrCredentialsRefused: the token endpoint refused the client id or
	// secret. It does not go away by retrying.
	ErrCredentialsRefused = errors.New("gbrain refused the client credentials")
	// ErrBrainLocked: the child exited because its embedded PGLite database
	// is already open in another `gbrain serve` (typically the agent host's
	// own GBrain connection). It does not go away by retrying.
	ErrBrainLocked = errors.New("gbrain PGLite database already open by another process")

	// Answers we refuse.
	ErrGarbage       = errors.New("gbrain answered garbage")
	ErrForeignSource = errors.New("page belongs to another gbrain source")
	ErrSlugMismatch  = errors.New("gbrain answered for another slug")
	// ErrWrongWriteSource: pages written through this connection would land
	// in another source than the expected one (an HTTP token bound to
	// another source, or a static token, which writes to "default").
	ErrWrongWriteSource = errors.New("wrong gbrain write source")

	// Local refusals (nothing was sent).
	ErrInvalidSlug     = errors.New("invalid slug")
	ErrInvalidSourceID = errors.New("invalid gbrain source id")
	ErrNoSource        = errors.New("no expected gbrain source configured")
	ErrSourceMissing   = errors.New("gbrain source not registered")
	ErrInvalidArgument = errors.New("invalid argument")
)

// CallError is the error every [Client] call returns: the tool, the class
// and the cause. Its message reads "gbrain <tool>: <cause>".
type CallError struct {
	Tool  string
	Class Class
	Err   error
}

func (e *CallError) Error() string {
	msg := fmt.Sprintf("gbrain %s: %v", e.Tool, e.Err)
	if e.Class == Ambiguous {
		msg += " (the write may have been applied: read back before retrying)"
	}
	return msg
}

func (e *CallError) Unwrap() error { return e.Err }

// DialError is the error [Dial] returns, with its class: a handshake timeout
// or an unexplained exit is Transient, a configuration problem or a locked
// PGLite brain is Definite.
type DialError struct {
	Class Class
	Err   error
}

func (e *DialError) Error() string { return e.Err.Error() }
func (e *DialError) Unwrap() error { return e.Err }

// ToolError is an error answer from GBrain: isError with the JSON text
// {error, message, suggestion}, a put_page status "error", or an
// ambiguous_slug answer. errors.Is matches the sentinel of its Code
// (ErrPageNotFound for "page_not_found", ...).
type ToolError struct {
	Code       string
	Message    string
	Suggestion string
	// Candidates lists the slugs of an ambiguous_slug answer.
	Candidates []string
}

func (e *ToolError) Error() string {
	var b strings.Builder
	b.WriteString(e.Code)
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.Suggestion != "" {
		b.WriteString(" (")
		b.WriteString(e.Suggestion)
		b.WriteString(")")
	}
	if len(e.Candidates) > 0 {
		fmt.Fprintf(&b, " candidates: %s", strings.Join(e.Candidates, ", "))
	}
	return b.String()
}

var codeSentinels = map[string]error{
	"page_not_found":     ErrPageNotFound,
	"invalid_params":     ErrInvalidParams,
	"unknown_tool":       ErrUnknownTool,
	"unknown_operation":  ErrUnknownTool, // the same over HTTP
	"insufficient_scope": ErrInsufficientScope,
	"internal_error":     ErrInternal,
	"permission_denied":  ErrPermissionDenied,
	"database_error":     ErrDatabase,
	"embedding_failed":   ErrEmbeddingFailed,
	"rate_limited":       ErrRateLimited,
	"unavailable":        ErrUnavailable,
	"ambiguous_slug":     ErrAmbiguousSlug,
	"put_status_error":   ErrPutRejected,
}

// Is matches the sentinel of e.Code.
func (e *ToolError) Is(target error) bool {
	s, ok := codeSentinels[e.Code]
	return ok && s == target
}

// toolErrorClass: the server answered, so nothing is unknown — except for
// codes that may be raised after a write reached the database.
func toolErrorClass(code string, mutating bool) Class {
	switch code {
	case "rate_limited", "unavailable":
		return Transient
	case "database_error", "embedding_failed":
		if mutating {
			return Ambiguous
		}
		return Transient
	}
	return Definite
}

// GarbageError: GBrain's answer could not be understood as the documented
// JSON. Snippet is the start of what it sent.
type GarbageError struct {
	Why     string
	Snippet string
}

func (e *GarbageError) Error() string {
	return fmt.Sprintf("%v: %s: %q", ErrGarbage, e.Why, e.Snippet)
}
func (e *GarbageError) Unwrap() error { return ErrGarbage }

func garbage(why, text string) error {
	const max = 200
	if len(text) > max {
		text = text[:max] + "…"
	}
	return &GarbageError{Why: why, Snippet: text}
}

// ForeignSourceError: GBrain returned a page (or list entry) whose source_id
// is not the expected source. Such a page is never ours.
type ForeignSourceError struct {
	Slug     string
	Source   string // what the page says ("" when it says nothing)
	Expected string
}

func (e *ForeignSourceError) Error() string {
	src := e.Source
	if src == "" {
		src = "(none)"
	}
	return fmt.Sprintf("%v: page %q has source_id %s, expected %s (is the gbrain server pinned to another source?)",
		ErrForeignSource, e.Slug, src, e.Expected)
}
func (e *ForeignSourceError) Unwrap() error { return ErrForeignSource }

// SlugMismatchError: GBrain answered for a slug other than the one asked —
// for put_page that is its frontmatter-id de-duplication: the write went
// nowhere (Status "skipped") or to another page.
type SlugMismatchError struct {
	Want, Got, Status string
}

func (e *SlugMismatchError) Error() string {
	return fmt.Sprintf("%v: asked for %q, answer names %q (status %q)", ErrSlugMismatch, e.Want, e.Got, e.Status)
}
func (e *SlugMismatchError) Unwrap() error { return ErrSlugMismatch }

// ProcessExitedError: the stdio child is gone. Code is its exit code (-1
// when killed by a signal, then Signal names it). Stderr is the tail of what
// it wrote there.
type ProcessExitedError struct {
	Code   int
	Signal string
	Stderr string
}

func (e *ProcessExitedError) Error() string {
	how := fmt.Sprintf("code %d", e.Code)
	if e.Signal != "" {
		how = "signal " + e.Signal
	}
	msg := fmt.Sprintf("gbrain process exited (%s)", how)
	if e.BrainLocked() {
		msg += ": its PGLite database is already open in another `gbrain serve` (probably your agent host's own GBrain connection); " +
			"PGLite admits one process per brain. Point cgcat at a Postgres-backed brain, or run `gbrain serve --http` and give cgcat its URL"
	}
	if t := strings.TrimSpace(e.Stderr); t != "" {
		msg += ": " + t
	}
	return msg
}

// BrainLocked reports whether the child's stderr shows the PGLite
// "already open" refusal.
func (e *ProcessExitedError) BrainLocked() bool {
	s := strings.ToLower(e.Stderr)
	return strings.Contains(s, "already open") && (strings.Contains(s, "database") || strings.Contains(s, "pglite"))
}

func (e *ProcessExitedError) Is(target error) bool {
	return target == ErrProcessExited || (target == ErrBrainLocked && e.BrainLocked())
}

// HandshakeTimeoutError: the server did not answer initialize in time.
type HandshakeTimeoutError struct {
	After  time.Duration
	Stderr string
}

func (e *HandshakeTimeoutError) Error() string {
	msg := fmt.Sprintf("gbrain handshake timed out after %s (a brain held by another gbrain command — init, sync, embed, sources add — delays initialize by up to 30 s)", e.After)
	if t := strings.TrimSpace(e.Stderr); t != "" {
		msg += "; stderr: " + t
	}
	return msg
}
func (e *HandshakeTimeoutError) Unwrap() error { return ErrHandshakeTimeout }
