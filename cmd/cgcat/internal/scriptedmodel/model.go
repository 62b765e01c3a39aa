// Package scriptedmodel is a model API on 127.0.0.1 for the agent-turn
// tests: it speaks the four wire protocols real coding agents use (OpenAI
// Responses SSE for Codex, Chat Completions SSE for OpenCode, Anthropic
// Messages SSE for Claude Code, Gemini streamGenerateContent SSE for Gemini
// CLI) and plays one agent that follows cgcat's contract (seed 000
// section 7). A prompt holds one or more tasks (see tasks.go), done in
// order in one session:
//
//   - find a project: call the catalog tool (whatever the host named it)
//     once, choose among the candidates it received (by the version the
//     prompt asks for, never at random), and call the native
//     codegraph_explore with the chosen projectPath;
//   - resolve a saved project id with the resolve tool, then explore;
//   - a question about the current workspace: codegraph_explore directly,
//     no catalog call;
//   - where no projectPath comes back, or candidates cannot be told
//     apart, report the gap and call nothing more for that task.
//
// The final answer names, for each task, the project, its path, the files
// and symbols CodeGraph returned, and quotes it.
//
// The model decides only from what a request carries (the prompt, the
// tools offered, the tool results), never from the test; every request is
// recorded so a test can check what the model really saw. It must never be
// used outside tests.
package scriptedmodel

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Tool is one tool as a model received it.
type Tool struct {
	// Namespace is set where the host groups tools (Codex: "mcp__<server>").
	Namespace   string
	Name        string
	Description string
	Parameters  json.RawMessage
	// Bytes is the size of the tool's definition as the request carried
	// it (JSON, for Codex inside its namespace).
	Bytes int
}

// FullName is the name a model uses to call the tool.
func (t Tool) FullName() string {
	if t.Namespace != "" {
		return t.Namespace + "." + t.Name
	}
	return t.Name
}

// Result is a tool result as the model received it.
type Result struct {
	Tool    string // the name the model called (Namespace.Name for Codex)
	Text    string // the result as the host rendered it for the model
	IsError bool
}

// Call is a tool call the model makes.
type Call struct {
	Tool Tool
	Args map[string]any
}

// Reply is the model's answer to one request: a call or a text.
type Reply struct {
	Call *Call
	Text string
}

// Turn is one request, normalised across wires, with the reply given.
type Turn struct {
	Wire   string // "responses", "chat", "messages", "gemini"
	Path   string // the HTTP path
	Prompt string // every user text, joined
	System string // system/developer instructions, joined
	Tools  []Tool
	// ToolBytes is the size of the request's whole tool list (JSON).
	ToolBytes int
	Results   []Result
	Reply     Reply
	// At is when the request arrived (the gap to the next one is the
	// host's work between them: tool calls, its own bookkeeping).
	At time.Time
}

// ToolNamed returns the offered tool whose name ends with suffix.
func (t *Turn) ToolNamed(suffix string) *Tool {
	for i := range t.Tools {
		if strings.HasSuffix(t.Tools[i].Name, suffix) {
			return &t.Tools[i]
		}
	}
	return nil
}

// The catalog tool and CodeGraph's tool, as the hosts name them: each host
// prefixes the MCP tool name with the server name in its own way.
const (
	catalogTool = "local_codegraph_projects"
	resolveTool = "local_codegraph_resolve"
	exploreTool = "codegraph_explore"
	// ExploreTool is CodeGraph's tool name without the host's prefix.
	ExploreTool = exploreTool
)

// Answer prefixes the quote of what CodeGraph returned for a path, so a
// test can find it in the host's output.
const Answer = "CodeGraph answered for "

// decide is the agent: it looks only at the turn.
func decide(t *Turn) Reply {
	tasks := ParseTasks(t.Prompt)
	if len(tasks) == 0 || len(t.Tools) == 0 {
		// A side request (a title, a summary, a classifier): no hand-off.
		return Reply{Text: "Catalog hand-off"}
	}
	a := &agent{turn: t}
	if a.explore = t.ToolNamed(exploreTool); a.explore == nil {
		return Reply{Text: "Gap: the native codegraph_explore is not among the tools offered to me " + toolNames(t.Tools) + ", so I cannot read code; I did not index anything."}
	}
	a.catalog, a.resolve = t.ToolNamed(catalogTool), t.ToolNamed(resolveTool)
	var answer []string
	for i, task := range tasks {
		done, reply := a.do(task)
		if !done {
			return reply
		}
		answer = append(answer, fmt.Sprintf("## Task %d: %s\n%s", i+1, task, reply.Text))
	}
	return Reply{Text: strings.Join(answer, "\n\n")}
}

func toolNames(tools []Tool) string {
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.FullName()
	}
	return "[" + strings.Join(names, ", ") + "]"
}
