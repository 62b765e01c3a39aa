package hostconfig

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Gemini CLI keeps its user MCP servers in the "mcpServers" object of
// settings.json in its directory: $GEMINI_CLI_HOME/.gemini when that is set,
// else ~/.gemini. User policy rules are TOML files in its policies/.
const (
	GeminiDir          = ".gemini"
	GeminiSettingsFile = "settings.json"
	GeminiPoliciesDir  = "policies"
)

// Gemini is Gemini CLI.
const Gemini = "gemini"

var _ = register(&Host{
	Name: Gemini, Title: "Gemini CLI", order: 40,
	ServersKey: "mcpServers",
	FileHelp:   "Gemini CLI's ~/.gemini/settings.json (or $GEMINI_CLI_HOME/.gemini): mcpServers.NAME",
	ConfigFile: func(env Env, _ string) (string, error) {
		dir, err := geminiDir(env)
		return filepath.Join(dir, GeminiSettingsFile), err
	},
	DirMode:      0o700,
	Upsert:       UpsertGemini,
	Remove:       RemoveGemini,
	Leftover:     jsonLeftover("mcpServers"),
	Snippet:      jsonSnippet("mcpServers", geminiFields),
	SnippetWhere: "merge into the \"mcpServers\" object of %s",
	shape:        serverShape{timeout: timeoutKey("timeout", time.Millisecond)},
	Allow: &AllowRule{
		File: func(env Env, name string) (string, error) {
			dir, err := geminiDir(env)
			return filepath.Join(dir, GeminiPoliciesDir, "cgcat-"+name+".toml"), err
		},
		Describe: func(name string) string {
			return fmt.Sprintf("a policy rule allowing %s and %s of server %q", ToolProjects, ToolResolve, name)
		},
		Edit: func(before []byte, name string, add bool) ([]byte, error) {
			if before != nil && !IsGeminiPolicy(before) {
				return nil, fmt.Errorf("it exists and was not written by cgcat; move it aside (or rename the entry with --name), then run again")
			}
			if add {
				return []byte(GeminiPolicy(name)), nil
			}
			return nil, nil // the file is cgcat's as a whole
		},
	},
	PromptPolicy: "Gemini CLI ignores readOnlyHint: without an allow rule it asks before every call, and `gemini -p` does not offer the tools at all",
	Launch:       LaunchPolicy{Timeout: 30 * time.Second, TimeoutSource: "Gemini CLI's default"},
	CodeGraphAdd: "gemini mcp add --scope user codegraph codegraph serve --mcp",
	EntryChecks: func(s Server, at EntryAt) (fs []Finding, ok bool) {
		for _, key := range []string{"includeTools", "excludeTools"} {
			list, _ := s.Raw[key].([]any)
			for _, t := range []string{ToolProjects, ToolResolve} {
				if (key == "includeTools" && list != nil && !containsAny(list, t)) || (key == "excludeTools" && containsAny(list, t)) {
					fs = append(fs, found(Fail, fmt.Sprintf("fix %s, or: %s", key, at.Reinstall), "", "%s hides %s (%s)", at.Where, t, key))
				}
			}
		}
		return fs, true
	},
	Approval: geminiApproval,
})

// geminiDir is $GEMINI_CLI_HOME/.gemini, else ~/.gemini.
func geminiDir(env Env) (string, error) {
	base := env.get("GEMINI_CLI_HOME")
	if base == "" {
		if env.Home == "" {
			return "", fmt.Errorf("cannot find Gemini CLI's settings: no $GEMINI_CLI_HOME and no home directory")
		}
		base = env.Home
	}
	return filepath.Join(base, GeminiDir), nil
}

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

// geminiAllows reports whether Gemini CLI runs tool of server unattended:
// the entry's trust, tools.allowed (deprecated), or a user policy file
// allowing it.
func geminiAllows(in ApprovalInput, settings map[string]any, s *Server, server, tool string) string {
	if s != nil {
		if t, _ := s.Raw["trust"].(bool); t {
			return fmt.Sprintf("mcpServers.%s.trust", server)
		}
	}
	tools, _ := settings["tools"].(map[string]any)
	if slices.Contains(strList(tools["allowed"]), GeminiToolName(server, tool)) {
		return "tools.allowed"
	}
	files, _ := filepath.Glob(filepath.Join(filepath.Dir(in.AllowFile), "*.toml"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		t := string(b)
		if strings.Contains(t, `mcpName = "`+server+`"`) && strings.Contains(t, `"`+tool+`"`) && strings.Contains(t, `decision = "allow"`) {
			return "policy " + f
		}
	}
	return ""
}

func geminiApproval(in ApprovalInput) []Finding {
	settings, _ := serverShape{}.decode(in.Src)
	ours := in.Ours
	var fs []Finding
	if via := geminiAllows(in, settings, &ours, in.Name, ToolProjects); via != "" && geminiAllows(in, settings, &ours, in.Name, ToolResolve) != "" {
		fs = append(fs, found(OK, "", "", "approval: Gemini CLI runs cgcat's tools without asking (%s)", via))
	} else {
		fs = append(fs, found(Warn, "cgcat install gemini --allow-tools (writes "+in.AllowFile+", allowing exactly cgcat's two tools)", WillPrompt,
			"approval: Gemini CLI will ask before every call of cgcat's tools (it ignores readOnlyHint), and `gemini -p` does not offer them at all"))
	}
	var cg *Server
	for i := range in.Servers {
		if in.Servers[i].Name == in.CodeGraph {
			cg = &in.Servers[i]
		}
	}
	if geminiAllows(in, settings, cg, in.CodeGraph, ExploreTool) == "" {
		fs = append(fs, found(Warn, fmt.Sprintf("allow it with a policy rule (mcpName = %q, toolName = %q, decision = \"allow\") in %s if you want CodeGraph's calls unattended", in.CodeGraph, ExploreTool, filepath.Dir(in.AllowFile)), WillPrompt,
			"approval: Gemini CLI will ask before every call of %s too (CodeGraph's tool), and `gemini -p` does not offer it", GeminiToolName(in.CodeGraph, ExploreTool)))
	}
	return fs
}
