package hostconfig

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// Entry describes the one MCP server entry this package writes.
type Entry struct {
	// Name is the server name in the host config (default
	// "codegraph-catalog"). Letters, digits, '-' and '_' only: that is what
	// Codex accepts, and it needs no quoting in either format.
	Name string
	// Command is the absolute path of the cgcat executable.
	Command string
	// ConfigPath is the absolute path of the cgcat configuration file.
	ConfigPath string
	// CodeGraphServer is the name the host gave CodeGraph's own MCP server.
	// When it is not DefaultCodeGraphServer it is passed to cgcat as
	// "--codegraph-server NAME", so answers name the server the agent can
	// really call.
	CodeGraphServer string
}

// DefaultCodeGraphServer is the name CodeGraph's own installer gives its
// MCP server, and the one cgcat names when told nothing else.
const DefaultCodeGraphServer = "codegraph"

// DefaultName is the server name used when the user does not choose one.
const DefaultName = "codegraph-catalog"

// The catalog's two tools, enabled explicitly in the Codex entry.
const (
	ToolProjects = "local_codegraph_projects"
	ToolResolve  = "local_codegraph_resolve"
)

// Timeouts written into the Codex entry (seconds).
const (
	codexStartupTimeoutSec = 10
	codexToolTimeoutSec    = 10
)

var (
	// ErrInvalidEntry: the Entry itself is unusable (bad name, relative path,
	// invalid UTF-8).
	ErrInvalidEntry = errors.New("invalid entry")
	// ErrUnparsable: the existing file does not parse.
	ErrUnparsable = errors.New("file does not parse")
	// ErrUnsafe: the file defines our entry (or the table that must hold it)
	// in a form this package cannot edit without touching other keys, or it
	// uses another configuration generation.
	ErrUnsafe = errors.New("cannot edit safely")
	// ErrExists: an entry with our name exists with different content; see
	// ConflictError.
	ErrExists = errors.New("entry exists with different content")
	// ErrVerify: the edited file did not re-parse to "before with our entry
	// set". Nothing should be written; this is a bug or an unusual file.
	ErrVerify = errors.New("verification of the edited file failed")
)

// unsafef is an ErrUnsafe with the reason: which form the file uses and what
// to do about it.
func unsafef(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUnsafe, fmt.Sprintf(format, args...))
}

// ConflictError reports an existing entry of our name whose content differs
// from what we would write. Existing holds its current text so the caller
// can show it.
type ConflictError struct {
	Host     string // "codex" or "opencode"
	Name     string
	Existing string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("an MCP server named %q already exists with different settings:\n%s\nrerun with --force to replace it (only this entry changes; a backup is written first)",
		e.Name, strings.TrimRight(e.Existing, "\r\n"))
}

func (e *ConflictError) Unwrap() error { return ErrExists }

func validName(name string) bool {
	if name == "" || len(name) > 128 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_':
		default:
			return false
		}
	}
	return true
}

func (e Entry) validate() error {
	if !validName(e.Name) {
		return fmt.Errorf("%w: server name %q: use letters, digits, '-' and '_' only", ErrInvalidEntry, e.Name)
	}
	for _, p := range []struct{ what, v string }{{"cgcat command", e.Command}, {"cgcat config", e.ConfigPath}} {
		switch {
		case p.v == "":
			return fmt.Errorf("%w: %s path is empty", ErrInvalidEntry, p.what)
		case !filepath.IsAbs(p.v):
			return fmt.Errorf("%w: %s path %q is not absolute (hosts start servers without a shell or PATH)", ErrInvalidEntry, p.what, p.v)
		case !utf8.ValidString(p.v):
			return fmt.Errorf("%w: %s path %q is not valid UTF-8 and cannot be written to TOML or JSON", ErrInvalidEntry, p.what, p.v)
		case strings.ContainsRune(p.v, 0):
			return fmt.Errorf("%w: %s path contains a NUL byte", ErrInvalidEntry, p.what)
		}
	}
	if e.CodeGraphServer != "" && !validName(e.CodeGraphServer) {
		return fmt.Errorf("%w: CodeGraph server name %q: use letters, digits, '-' and '_' only", ErrInvalidEntry, e.CodeGraphServer)
	}
	return nil
}

// args are the arguments after the cgcat command, identical for every host.
func (e Entry) args() []string {
	a := []string{"serve", "--config", e.ConfigPath}
	if e.CodeGraphServer != "" && e.CodeGraphServer != DefaultCodeGraphServer {
		a = append(a, CodeGraphFlag, e.CodeGraphServer)
	}
	return a
}

// Args are the arguments after the cgcat command, as every host runs them.
func (e Entry) Args() []string { return e.args() }

// Printable returns e with invalid UTF-8 in its paths replaced by U+FFFD,
// for showing a snippet (Upsert refuses such paths).
func (e Entry) Printable() Entry {
	e.Command = strings.ToValidUTF8(e.Command, "\uFFFD")
	e.ConfigPath = strings.ToValidUTF8(e.ConfigPath, "\uFFFD")
	return e
}

// Snippets returns the Codex and OpenCode configuration fragments (R24)
// with the real absolute paths.
func Snippets(e Entry) (codexTOML, opencodeJSON string) {
	return Snippet(Codex, e), Snippet(OpenCode, e)
}

// Snippet returns the configuration fragment for the host called host,
// with the real absolute paths, for `cgcat install --print`: a fragment to
// merge by hand, not a whole file.
func Snippet(host string, e Entry) string {
	h, ok := ByName(host)
	if !ok {
		return ""
	}
	return h.Snippet(e.Printable())
}
