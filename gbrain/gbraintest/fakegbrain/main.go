// Command fakegbrain is a stand-in for `gbrain serve` (GBrain 0.46.28.0)
// for cgcat's tests: MCP over stdio (mcp-go's server), the tools cgcat uses,
// and the behaviour measured on that release — slugs lowercased on
// write only, re-serialised content that is a fixed point, add-only tags,
// frontmatter-id de-duplication, offset paging capped at 100, soft delete,
// JSON text results and isError JSON errors, source resolution from
// GBRAIN_SOURCE.
//
// `fakegbrain serve --http [--port N] [--bind ADDR] [--token-ttl S]
// [--public-url URL]` is `gbrain serve --http`: POST /mcp, stateless,
// answers framed as server-sent events, OAuth 2.1 bearer tokens (see
// http.go).
//
// Environment:
//
//	GBRAIN_FAKE_STATE    state file (required); shared by processes, survives restarts
//	GBRAIN_FAKE_READY    (--http) file the fake writes its base URL to once it listens
//	GBRAIN_FAKE_CONTROL  fault switches (see fakebrain.Control), re-read at every call
//	GBRAIN_FAKE_SOURCES  comma-separated registered sources besides "default"
//	GBRAIN_SOURCE        the source to write to, as in GBrain
//	GBRAIN_BRAIN_ID      the brain: "host" (or unset) is this state; any other
//	                     id is an unknown mount, and the fake exits at start as
//	                     GBrain does ("Unknown brain")
//	GBRAIN_FAKE_MEMORY   1: load the state once and keep it in memory (benchmarks;
//	                     see fakebrain.MemoryMode)
//	GBRAIN_FAKE_FORCE_SOURCE  fault: serve this source whatever GBRAIN_SOURCE says
//	                     (a server pinned to another source, as over HTTP)
//
// Calls are counted per tool in the state file.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/cgcat/cgcat/gbrain/gbraintest/internal/fakebrain"
)

const (
	serverName    = "gbrain"
	serverVersion = "0.46.28.0"
	protocol      = "2025-06-18"
)

