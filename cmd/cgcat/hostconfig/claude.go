package hostconfig

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Claude Code keeps its user-scope MCP servers (what `claude mcp add --scope
// user` writes, measured with 2.1.197 and 2.1.332) in the top-level
// "mcpServers" object of .claude.json, and its permission rules in
// settings.json. Both live in $CLAUDE_CONFIG_DIR when it is set; otherwise
// .claude.json is in the home directory and settings.json in ~/.claude.
const (
	ClaudeMCPFile      = ".claude.json"
	ClaudeSettingsFile = "settings.json"
)

// Claude is Claude Code.
const Claude = "claude"

var _ = register(&Host{
	Name: Claude, Title: "Claude Code", order: 30,
	ServersKey: "mcpServers",
	FileHelp:   "Claude Code's user MCP servers: ~/.claude.json (or $CLAUDE_CONFIG_DIR/.claude.json),\nmcpServers.NAME, as \"claude mcp add --scope user\" writes it",
	ConfigFile: func(env Env, _ string) (string, error) {
		if env.get("CLAUDE_CONFIG_DIR") == "" && env.Home == "" {
			return "", fmt.Errorf("cannot find Claude Code's config: no $CLAUDE_CONFIG_DIR and no home directory")
		}
		mcp, _ := ClaudePaths(env.get("CLAUDE_CONFIG_DIR"), env.Home)
		return mcp, nil
	},
	DirMode:      0o700,
	Upsert:       UpsertClaude,
	Remove:       RemoveClaude,
	Leftover:     jsonLeftover("mcpServers"),
	Snippet:      jsonSnippet("mcpServers", claudeFields),
	SnippetWhere: "merge into the \"mcpServers\" object of %s",
	Allow: &AllowRule{
		File: func(env Env, _ string) (string, error) {
			if env.get("CLAUDE_CONFIG_DIR") == "" && env.Home == "" {
				return "", fmt.Errorf("cannot find Claude Code's settings: no $CLAUDE_CONFIG_DIR and no home directory")
			}
			_, settings := ClaudePaths(env.get("CLAUDE_CONFIG_DIR"), env.Home)
			return settings, nil
		},
		Describe: func(name string) string { return "permissions.allow " + strings.Join(ClaudeAllowRules(name), ", ") },
		Path:     ClaudeAllowPath,
		Edit: func(before []byte, name string, add bool) ([]byte, error) {
			edit := RemoveFromList
			if add {
				edit = AddToList
			}
			after, _, err := edit(before, ClaudeAllowPath, ClaudeAllowRules(name))
			return after, err
		},
		Leftover: func(src []byte) bool {
			doc, err := serverShape{}.decode(src)
			perm, _ := doc["permissions"].(map[string]any)
			allow, _ := perm["allow"].([]any)
			return err == nil && (len(doc) == 0 || (len(doc) == 1 && len(perm) == 1 && allow != nil && len(allow) == 0))
		},
	},
	PromptPolicy: "Claude Code ignores readOnlyHint: without an allow rule it asks before every call, and `claude -p` refuses the call",
	Launch:       LaunchPolicy{Timeout: 30 * time.Second, TimeoutSource: "Claude Code's MCP_TIMEOUT default"},
	CodeGraphAdd: "claude mcp add --scope user codegraph -- codegraph serve --mcp",
	EntryChecks: func(s Server, at EntryAt) ([]Finding, bool) {
		if t, _ := s.Raw["type"].(string); t != "" && t != "stdio" {
			return []Finding{found(Fail, at.Reinstall, "", "%s has type %q; cgcat is a stdio server", at.Where, t)}, false
		}
		return nil, true
	},
	Approval: claudeApproval,
})

// ClaudePaths returns Claude Code's user MCP file and user settings file.
// configDir is $CLAUDE_CONFIG_DIR ("" when unset); home the home directory.
func ClaudePaths(configDir, home string) (mcpFile, settingsFile string) {
	if configDir != "" {
		return filepath.Join(configDir, ClaudeMCPFile), filepath.Join(configDir, ClaudeSettingsFile)
	}
	return filepath.Join(home, ClaudeMCPFile), filepath.Join(home, ".claude", ClaudeSettingsFile)
}

// claudeFields is our mcpServers.<name> object. alwaysLoad keeps the two
// tools in the model's tool list: Claude Code otherwise defers MCP tools
// behind its ToolSearch, and the model sees only their names (measured:
// CodeGraph's own installer sets it too).
func claudeFields(e Entry) []field {
	return []field{{"type", "stdio"}, {"command", e.Command}, {"args", e.args()}, {"alwaysLoad", true}}
}

