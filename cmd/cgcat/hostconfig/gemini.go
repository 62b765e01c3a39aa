package hostconfig

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Gemini CLI keeps its user MCP servers in the "mcpServers" object of
// settings.json in its directory: $GEMINI_CLI_HOME/.gemini when that is set,
// else ~/.gemini. User policy rules are TOML files in its policies/.
const (
	GeminiDir          = ".gemini"
	GeminiSettingsFile = "settings.json"
	GeminiPoliciesDir  = "policies"
)

// GeminiPaths returns Gemini CLI's user settings file and the policy file
// cgcat owns for the server called name. cliHome is $GEMINI_CLI_HOME (""
// when unset); home the home directory.
func GeminiPaths(cliHome, home, name string) (settingsFile, policyFile string) {
	base := home
	if cliHome != "" {
		base = cliHome
	}
	dir := filepath.Join(base, GeminiDir)
	return filepath.Join(dir, GeminiSettingsFile), filepath.Join(dir, GeminiPoliciesDir, "cgcat-"+name+".toml")
}

func geminiFields(e Entry) []field {
	return []field{{"command", e.Command}, {"args", e.args()}}
}

var geminiHost = &jsonHost{
	host:   "gemini",
	key:    "mcpServers",
	fields: geminiFields,
	newFile: func(_ Entry, entry string) string {
		return "{\n  \"mcpServers\": {\n    " + entry + "\n  }\n}\n"
	},
}

// UpsertGemini adds or replaces our mcpServers.<name> entry in Gemini CLI's
// settings.json, with the guarantees of UpsertOpenCode.
func UpsertGemini(src []byte, e Entry, force bool) (out []byte, changed bool, err error) {
	return geminiHost.upsert(src, e, force)
}

// RemoveGemini removes our mcpServers.<name> entry from settings.json.
func RemoveGemini(src []byte, name string) (out []byte, changed bool, err error) {
	return geminiHost.remove(src, name)
}

// GeminiToolName is the name Gemini CLI gives an MCP tool.
func GeminiToolName(server, tool string) string { return "mcp_" + server + "_" + tool }

// geminiPolicyMarker starts every policy file cgcat writes; uninstall
// removes only a file that carries it.
const geminiPolicyMarker = "# Written by cgcat install gemini --allow-tools."

// GeminiPolicy is the policy file that lets Gemini CLI run exactly our two
// tools of the server called name without asking. Gemini CLI ignores
// readOnlyHint: without a rule it asks before each call, and in `gemini -p`
// it does not offer the tools to the model at all.
func GeminiPolicy(name string) string {
	return fmt.Sprintf(`%s
# It lets Gemini CLI run cgcat's two read-only catalog tools of the MCP
# server %q without asking; `+"`cgcat uninstall gemini`"+` removes it.
[[rule]]
mcpName = %s
toolName = [%s, %s]
decision = "allow"
priority = 100
`, geminiPolicyMarker, name, tomlString(name), tomlString(ToolProjects), tomlString(ToolResolve))
}

// IsGeminiPolicy reports whether a policy file's content was written by
// cgcat (and so may be replaced or removed by it).
func IsGeminiPolicy(content []byte) bool {
	return strings.HasPrefix(string(content), geminiPolicyMarker)
}