// params lists the parameters each tool accepts (as GBrain 0.46.28.0's tools
// declare them).
var params = map[string][]string{
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

var (
	statePath   string
	controlPath string
	brain       *fakebrain.Brain
)

func main() {
	statePath = os.Getenv("GBRAIN_FAKE_STATE")
	controlPath = os.Getenv("GBRAIN_FAKE_CONTROL")
	if statePath == "" {
		fmt.Fprintln(os.Stderr, "fake gbrain: GBRAIN_FAKE_STATE is not set")
		os.Exit(2)
	}
	ctl, err := fakebrain.ReadControl(controlPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake gbrain:", err)
		os.Exit(2)
	}
	switch ctl.ExitAtStart {
	case "pglite":
		fmt.Fprintf(os.Stderr, "[gbrain] Error: GBrain's local database is already open through `gbrain serve` (pid %d). "+
			"PGLite cannot open it at the same time. Stop the other process, or use a Postgres-backed brain.\n", os.Getppid())
		os.Exit(1)
	case "crash":
		fmt.Fprintln(os.Stderr, "[gbrain] fatal: simulated crash at start-up")
		os.Exit(3)
	}
	if b := os.Getenv("GBRAIN_BRAIN_ID"); b != "" && b != "host" {
		fmt.Fprintf(os.Stderr, "[gbrain] Error: Unknown brain: %q. No enabled mount with id %q found. Available brain ids: (none registered)\n", b, b)
		os.Exit(1)
	}
	if ctl.StartDelayMs > 0 {
		time.Sleep(time.Duration(ctl.StartDelayMs) * time.Millisecond)
	}

	var registered []string
	for _, s := range strings.Split(os.Getenv("GBRAIN_FAKE_SOURCES"), ",") {
		if s = strings.TrimSpace(s); s != "" {
			registered = append(registered, s)
		}
	}
	httpMode := len(os.Args) > 2 && os.Args[1] == "serve" && slices.Contains(os.Args[2:], "--http")
	brain = &fakebrain.Brain{Source: resolveSource(), Registered: registered}
	if httpMode {
		// Over HTTP the token decides the source; GBRAIN_SOURCE means
		// nothing.
		brain.Source = "default"
	}
	cwd, _ := os.Getwd()
	if err := fakebrain.Update(statePath, func(st *fakebrain.State) error {
		st.Starts = append(st.Starts, fakebrain.Start{
			PID: os.Getpid(), Source: brain.Source, EnvSource: os.Getenv("GBRAIN_SOURCE"), EnvBrain: os.Getenv("GBRAIN_BRAIN_ID"),
			SkipHooks: os.Getenv("GBRAIN_SKIP_STARTUP_HOOKS"), Cwd: cwd, Args: os.Args[1:],
		})
		return nil
	}); err != nil {
		fmt.Fprintln(os.Stderr, "fake gbrain:", err)
		os.Exit(2)
	}

	hooks := &server.Hooks{}
	hooks.AddAfterInitialize(func(_ context.Context, _ any, _ *mcp.InitializeRequest, res *mcp.InitializeResult) {
		res.ProtocolVersion = protocol
	})
	s := server.NewMCPServer(serverName, serverVersion, server.WithToolCapabilities(false), server.WithHooks(hooks))
	names := make([]string, 0, len(params))
	for name := range params {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		s.AddTool(mcp.NewTool(name, mcp.WithDescription("fake GBrain "+name)), handler(name))
	}
	if httpMode {
		if err := serveHTTP(s, os.Args[2:], registered); err != nil {
			fmt.Fprintln(os.Stderr, "[gbrain] serve --http:", err)
			os.Exit(1)
		}
		return
	}
	fmt.Fprintf(os.Stderr, "[gbrain] %s serving MCP over stdio, source %s\n", serverVersion, brain.Source)
	if err := server.ServeStdio(s); err != nil {
		fmt.Fprintln(os.Stderr, "[gbrain] stdio:", err)
		os.Exit(1)
	}
}

// resolveSource follows GBrain: GBRAIN_SOURCE when well-formed (a malformed
// one is silently ignored), then a .gbrain-source file in the working
// directory or a parent, then "default".
func resolveSource() string {
	if s := os.Getenv("GBRAIN_FAKE_FORCE_SOURCE"); s != "" {
		return s
	}
	if s := os.Getenv("GBRAIN_SOURCE"); fakebrain.ValidSource(s) {
		return s
	}
	dir, err := os.Getwd()
	for err == nil {
		if b, rerr := os.ReadFile(filepath.Join(dir, ".gbrain-source")); rerr == nil {
			if s := strings.TrimSpace(string(b)); fakebrain.ValidSource(s) {
				return s
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return "default"
}

func handler(tool string) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		b := brainFor(ctx)
		ctl, err := fakebrain.ReadControl(controlPath)
		if err != nil {
			return errorResult(&fakebrain.ToolError{Code: "internal_error", Message: err.Error()}), nil
		}
		if ctl.DelayMs > 0 && (len(ctl.DelayTools) == 0 || slices.Contains(ctl.DelayTools, tool)) {
			// Deliberately not cancellable: the write lands even after the
			// client gave up, as a slow real server's would.
			time.Sleep(time.Duration(ctl.DelayMs) * time.Millisecond)
		}
		args := req.GetArguments()
		var extra []string
		var unknown []string
		for k := range args {
			if !slices.Contains(params[tool], k) {
				unknown = append(unknown, k)
			}
		}
		sort.Strings(unknown)
		var refused error
		for _, k := range unknown {
			if ctl.StrictParams {
				refused = &fakebrain.ToolError{Code: "invalid_params", Message: fmt.Sprintf("unknown parameter %q", k)}
				break
			}
			extra = append(extra, fmt.Sprintf("warning: unknown parameter %q ignored. A future release rejects unknown parameters.", k))
		}

		drop := func(when string) {
			fmt.Fprintf(os.Stderr, "[gbrain] fake fault: connection dropped %s applying %s\n", when, tool)
			if dropHTTP(ctx) {
				return // the HTTP connection was closed without an answer
			}
			os.Exit(2)
		}
		if b.Caller != nil {
			// HTTP: the token's scopes gate each tool, as GBrain's
			// per-operation scope check does.
			if need := toolScope[tool]; !fakebrain.HasScope(b.Caller.Scopes, need) {
				_ = fakebrain.Update(statePath, func(st *fakebrain.State) error { st.Calls[tool]++; return nil })
				return compactError(map[string]any{"error": "insufficient_scope",
					"message": fmt.Sprintf("Operation %s requires '%s' scope", tool, need), "your_scopes": b.Caller.Scopes}), nil
			}
		}
		if slices.Contains(ctl.DropBeforeApply, tool) {
			_ = fakebrain.Update(statePath, func(st *fakebrain.State) error { st.Calls[tool]++; return nil })
			drop("before")
			return nil, fmt.Errorf("connection dropped")
		}

		var value any
		var more []string
		var opErr error
		err = fakebrain.Update(statePath, func(st *fakebrain.State) error {
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
			drop("after")
			return nil, fmt.Errorf("connection dropped")
		}
		if slices.Contains(ctl.Garbage, tool) {
			return mcp.NewToolResultText("<html>502 Bad Gateway</html> {\"slug\": "), nil
		}
		if opErr != nil {
			te, ok := opErr.(*fakebrain.ToolError)
			if !ok {
				te = &fakebrain.ToolError{Code: "internal_error", Message: opErr.Error()}
			}
			return errorResult(te), nil
		}
		text, err := json.MarshalIndent(value, "", "  ")
		if err != nil {
			return errorResult(&fakebrain.ToolError{Code: "internal_error", Message: err.Error()}), nil
		}
		res := mcp.NewToolResultText(string(text))
		for _, e := range append(more, extra...) {
			res.Content = append(res.Content, mcp.NewTextContent(e))
		}
		return res, nil
	}
}

// toolScope is the scope each tool needs over HTTP (GBrain's op.scope).
var toolScope = map[string]string{
	"get_page": "read", "list_pages": "read", "search": "read", "query": "read", "get_tags": "read",
	"whoami": "read", "sources_list": "read", "get_brain_identity": "read",
	"put_page": "write", "delete_page": "write", "add_tag": "write", "remove_tag": "write",
	"sources_add": "sources_admin",
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
		return map[string]any{"version": serverVersion, "engine": "pglite", "page_count": pages, "chunk_count": chunks,
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