var claudeHost = &jsonHost{
	host:   "claude",
	key:    "mcpServers",
	fields: claudeFields,
	newFile: func(_ Entry, entry string) string {
		return "{\n  \"mcpServers\": {\n    " + entry + "\n  }\n}\n"
	},
}

// UpsertClaude adds or replaces our mcpServers.<name> entry in Claude Code's
// .claude.json, with the guarantees of UpsertOpenCode.
func UpsertClaude(src []byte, e Entry, force bool) (out []byte, changed bool, err error) {
	return claudeHost.upsert(src, e, force)
}

// RemoveClaude removes our mcpServers.<name> entry from .claude.json.
func RemoveClaude(src []byte, name string) (out []byte, changed bool, err error) {
	return claudeHost.remove(src, name)
}

// ClaudeToolName is the name Claude Code gives an MCP tool, in tool lists
// and in permission rules.
func ClaudeToolName(server, tool string) string { return "mcp__" + server + "__" + tool }

// ClaudeAllowPath is where Claude Code's settings.json keeps allow rules.
var ClaudeAllowPath = []string{"permissions", "allow"}

// ClaudeAllowRules are the narrowest permission rules that let Claude Code
// run our two tools without asking: exactly these two tool names. Claude
// Code ignores readOnlyHint: without a rule, every call asks for approval
// and `claude -p` refuses it.
func ClaudeAllowRules(name string) []string {
	return []string{ClaudeToolName(name, ToolProjects), ClaudeToolName(name, ToolResolve)}
}

// claudeAllows returns the rule of rules that allows tool of server.
func claudeAllows(rules []string, server, tool string) string {
	for _, r := range rules {
		switch r {
		case ClaudeToolName(server, tool), "mcp__" + server, "mcp__" + server + "__*":
			return r
		}
	}
	return ""
}

// claudeApproval reads Claude Code's permissions.allow and deny: it
// ignores readOnlyHint, so a call runs without asking only when a rule
// allows it.
func claudeApproval(in ApprovalInput) []Finding {
	var allow, deny []string
	if b, err := os.ReadFile(in.AllowFile); err == nil {
		if doc, err := (serverShape{}).decode(b); err == nil {
			perm, _ := doc["permissions"].(map[string]any)
			allow, deny = strList(perm["allow"]), strList(perm["deny"])
		}
	}
	var fs []Finding
	var missing, via []string
	for _, tool := range []string{ToolProjects, ToolResolve} {
		if r := claudeAllows(deny, in.Name, tool); r != "" {
			fs = append(fs, found(Fail, "remove "+r+" from permissions.deny in "+in.AllowFile, "", "approval: Claude Code refuses %s (permissions.deny %s)", ClaudeToolName(in.Name, tool), r))
		}
		if r := claudeAllows(allow, in.Name, tool); r != "" {
			via = append(via, r)
		} else {
			missing = append(missing, ClaudeToolName(in.Name, tool))
		}
	}
	if len(missing) > 0 {
		fs = append(fs, found(Warn, "cgcat install claude --allow-tools (adds exactly "+strings.Join(ClaudeAllowRules(in.Name), ", ")+" to permissions.allow)", WillPrompt,
			"approval: Claude Code will ask before every call of %s (it ignores readOnlyHint; `claude -p` refuses the call): no allow rule in %s", strings.Join(missing, ", "), in.AllowFile))
	} else {
		fs = append(fs, found(OK, "", "", "approval: Claude Code runs cgcat's tools without asking (permissions.allow %s in %s)", strings.Join(slices.Compact(via), ", "), in.AllowFile))
	}
	if claudeAllows(allow, in.CodeGraph, ExploreTool) == "" {
		fs = append(fs, found(Warn, fmt.Sprintf("add %q to permissions.allow in %s if you want CodeGraph's calls unattended", ClaudeToolName(in.CodeGraph, ExploreTool), in.AllowFile), WillPrompt,
			"approval: Claude Code will ask before every call of %s too (CodeGraph's tool)", ClaudeToolName(in.CodeGraph, ExploreTool)))
	}
	return fs
}

// ExploreTool is CodeGraph's tool that cgcat hands a projectPath to.
const ExploreTool = "codegraph_explore"

func strList(v any) []string {
	l, _ := v.([]any)
	var out []string
	for _, x := range l {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
