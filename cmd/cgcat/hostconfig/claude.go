package hostconfig

import "path/filepath"

// Claude Code keeps its user-scope MCP servers (what `claude mcp add --scope
// user` writes, measured with 2.1.197 and 2.1.332) in the top-level
// "mcpServers" object of .claude.json, and its permission rules in
// settings.json. Both live in $CLAUDE_CONFIG_DIR when it is set; otherwise
// .claude.json is in the home directory and settings.json in ~/.claude.
const (
	ClaudeMCPFile      = ".claude.json"
	ClaudeSettingsFile = "settings.json"
)

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
