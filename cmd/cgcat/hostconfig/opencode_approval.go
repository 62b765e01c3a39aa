package hostconfig

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// OpenCode decides two things about a tool from its config, both keyed by
// patterns of the tool's name (<server>_<tool>, "*" matching any run):
// "tools" ({"pattern": false} hides matching tools from the model; an
// agent's own "tools" is merged over the global one) and "permission"
// ("ask" or "deny"). Of several matching patterns the longest wins, as
// OpenCode's wildcard matcher orders them.

// opencodeMatch returns the value of the winning pattern of m for name.
func opencodeMatch(m map[string]any, name string) (pattern string, value any, ok bool) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if len(keys[i]) != len(keys[j]) {
			return len(keys[i]) < len(keys[j])
		}
		return keys[i] < keys[j]
	})
	for _, k := range keys {
		if wildcardMatch(k, name) {
			pattern, value, ok = k, m[k], true
		}
	}
	return pattern, value, ok
}

// wildcardMatch matches "*" (any run, also empty) and "?" (one character);
// every other character stands for itself (filepath.Match would treat "["
// and "\" specially).
func wildcardMatch(pattern, name string) bool {
	if pattern == "" {
		return name == ""
	}
	switch pattern[0] {
	case '*':
		for i := 0; i <= len(name); i++ {
			if wildcardMatch(pattern[1:], name[i:]) {
				return true
			}
		}
		return false
	case '?':
		return name != "" && wildcardMatch(pattern[1:], name[1:])
	}
	return name != "" && name[0] == pattern[0] && wildcardMatch(pattern[1:], name[1:])
}

// opencodeHidden returns the pattern of tools that hides name ("" when
// none does).
func opencodeHidden(tools map[string]any, name string) string {
	if p, v, ok := opencodeMatch(tools, name); ok && v == false {
		return p
	}
	return ""
}

func merged(global, agent map[string]any) map[string]any {
	out := make(map[string]any, len(global)+len(agent))
	for k, v := range global {
		out[k] = v
	}
	for k, v := range agent {
		out[k] = v
	}
	return out
}

func opencodeApproval(in ApprovalInput) []Finding {
	doc, _ := serverShape{}.decode(in.Src)
	fs := opencodeFilters(in, doc)
	perm, _ := doc["permission"].(map[string]any)
	for _, tool := range []string{ToolProjects, ToolResolve} {
		name := in.Name + "_" + tool
		pat, v, ok := opencodeMatch(perm, name)
		if !ok {
			continue
		}
		switch v {
		case "ask":
			return append(fs, found(Warn, fmt.Sprintf("set \"permission\": {%q: \"allow\"} in %s, or answer the prompts", pat, in.File), WillPrompt,
				"approval: OpenCode will ask before %s (permission %q is \"ask\")", name, pat))
		case "deny":
			return append(fs, found(Fail, fmt.Sprintf("remove %q from \"permission\" in %s", pat, in.File), "", "approval: OpenCode refuses %s (permission %q is \"deny\")", name, pat))
		}
	}
	return append(fs, found(OK, "", "", "approval: OpenCode runs MCP tools without asking (no permission rule names cgcat's tools)"))
}

// opencodeFilters checks the global and per-agent "tools" filters: a tool
// they hide is not in the model's tool list at all.
func opencodeFilters(in ApprovalInput, doc map[string]any) []Finding {
	global, _ := doc["tools"].(map[string]any)
	agents, _ := doc["agent"].(map[string]any)
	names := make([]string, 0, len(agents))
	for n := range agents {
		names = append(names, n)
	}
	slices.Sort(names)
	var fs []Finding
	for _, tool := range []string{ToolProjects, ToolResolve} {
		name := in.Name + "_" + tool
		var hiddenIn, seenIn []string
		for _, a := range names {
			cfg, _ := agents[a].(map[string]any)
			own, _ := cfg["tools"].(map[string]any)
			if p := opencodeHidden(merged(global, own), name); p != "" {
				hiddenIn = append(hiddenIn, fmt.Sprintf("%s (%q)", a, p))
			} else {
				seenIn = append(seenIn, a)
			}
		}
		if p := opencodeHidden(global, name); p != "" {
			what := fmt.Sprintf("OpenCode hides %s from the model: \"tools\" {%q: false} in %s", name, p, in.File)
			if len(seenIn) > 0 {
				fs = append(fs, found(Warn, fmt.Sprintf("remove %q from \"tools\" (or set it to true) if every agent should find projects", p), "tool_hidden",
					"%s; only the agents %s turn it back on", what, strings.Join(seenIn, ", ")))
			} else {
				fs = append(fs, found(Fail, fmt.Sprintf("remove %q from \"tools\" in %s (or set it to true)", p, in.File), "tool_hidden", "%s, for every agent", what))
			}
			continue
		}
		if len(hiddenIn) > 0 {
			fs = append(fs, found(Warn, fmt.Sprintf("remove the pattern from agent.<name>.tools in %s if those agents should find projects", in.File), "tool_hidden",
				"OpenCode hides %s from the agents %s (agent.<name>.tools)", name, strings.Join(hiddenIn, ", ")))
		}
	}
	for _, sub := range []string{"agent", "agents"} {
		if dir := filepath.Join(filepath.Dir(in.File), sub); isDir(dir) {
			fs = append(fs, found(Info, "", "", "not checked: the tool filters of agents defined in %s (Markdown front matter)", dir))
		}
	}
	return fs
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
