package scriptedmodel

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Task is one thing a prompt asks. Prompts name it in guillemets, not
// quotes: OpenCode sends a prompt holding '"' JSON-quoted.
type Task struct {
	Kind    string // TaskFind, TaskResolve or TaskWorkspace
	Project string // TaskFind: the catalog query; TaskResolve: the project id
	Version string // TaskFind: the version asked for ("" for any)
	Code    string // the code query for codegraph_explore
}

// Task kinds.
const (
	TaskFind      = "find"
	TaskResolve   = "resolve"
	TaskWorkspace = "workspace"
)

func (t Task) String() string {
	switch t.Kind {
	case TaskFind:
		if t.Version != "" {
			return fmt.Sprintf("find the project «%s» at version «%s» and explore «%s»", t.Project, t.Version, t.Code)
		}
		return fmt.Sprintf("find the project «%s» and explore «%s»", t.Project, t.Code)
	case TaskResolve:
		return fmt.Sprintf("resolve the saved project id «%s» and explore «%s»", t.Project, t.Code)
	}
	return fmt.Sprintf("in this workspace, explore «%s»", t.Code)
}

var taskRE = regexp.MustCompile(`find the project «([^»]+)»(?: at version «([^»]+)»)? and explore «([^»]+)»|resolve the saved project id «([^»]+)» and explore «([^»]+)»|in this workspace, explore «([^»]+)»`)

// ParseTasks reads the tasks of a prompt, in order.
func ParseTasks(prompt string) []Task {
	var out []Task
	for _, m := range taskRE.FindAllStringSubmatch(prompt, -1) {
		switch {
		case m[1] != "":
			out = append(out, Task{Kind: TaskFind, Project: m[1], Version: m[2], Code: m[3]})
		case m[4] != "":
			out = append(out, Task{Kind: TaskResolve, Project: m[4], Code: m[5]})
		default:
			out = append(out, Task{Kind: TaskWorkspace, Code: m[6]})
		}
	}
	return out
}

// Prompt is the user prompt for one hand-off.
func Prompt(projectQuery, codeQuery string) string {
	return Prompts(Task{Kind: TaskFind, Project: projectQuery, Code: codeQuery})
}

// Prompts is a user prompt asking for tasks, in order, in one session.
func Prompts(tasks ...Task) string {
	parts := make([]string, len(tasks))
	for i, t := range tasks {
		parts[i] = fmt.Sprintf("%d. %s.", i+1, t)
	}
	return "Using the local catalog and CodeGraph, do these in order and quote what CodeGraph returns:\n" + strings.Join(parts, "\n")
}

// agent walks one turn's tool results task by task: each task's calls
// come in order (catalog or resolve, then explore), so the results say how
// far the session got.
type agent struct {
	turn                      *Turn
	catalog, resolve, explore *Tool
	next                      int // the next result to read
}

// result returns the next result if it came from the tool named name
// (whatever the host's prefix), else nil. A tool no longer offered (its
// server died) still has its earlier results.
func (a *agent) result(name string) *Result {
	if a.next >= len(a.turn.Results) {
		return nil
	}
	r := &a.turn.Results[a.next]
	if !strings.HasSuffix(r.Tool, name) {
		return nil
	}
	a.next++
	return r
}

// do advances one task: done with its answer, or the call to make now.
func (a *agent) do(t Task) (done bool, reply Reply) {
	var path, project string
	switch t.Kind {
	case TaskWorkspace:
		project = "the current workspace"
	case TaskFind, TaskResolve:
		tool, name, args := a.catalog, catalogTool, map[string]any{"query": t.Project, "limit": 3}
		if t.Kind == TaskResolve {
			tool, name, args = a.resolve, resolveTool, map[string]any{"projectId": t.Project}
		}
		r := a.result(name)
		switch {
		case r == nil && tool == nil:
			return true, Reply{Text: "Gap: the catalog tools are not offered to me " + toolNames(a.turn.Tools) + "; I did not look elsewhere."}
		case r == nil:
			return false, Reply{Call: &Call{Tool: *tool, Args: args}}
		case r.IsError:
			return true, Reply{Text: "Gap: the catalog call failed: " + r.Text}
		}
		c, gap := choose(Candidates(r.Text), t.Version)
		if gap != "" {
			return true, Reply{Text: "Gap: " + gap + ". I did not pick one at random or index anything."}
		}
		path, project = c.Path, describe(c)
	}
	args := map[string]any{"query": t.Code}
	if path != "" {
		args["projectPath"] = path
	}
	r := a.result(exploreTool)
	switch {
	case r == nil:
		return false, Reply{Call: &Call{Tool: *a.explore, Args: args}}
	case r.IsError:
		return true, Reply{Text: "Gap: codegraph_explore failed for " + project + ": " + r.Text}
	}
	where := path
	if where == "" {
		where = "the current workspace"
	}
	return true, Reply{Text: fmt.Sprintf("Project: %s\nFiles: %s\nSymbols: %s\n%s%s:\n%s",
		project, strings.Join(filesIn(r.Text), ", "), strings.Join(symbolsIn(r.Text, t.Code), ", "), Answer, where, r.Text)}
}

// choose picks the candidate a task asks for: the one at the version
// asked, or the first with a path. Look-alikes it cannot tell apart are a
// gap, never a coin toss.
func choose(cs []Candidate, version string) (Candidate, string) {
	var withPath []Candidate
	for _, c := range cs {
		if c.Path != "" {
			withPath = append(withPath, c)
		}
	}
	if len(withPath) == 0 {
		why := "the catalog gave me no projectPath"
		if len(cs) > 0 && cs[0].Why != "" {
			why += " (" + cs[0].Why + ")"
		}
		return Candidate{}, why
	}
	if version == "" {
		return withPath[0], ""
	}
	var at []Candidate
	for _, c := range withPath {
		if c.Version == version {
			at = append(at, c)
		}
	}
	switch {
	case len(at) == 1:
		return at[0], ""
	case len(at) > 1 && !slices.ContainsFunc(at[1:], func(c Candidate) bool { return !slices.Contains(c.SameCommitAs, at[0].ID) }):
		return at[0], "" // clones of one commit: equivalent, any will do
	}
	return Candidate{}, fmt.Sprintf("I cannot tell which of the %d candidates is at version %s", len(withPath), version)
}

// describe names a chosen project for the final answer.
func describe(c Candidate) string {
	s := fmt.Sprintf("%q at %s", c.Name, c.Path)
	if c.Version != "" {
		s += " (version " + c.Version + ")"
	}
	return s
}

var fileRE = regexp.MustCompile(`[\w./-]+\.(?:ts|tsx|js|jsx|go|py|rs|java|rb|cs)\b`)

// filesIn lists the source files a CodeGraph answer shows, in order.
func filesIn(text string) []string {
	var out []string
	for _, f := range fileRE.FindAllString(text, -1) {
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// symbolsIn lists the words of the code query that CodeGraph's answer holds.
func symbolsIn(text, query string) []string {
	var out []string
	for _, w := range strings.Fields(query) {
		if strings.Contains(text, w) && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}
