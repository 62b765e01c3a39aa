package protocol

import (
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/cgcat/cgcat/server"
)

func checkKeys(args map[string]any, known ...string) error {
	var unknown []string
	for k := range args {
		found := false
		for _, kk := range known {
			if k == kk {
				found = true
			}
		}
		if !found {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	return &server.ArgError{Arg: clip(unknown[0], 64), Problem: "unknown argument; this tool takes only " + strings.Join(known, ", ")}
}

func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}

func str(args map[string]any, name string, maxLen int) (string, bool, error) {
	v, ok := args[name]
	if !ok || v == nil {
		return "", false, nil
	}
	s, isStr := v.(string)
	if !isStr {
		return "", true, &server.ArgError{Arg: name, Problem: fmt.Sprintf("must be a string, got %s", jsonKind(v))}
	}
	if !utf8.ValidString(s) {
		return "", true, &server.ArgError{Arg: name, Problem: "must be valid UTF-8"}
	}
	if n := utf8.RuneCountInString(s); n > maxLen {
		return "", true, &server.ArgError{Arg: name, Problem: fmt.Sprintf("is %d characters long; the limit is %d", n, maxLen)}
	}
	return s, true, nil
}

// maxExact is the largest integer a JSON number (a float64) holds exactly.
const maxExact = 1 << 53

func integer(args map[string]any, name string, lo, hi float64) (int64, bool, error) {
	v, ok := args[name]
	if !ok || v == nil {
		return 0, false, nil
	}
	f, isNum := v.(float64)
	if !isNum {
		if i, isInt := v.(int); isInt {
			f, isNum = float64(i), true
		}
	}
	if !isNum {
		return 0, true, &server.ArgError{Arg: name, Problem: fmt.Sprintf("must be a whole number, got %s", jsonKind(v))}
	}
	if f != math.Trunc(f) || math.IsInf(f, 0) {
		return 0, true, &server.ArgError{Arg: name, Problem: fmt.Sprintf("must be a whole number, got %v", f)}
	}
	if f < lo || f > hi {
		if hi == maxExact {
			// The schema sets no maximum: only numbers a float64 holds
			// exactly are taken.
			if f < lo {
				return 0, true, &server.ArgError{Arg: name, Problem: fmt.Sprintf("must be at least %v, got %v", lo, f)}
			}
			return 0, true, &server.ArgError{Arg: name, Problem: fmt.Sprintf("is too large (%v); pass the recordRevision from an earlier answer", f)}
		}
		return 0, true, &server.ArgError{Arg: name, Problem: fmt.Sprintf("must be between %v and %v, got %v", lo, hi, f)}
	}
	return int64(f), true, nil
}

func boolean(args map[string]any, name string) (bool, error) {
	v, ok := args[name]
	if !ok || v == nil {
		return false, nil
	}
	b, isBool := v.(bool)
	if !isBool {
		return false, &server.ArgError{Arg: name, Problem: fmt.Sprintf("must be true or false, got %s", jsonKind(v))}
	}
	return b, nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case float64, int:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return "null"
}

// ParseProjects validates local_codegraph_projects' arguments (R15: the input schema as published).
func ParseProjects(args map[string]any) (server.ProjectsArgs, error) {
	a := server.ProjectsArgs{Limit: server.DefaultLimit}
	if err := checkKeys(args, "query", "workspacePath", "limit", "cursor", "refresh"); err != nil {
		return a, err
	}
	var err error
	if a.Query, _, err = str(args, "query", server.MaxQuery); err != nil {
		return a, err
	}
	var has bool
	if a.WorkspacePath, has, err = str(args, "workspacePath", server.MaxWorkspace); err != nil {
		return a, err
	}
	if has && a.WorkspacePath != "" && !filepath.IsAbs(a.WorkspacePath) {
		return a, &server.ArgError{Arg: "workspacePath", Problem: "must be an absolute path (it is only a ranking hint)"}
	}
	if n, has, err := integer(args, "limit", 1, server.MaxLimit); err != nil {
		return a, err
	} else if has {
		a.Limit = int(n)
	}
	if a.Cursor, _, err = str(args, "cursor", server.MaxCursor); err != nil {
		return a, err
	}
	if a.Refresh, err = boolean(args, "refresh"); err != nil {
		return a, err
	}
	return a, a.Validate()
}

// ParseResolve validates local_codegraph_resolve's arguments (R15, R21).
func ParseResolve(args map[string]any) (server.ResolveArgs, error) {
	var a server.ResolveArgs
	if err := checkKeys(args, "projectId", "expectedRecordRevision"); err != nil {
		return a, err
	}
	id, has, err := str(args, "projectId", server.MaxProjectID)
	if err != nil {
		return a, err
	}
	if !has || id == "" {
		return a, &server.ArgError{Arg: "projectId", Problem: "is required: pass a projectId (like cg_…) from an earlier answer"}
	}
	a.ProjectID = id
	if n, has, err := integer(args, "expectedRecordRevision", 1, maxExact); err != nil {
		return a, err
	} else if has {
		a.ExpectedRecordRevision = uint64(n)
	}
	return a, a.Validate()
}
