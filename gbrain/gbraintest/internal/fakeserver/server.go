// Package fakeserver is the fake GBrain's MCP wiring: one mcp-go server
// whose tools run fakebrain's semantics against a state store, with the
// fault switches applied around each call. It serves the fake process
// (../../fakegbrain: stdio, or `serve --http`) and the in-process fake of
// package gbraintest (the same server over an in-process transport, or its
// HTTP handler on a listener of the test process), so that both behave
// alike to the byte.
//
// It owns the tool list and parameters GBrain 0.46.28.0 declares, the
// per-tool scopes over HTTP, the answer and error shapes, and what a
// "dropped connection" means on each transport. It never decides page
// semantics (package fakebrain does) and never exits the process by itself
// (the process hands it a Drop function).
package fakeserver

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/cgcat/cgcat/gbrain/gbraintest/internal/fakebrain"
)

// What the fake says about itself.
const (
	ServerName    = "gbrain"
	ServerVersion = "0.46.28.0"
	Protocol      = "2025-06-18"
)

// Params lists the parameters each tool accepts (as GBrain 0.46.28.0's tools
// declare them).
var Params = map[string][]string{
	"get_page":           {"slug", "fuzzy", "include_content", "include_deleted", "source_id"},
	"put_page":           {"slug", "content", "allow_empty"},
	"list_pages":         {"type", "tag", "limit", "offset", "updated_after", "sort", "include_deleted", "source_id"},
	"search":             {"query", "limit", "offset", "mode", "types", "snippet_chars"},
	"query":              {"query", "limit", "offset", "mode", "types", "snippet_chars", "source_id", "expand", "detail"},
	"delete_page":        {"slug"},
	"add_tag":            {"slug", "tag"},
	"remove_tag":         {"slug", "tag"},
	"get_tags":           {"slug"},
	"whoami":             {},
	"get_brain_identity": {},
	"sources_list":       {"include_archived"},
	"sources_add":        {"id", "name", "path", "url", "federated", "clone_dir"},
}

// toolScope is the scope each tool needs over HTTP (GBrain's op.scope).
var toolScope = map[string]string{
	"get_page": "read", "list_pages": "read", "search": "read", "query": "read", "get_tags": "read",
	"whoami": "read", "sources_list": "read", "get_brain_identity": "read",
	"put_page": "write", "delete_page": "write", "add_tag": "write", "remove_tag": "write",
	"sources_add": "sources_admin",
}

// Server is one fake GBrain: its state, its fault switches and the brain
// of a stdio (or in-process) connection.
type Server struct {
	Store    *fakebrain.Store
	Controls fakebrain.Controls
	// Registered are sources registered outside the state (the
	// environment's GBRAIN_FAKE_SOURCES).
	Registered []string
	// Brain is the brain a call runs against when the request carries none
	// (stdio and in-process: the server's source); HTTP binds one per
	// request to the caller's token.
	Brain *fakebrain.Brain
	// Drop ends the connection of a call of tool without an answer, before
	// or after applying it (when says which), where neither HTTP nor the
	// in-process transport can: the process says so on stderr and exits.
	Drop func(tool, when string)
}

type ctxKey int

const (
	brainKey ctxKey = iota
	dropKey
)

// withDrop lets a transport say how to drop the current call's connection.
func withDrop(ctx context.Context, drop func()) context.Context {
	return context.WithValue(ctx, dropKey, drop)
}

func (s *Server) brainFor(ctx context.Context) *fakebrain.Brain {
	if b, ok := ctx.Value(brainKey).(*fakebrain.Brain); ok {
		return b
	}
	return s.Brain
}

// MCP builds the mcp-go server with every tool.
func (s *Server) MCP() *server.MCPServer {
	hooks := &server.Hooks{}
	hooks.AddAfterInitialize(func(_ context.Context, _ any, _ *mcp.InitializeRequest, res *mcp.InitializeResult) {
		res.ProtocolVersion = Protocol
	})
	m := server.NewMCPServer(ServerName, ServerVersion, server.WithToolCapabilities(false), server.WithHooks(hooks))
	names := make([]string, 0, len(Params))
	for name := range Params {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		m.AddTool(mcp.NewTool(name, mcp.WithDescription("fake GBrain "+name)), s.handler(name))
	}
	return m
}

