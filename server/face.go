package server

import "fmt"

// Face is who reads an answer's messages. The answers themselves are the
// same for every face; only the advice in messages differs, so that each
// reader is told what it can actually do next: an agent calls the MCP
// tools, a person runs cgcat's commands.
type Face int

const (
	// FaceAgent words messages for the callers of the MCP tools (the
	// default): they name local_codegraph_projects and
	// local_codegraph_resolve.
	FaceAgent Face = iota
	// FaceCLI words messages for a person at the CLI twins (`cgcat
	// projects`, `cgcat resolve`): they name cgcat's commands.
	FaceCLI
)

// searchWith names the way to search: "search again with " + searchWith().
func (f *Frontend) searchWith() string {
	if f.opt.Face == FaceCLI {
		return "`cgcat projects QUERY`"
	}
	return "local_codegraph_projects"
}

// resolveIt is the advice to resolve id, as a sentence start ("Resolve ID
// with local_codegraph_resolve" / "Run `cgcat resolve ID`").
func (f *Frontend) resolveIt(id string) string {
	if f.opt.Face == FaceCLI {
		return fmt.Sprintf("Run `cgcat resolve %s`", id)
	}
	return fmt.Sprintf("Resolve %s with local_codegraph_resolve", id)
}

// explorer names what a projectPath is handed to.
func (f *Frontend) explorer() string {
	if f.opt.Face == FaceCLI {
		return "CodeGraph"
	}
	return "codegraph_explore"
}

// notShared says that this view hides a project, and nothing more: one
// sentence for agents and people alike.
func (f *Frontend) notShared() string {
	return "This project is not shared by this configuration."
}
