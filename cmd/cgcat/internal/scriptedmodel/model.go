// Package scriptedmodel is a model API on 127.0.0.1 for the agent-turn
// tests: it speaks the four wire protocols real coding agents use (OpenAI
// Responses SSE for Codex, Chat Completions SSE for OpenCode, Anthropic
// Messages SSE for Claude Code, Gemini streamGenerateContent SSE for Gemini
// CLI) and plays one agent that follows cgcat's hand-off:
//
//  1. it calls the catalog tool (whatever the host named it) with the
//     project query the user prompt names;
//  2. it reads projectPath from the tool result it received and calls the
//     native codegraph_explore with it and the prompt's code query;
//  3. it answers with what CodeGraph returned.
//
// The model decides only from what a request carries (the prompt, the
// tools offered, the tool results), never from the test; every request is
// recorded so a test can check what the model really saw. It must never be
// used outside tests.
package scriptedmodel

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// Tool is one tool as a model received it.
type Tool struct {
	// Namespace is set where the host groups tools (Codex: "mcp__<server>").
	Namespace   string
	Name        string
	Description string
	Parameters  json.RawMessage
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
	Wire    string // "responses", "chat", "messages", "gemini"
	Path    string // the HTTP path
	Prompt  string // every user text, joined
	System  string // system/developer instructions, joined
	Tools   []Tool
	Results []Result
	Reply   Reply
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
	exploreTool = "codegraph_explore"
	// ExploreTool is CodeGraph's tool name without the host's prefix.
	ExploreTool = exploreTool
)

// promptRE is how a test's prompt names the project and the code query.
// Guillemets, not quotes: OpenCode sends a prompt holding '"' JSON-quoted.
var promptRE = regexp.MustCompile(`find the project «([^»]+)» and explore «([^»]+)»`)

// Prompt is the user prompt for one hand-off.
func Prompt(projectQuery, codeQuery string) string {
	return fmt.Sprintf(`Using the local catalog, find the project «%s» and explore «%s» in it with CodeGraph; quote what CodeGraph returns.`, projectQuery, codeQuery)
}

// Answer prefixes the final text, so a test can find it in the host's output.
const Answer = "CodeGraph answered for "

// decide is the agent: it looks only at the turn.
func decide(t *Turn) Reply {
	m := promptRE.FindStringSubmatch(t.Prompt)
	if m == nil || len(t.Tools) == 0 {
		// A side request (a title, a summary, a classifier): no hand-off.
		return Reply{Text: "Catalog hand-off"}
	}
	projectQuery, codeQuery := m[1], m[2]
	cat, explore := t.ToolNamed(catalogTool), t.ToolNamed(exploreTool)
	if cat == nil || explore == nil {
		return Reply{Text: "I cannot do this: the tools offered to me are " + toolNames(t.Tools)}
	}
	var catRes, expRes *Result
	for i := range t.Results {
		r := &t.Results[i]
		switch r.Tool {
		case cat.FullName(), cat.Name:
			catRes = r
		case explore.FullName(), explore.Name:
			expRes = r
		}
	}
	switch {
	case catRes == nil:
		return Reply{Call: &Call{Tool: *cat, Args: map[string]any{"query": projectQuery, "limit": 3}}}
	case catRes.IsError:
		return Reply{Text: "The catalog call failed: " + catRes.Text}
	}
	path := ProjectPath(catRes.Text)
	if path == "" {
		return Reply{Text: "The catalog gave me no projectPath: " + catRes.Text}
	}
	switch {
	case expRes == nil:
		return Reply{Call: &Call{Tool: *explore, Args: map[string]any{"query": codeQuery, "projectPath": path}}}
	case expRes.IsError:
		return Reply{Text: "codegraph_explore failed for " + path + ": " + expRes.Text}
	}
	return Reply{Text: Answer + path + ":\n" + expRes.Text}
}

func toolNames(tools []Tool) string {
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.FullName()
	}
	return "[" + strings.Join(names, ", ") + "]"
}

var textPathRE = regexp.MustCompile(`(?m)^\s*projectPath: (/.*?)\s*$`)

// ProjectPath reads the first project's projectPath from a catalog result
// as a host rendered it: the structured envelope (JSON, possibly wrapped in
// the host's own JSON) or the text content ("projectPath: /abs").
func ProjectPath(result string) string {
	var v any
	if json.Unmarshal([]byte(result), &v) == nil {
		if p := pathIn(v); p != "" {
			return p
		}
	} else if i := strings.IndexByte(result, '{'); i >= 0 {
		// JSON after the host's own preamble (Codex: "Wall time: …\nOutput:\n{…}").
		if json.NewDecoder(strings.NewReader(result[i:])).Decode(&v) == nil {
			if p := pathIn(v); p != "" {
				return p
			}
		}
	}
	if m := textPathRE.FindStringSubmatch(result); m != nil {
		return m[1]
	}
	return ""
}

// pathIn walks a decoded JSON value for an envelope's first projectPath;
// strings are tried as JSON and as text in turn.
func pathIn(v any) string {
	switch x := v.(type) {
	case map[string]any:
		if ps, ok := x["projects"].([]any); ok && len(ps) > 0 {
			if p, ok := ps[0].(map[string]any); ok {
				if s, ok := p["projectPath"].(string); ok {
					return s
				}
			}
		}
		for _, k := range sortedKeys(x) {
			if p := pathIn(x[k]); p != "" {
				return p
			}
		}
	case []any:
		for _, e := range x {
			if p := pathIn(e); p != "" {
				return p
			}
		}
	case string:
		return ProjectPath(x)
	}
	return ""
}
