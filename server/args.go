package server

import (
	"fmt"
	"path/filepath"
	"time"
	"unicode/utf8"
)

// ArgError is a bad argument: Arg names it the way the tool's schema does
// ("limit", "workspacePath"), Problem says what is wrong and what to send
// instead. Each face words it its own way (the CLI names its flags).
type ArgError struct {
	Arg, Problem string
}

func (e *ArgError) Error() string {
	if e.Arg == "" {
		return "invalid arguments: " + e.Problem
	}
	return fmt.Sprintf("invalid argument %q: %s", e.Arg, e.Problem)
}

// Bounds of the arguments, as the tools' schemas publish them.
const (
	MaxQuery     = 1000 // characters
	MaxWorkspace = 4096
	MaxCursor    = 2048
	MaxLimit     = 50
	MaxProjectID = 128
	// DefaultLimit is how many projects a page has when no limit is given.
	DefaultLimit = 5
)

// ProjectsArgs are local_codegraph_projects' arguments with defaults applied.
type ProjectsArgs struct {
	Query         string
	WorkspacePath string
	Limit         int
	Cursor        string
	Refresh       bool
	// Offset starts a fresh listing at this position (0: the first page).
	// Only the CLI sets it (`cgcat projects --page N`): the tool's schema has
	// no such argument, agents page with cursors.
	Offset int
	// RefreshBudget, set by the CLI only, makes Refresh a real refresh:
	// every root is walked anew within this budget before the answer, and
	// so is a miss while no process follows the disk. Zero (the tool):
	// Refresh schedules a bounded refresh and the answer does not wait.
	RefreshBudget time.Duration
}

// Validate checks the bounds every face must keep.
func (a ProjectsArgs) Validate() error {
	switch {
	case !utf8.ValidString(a.Query) || !utf8.ValidString(a.WorkspacePath) || !utf8.ValidString(a.Cursor):
		return &ArgError{Problem: "must be valid UTF-8"}
	case utf8.RuneCountInString(a.Query) > MaxQuery:
		return &ArgError{Arg: "query", Problem: fmt.Sprintf("is %d characters long; the limit is %d", utf8.RuneCountInString(a.Query), MaxQuery)}
	case utf8.RuneCountInString(a.WorkspacePath) > MaxWorkspace:
		return &ArgError{Arg: "workspacePath", Problem: fmt.Sprintf("is longer than %d characters", MaxWorkspace)}
	case a.WorkspacePath != "" && !filepath.IsAbs(a.WorkspacePath):
		return &ArgError{Arg: "workspacePath", Problem: "must be an absolute path (it is only a ranking hint)"}
	case a.Limit < 1 || a.Limit > MaxLimit:
		return &ArgError{Arg: "limit", Problem: fmt.Sprintf("must be between 1 and %d, got %d", MaxLimit, a.Limit)}
	case utf8.RuneCountInString(a.Cursor) > MaxCursor:
		return &ArgError{Arg: "cursor", Problem: fmt.Sprintf("is longer than %d characters; pass nextCursor from an earlier answer unchanged", MaxCursor)}
	case a.Offset < 0:
		return &ArgError{Arg: "offset", Problem: fmt.Sprintf("must be 0 or more, got %d", a.Offset)}
	case a.Offset > 0 && a.Cursor != "":
		return &ArgError{Arg: "offset", Problem: "cannot be combined with a cursor: a cursor already says where the next page starts"}
	}
	return nil
}

// ResolveArgs are local_codegraph_resolve's arguments.
type ResolveArgs struct {
	ProjectID              string
	ExpectedRecordRevision uint64 // 0 = not given
}

// Validate checks the bounds every face must keep.
func (a ResolveArgs) Validate() error {
	switch {
	case a.ProjectID == "":
		return &ArgError{Arg: "projectId", Problem: "is required: pass a projectId (like cg_…) from an earlier answer"}
	case !utf8.ValidString(a.ProjectID):
		return &ArgError{Arg: "projectId", Problem: "must be valid UTF-8"}
	case utf8.RuneCountInString(a.ProjectID) > MaxProjectID:
		return &ArgError{Arg: "projectId", Problem: fmt.Sprintf("is longer than %d characters; pass a projectId (like cg_…) from an earlier answer", MaxProjectID)}
	}
	return nil
}
