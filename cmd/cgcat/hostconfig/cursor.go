package hostconfig

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Cursor is the Cursor editor (and its `agent` CLI, which reads the same
// file). Its user MCP servers are the "mcpServers" object of
// ~/.cursor/mcp.json (cursor.com/docs/mcp; a project's .cursor/mcp.json is
// merged over it): a stdio server is {"type": "stdio", "command": ABS,
// "args": [...], "env": {...}}, started without a shell with the
// environment Cursor itself runs in.
const Cursor = "cursor"

// Cursor's directory and files in the home directory.
const (
	CursorDir         = ".cursor"
	CursorMCPFile     = "mcp.json"
	cursorPermissions = "permissions.json"
)

var _ = register(&Host{
	Name: Cursor, Title: "Cursor", order: 50,
	ServersKey: "mcpServers",
	FileHelp:   "Cursor's user MCP servers: ~/.cursor/mcp.json, mcpServers.NAME (the editor and\nits agent CLI read it)",
	ConfigFile: func(env Env, _ string) (string, error) {
		if env.Home == "" {
			return "", fmt.Errorf("cannot find Cursor's MCP config: no home directory")
		}
		return filepath.Join(env.Home, CursorDir, CursorMCPFile), nil
	},
	DirMode:      0o700,
	Upsert:       UpsertCursor,
	Remove:       RemoveCursor,
	Leftover:     jsonLeftover("mcpServers"),
	Snippet:      jsonSnippet("mcpServers", cursorFields),
	SnippetWhere: "merge into the \"mcpServers\" object of %s",
	PromptPolicy: "Cursor asks before each MCP tool call unless auto-run or an allowlist in its own settings lets the tool run; cgcat writes no rule for it",
	Launch: LaunchPolicy{Timeout: 30 * time.Second,
		TimeoutSource: "Cursor documents no start-up limit; doctor allows 30 s"},
	CodeGraphAdd: `add "codegraph": {"type": "stdio", "command": "codegraph", "args": ["serve", "--mcp"]} to the "mcpServers" object of ~/.cursor/mcp.json`,
	EntryChecks: func(s Server, at EntryAt) ([]Finding, bool) {
		if t, _ := s.Raw["type"].(string); t != "" && t != "stdio" {
			return []Finding{found(Fail, at.Reinstall, "", "%s has type %q; cgcat is a stdio server", at.Where, t)}, false
		}
		return nil, true
	},
	Approval: cursorApproval,
})

func cursorFields(e Entry) []field {
	return []field{{"type", "stdio"}, {"command", e.Command}, {"args", e.args()}}
}

var cursorHost = &jsonHost{
	host:   Cursor,
	key:    "mcpServers",
	fields: cursorFields,
	newFile: func(_ Entry, entry string) string {
		return "{\n  \"mcpServers\": {\n    " + entry + "\n  }\n}\n"
	},
}

// UpsertCursor adds or replaces our mcpServers.<name> entry in Cursor's
// mcp.json, with the guarantees of UpsertOpenCode.
func UpsertCursor(src []byte, e Entry, force bool) (out []byte, changed bool, err error) {
	return cursorHost.upsert(src, e, force)
}

// RemoveCursor removes our mcpServers.<name> entry from mcp.json.
func RemoveCursor(src []byte, name string) (out []byte, changed bool, err error) {
	return cursorHost.remove(src, name)
}

// cursorApproval says what cgcat cannot tell: Cursor keeps whether an MCP
// call asks in its own settings (auto-run, the in-app allowlist, team
// rules), which no file cgcat may read shows in full. The one file it can
// read, ~/.cursor/permissions.json, is named when it mentions the entry.
func cursorApproval(in ApprovalInput) []Finding {
	what := "approval: not checked: Cursor keeps whether MCP calls ask in its own settings (auto-run and the MCP allowlist in Cursor Settings), which cgcat cannot read"
	if in.Env.Home == "" {
		return []Finding{found(Info, "", "", "%s", what)}
	}
	perm := filepath.Join(in.Env.Home, CursorDir, cursorPermissions)
	b, err := os.ReadFile(perm)
	if err != nil {
		return []Finding{found(Info, "", "", "%s", what)}
	}
	doc, err := serverShape{}.decode(b)
	if err != nil {
		return []Finding{found(Info, "", "", "%s; %s does not parse: %v", what, perm, err)}
	}
	var ours []string
	for _, s := range strList(doc["mcpAllowlist"]) {
		if strings.Contains(s, in.Name) {
			ours = append(ours, s)
		}
	}
	if len(ours) == 0 {
		return []Finding{found(Info, "", "", "%s; the mcpAllowlist of %s names no tool of %q", what, perm, in.Name)}
	}
	return []Finding{found(Info, "", "", "%s; the mcpAllowlist of %s has %s (it overrides the in-app allowlist)", what, perm, strings.Join(ours, ", "))}
}