func (s *Server) count(tool string) {
	_ = s.Store.Update(func(st *fakebrain.State) error { st.Calls[tool]++; return nil })
}

func (s *Server) handler(tool string) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return s.handle(ctx, tool, req)
	}
}

// handle answers one tool call as GBrain does, with the faults the control
// file asks for: delays, holds, dropped connections, garbage answers.
func (s *Server) handle(ctx context.Context, tool string, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	b := s.brainFor(ctx)
	ctl, err := s.Controls.Read()
	if err != nil {
		return errorResult(&fakebrain.ToolError{Code: "internal_error", Message: err.Error()}), nil
	}
	ctl = s.wait(tool, ctl)
	args := req.GetArguments()
	extra, refused := checkParams(tool, args, ctl.StrictParams)
	if res := s.scopeRefusal(b, tool); res != nil {
		return res, nil
	}
	if slices.Contains(ctl.DropBeforeApply, tool) {
		s.count(tool)
		s.drop(ctx, tool, "before")
		return nil, fmt.Errorf("connection dropped")
	}
	var value any
	var more []string
	var opErr error
	err = s.Store.Update(func(st *fakebrain.State) error {
		st.Calls[tool]++
		if refused != nil {
			opErr = refused
			return nil
		}
		value, more, opErr = run(b, tool, st, args)
		return nil
	})
	if err != nil {
		return errorResult(&fakebrain.ToolError{Code: "database_error", Message: err.Error()}), nil
	}
	if slices.Contains(ctl.DropAfterApply, tool) {
		s.drop(ctx, tool, "after")
		return nil, fmt.Errorf("connection dropped")
	}
	if slices.Contains(ctl.Garbage, tool) {
		return mcp.NewToolResultText("<html>502 Bad Gateway</html> {\"slug\": "), nil
	}
	return toolResult(value, append(more, extra...), opErr), nil
}

// wait sleeps for the delays the control asks for and holds the call while
// the test holds its tool. It returns the control as last read.
func (s *Server) wait(tool string, ctl fakebrain.Control) fakebrain.Control {
	if ctl.DelayMs > 0 && (len(ctl.DelayTools) == 0 || slices.Contains(ctl.DelayTools, tool)) {
		// Deliberately not cancellable: the write lands even after the
		// client gave up, as a slow real server's would.
		time.Sleep(time.Duration(ctl.DelayMs) * time.Millisecond)
	}
	if d := ctl.DelaysMs[tool]; d > 0 {
		time.Sleep(time.Duration(d) * time.Millisecond)
	}
	for slices.Contains(ctl.HoldTools, tool) {
		// Held until the test releases it; not cancellable either.
		time.Sleep(5 * time.Millisecond)
		var err error
		if ctl, err = s.Controls.Read(); err != nil {
			break
		}
	}
	return ctl
}

// checkParams finds the arguments the tool does not take: GBrain warns
// about each (extra text contents), or with StrictParams refuses the call.
func checkParams(tool string, args map[string]any, strict bool) (extra []string, refused error) {
	var unknown []string
	for k := range args {
		if !slices.Contains(Params[tool], k) {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		if strict {
			return extra, &fakebrain.ToolError{Code: "invalid_params", Message: fmt.Sprintf("unknown parameter %q", k)}
		}
		extra = append(extra, fmt.Sprintf("warning: unknown parameter %q ignored. A future release rejects unknown parameters.", k))
	}
	return extra, nil
}

// drop ends the connection without an answer: HTTP or in-process through
// the request's context, stdio through s.Drop.
func (s *Server) drop(ctx context.Context, tool, when string) {
	if f, ok := ctx.Value(dropKey).(func()); ok {
		f() // HTTP or in-process: the connection ends without an answer
		return
	}
	if s.Drop != nil {
		s.Drop(tool, when)
	}
}

// scopeRefusal is GBrain's insufficient_scope answer (the call counted)
// when an HTTP caller's token lacks the tool's scope, as GBrain's
// per-operation scope check does; nil otherwise.
func (s *Server) scopeRefusal(b *fakebrain.Brain, tool string) *mcp.CallToolResult {
	if b.Caller == nil {
		return nil
	}
	need := toolScope[tool]
	if fakebrain.HasScope(b.Caller.Scopes, need) {
		return nil
	}
	s.count(tool)
	return compactError(map[string]any{"error": "insufficient_scope",
		"message": fmt.Sprintf("Operation %s requires '%s' scope", tool, need), "your_scopes": b.Caller.Scopes})
}

// toolResult is the answer to an applied call: the tool error, or the
// value as indented JSON followed by the extra text contents (warnings).
func toolResult(value any, extra []string, opErr error) *mcp.CallToolResult {
	if opErr != nil {
		te, ok := opErr.(*fakebrain.ToolError)
		if !ok {
			te = &fakebrain.ToolError{Code: "internal_error", Message: opErr.Error()}
		}
		return errorResult(te)
	}
	text, err := json.MarshalIndent(value, "", "  ")
	if err != nil {
		return errorResult(&fakebrain.ToolError{Code: "internal_error", Message: err.Error()})
	}
	res := mcp.NewToolResultText(string(text))
	for _, e := range extra {
		res.Content = append(res.Content, mcp.NewTextContent(e))
	}
	return res
}

func run(b *fakebrain.Brain, tool string, st *fakebrain.State, args map[string]any) (any, []string, error) {
	switch tool {
	case "get_page":
		v, err := b.GetPage(st, args)
		return v, nil, err
	case "put_page":
		v, err := b.PutPage(st, args)
		return v, nil, err
	case "list_pages":
		v, err := b.ListPages(st, args)
		return v, nil, err
	case "search":
		return b.Search(st, args, false)
	case "query":
		return b.Search(st, args, true)
	case "delete_page":
		v, err := b.DeletePage(st, args)
		return v, nil, err
	case "add_tag", "remove_tag":
		v, err := b.AddTag(st, args, tool == "add_tag")
		return v, nil, err
	case "get_tags":
		v, err := b.GetTags(st, args)
		return v, nil, err
	case "whoami":
		return whoami(b.Caller), nil, nil
	case "get_brain_identity":
		pages, chunks := 0, 0
		for _, p := range st.Pages {
			if p.DeletedAt == "" {
				pages++
				chunks += 1 + len(p.Body)/2000
			}
		}
		return map[string]any{"version": ServerVersion, "engine": "pglite", "page_count": pages, "chunk_count": chunks,
			"last_sync_iso": nil, "update_available": false, "latest_version": nil}, nil, nil
	case "sources_list":
		return b.SourcesList(st), nil, nil
	case "sources_add":
		v, err := b.SourcesAdd(st, args)
		return v, nil, err
	}
	return nil, nil, &fakebrain.ToolError{Code: "unknown_tool", Message: "Unknown tool: " + tool}
}

// whoami answers as GBrain's whoami op does for each transport.
func whoami(c *fakebrain.Caller) any {
	switch {
	case c == nil:
		return map[string]any{"transport": "stdio", "scopes": []string{}}
	case c.OAuth:
		return map[string]any{"transport": "oauth", "client_id": c.ClientID, "client_name": c.ClientName,
			"scopes": c.Scopes, "expires_at": c.ExpiresAt, "source_id": c.Source, "federated_read": c.Federated}
	}
	return map[string]any{"transport": "legacy", "token_name": c.TokenName, "scopes": c.Scopes, "expires_at": nil}
}

// compactError is an isError answer GBrain's HTTP layer writes with
// JSON.stringify (no indentation): insufficient_scope, unknown_operation.
func compactError(v map[string]any) *mcp.CallToolResult {
	b, _ := json.Marshal(v)
	return mcp.NewToolResultError(string(b))
}

func errorResult(te *fakebrain.ToolError) *mcp.CallToolResult {
	b, _ := json.MarshalIndent(te, "", "  ")
	return mcp.NewToolResultError(string(b))
}
