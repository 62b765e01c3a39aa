package doctor

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cgcat/cgcat/cmd/cgcat/hostconfig"
	"github.com/tailscale/hujson"
)

// promptChecks says whether the host will ask before running cgcat's tools
// (and CodeGraph's explore), from the rules that host really applies
// (measured: Codex honours readOnlyHint; OpenCode asks only when its
// permission settings say so; Claude Code and Gemini CLI ignore
// readOnlyHint and need an allow rule).
func promptChecks(in HostInput, src []byte, servers []hostconfig.Server, ours hostconfig.Server) []Check {
	cg := hostconfig.DefaultCodeGraphServer
	if s, ok := hostconfig.FindCodeGraph(servers); ok {
		cg = s.Name
	}
	switch in.Host {
	case hostconfig.Codex:
		return []Check{Okf("approval: Codex runs cgcat's tools without asking (they are annotated readOnlyHint)")}
	case hostconfig.OpenCode:
		return opencodePrompt(in, src)
	case hostconfig.Claude:
		return claudePrompt(in, cg)
	}
	return geminiPrompt(in, ours, servers, cg)
}

func willPrompt(fix, format string, a ...any) Check {
	c := Warnf(fix, format, a...)
	c.Code = "will_prompt"
	return c
}

func readJSONC(path string) (map[string]any, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	std, err := hujson.Standardize(b)
	if err != nil {
		return nil, err
	}
	doc := map[string]any{}
	return doc, json.Unmarshal(std, &doc)
}

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

// opencodePrompt reads OpenCode's "permission" object: a key matching our
// tool names ("*" globs) with "ask" or "deny" makes calls ask or fail.
func opencodePrompt(in HostInput, src []byte) []Check {
	doc := map[string]any{}
	if std, err := hujson.Standardize(slices.Clone(src)); err == nil {
		_ = json.Unmarshal(std, &doc)
	}
	perm, _ := doc["permission"].(map[string]any)
	for _, tool := range []string{hostconfig.ToolProjects, hostconfig.ToolResolve} {
		name := in.Name + "_" + tool
		for pat, v := range perm {
			if ok, _ := filepath.Match(pat, name); !ok {
				continue
			}
			switch v {
			case "ask":
				return []Check{willPrompt(fmt.Sprintf("set \"permission\": {%q: \"allow\"} in %s, or answer the prompts", pat, p(in.File)),
					"approval: OpenCode will ask before %s (permission %q is \"ask\")", name, p(pat))}
			case "deny":
				return []Check{Failf(fmt.Sprintf("remove %q from \"permission\" in %s", pat, p(in.File)), "approval: OpenCode refuses %s (permission %q is \"deny\")", name, p(pat))}
			}
		}
	}
	return []Check{Okf("approval: OpenCode runs MCP tools without asking (no permission rule names cgcat's tools)")}
}

// claudeAllows returns the rule of rules that allows tool of server.
func claudeAllows(rules []string, server, tool string) string {
	for _, r := range rules {
		switch r {
		case hostconfig.ClaudeToolName(server, tool), "mcp__" + server, "mcp__" + server + "__*":
			return r
		}
	}
	return ""
}

func claudePrompt(in HostInput, cg string) []Check {
	var allow, deny []string
	if doc, err := readJSONC(in.AllowFile); err == nil {
		perm, _ := doc["permissions"].(map[string]any)
		allow, deny = strList(perm["allow"]), strList(perm["deny"])
	}
	var cs []Check
	var missing, via []string
	for _, tool := range []string{hostconfig.ToolProjects, hostconfig.ToolResolve} {
		if r := claudeAllows(deny, in.Name, tool); r != "" {
			cs = append(cs, Failf("remove "+r+" from permissions.deny in "+p(in.AllowFile), "approval: Claude Code refuses %s (permissions.deny %s)", hostconfig.ClaudeToolName(in.Name, tool), p(r)))
		}
		if r := claudeAllows(allow, in.Name, tool); r != "" {
			via = append(via, r)
		} else {
			missing = append(missing, hostconfig.ClaudeToolName(in.Name, tool))
		}
	}
	if len(missing) > 0 {
		cs = append(cs, willPrompt("cgcat install claude --allow-tools (adds exactly "+strings.Join(hostconfig.ClaudeAllowRules(in.Name), ", ")+" to permissions.allow)",
			"approval: Claude Code will ask before every call of %s (it ignores readOnlyHint; `claude -p` refuses the call): no allow rule in %s", strings.Join(missing, ", "), p(in.AllowFile)))
	} else {
		cs = append(cs, Okf("approval: Claude Code runs cgcat's tools without asking (permissions.allow %s in %s)", p(strings.Join(slices.Compact(via), ", ")), p(in.AllowFile)))
	}
	if claudeAllows(allow, cg, hostlaunchExplore) == "" {
		cs = append(cs, willPrompt(fmt.Sprintf("add %q to permissions.allow in %s if you want CodeGraph's calls unattended", hostconfig.ClaudeToolName(cg, hostlaunchExplore), p(in.AllowFile)),
			"approval: Claude Code will ask before every call of %s too (CodeGraph's tool)", hostconfig.ClaudeToolName(cg, hostlaunchExplore)))
	}
	return cs
}

const hostlaunchExplore = "codegraph_explore"

// geminiAllows reports whether Gemini CLI runs tool of server unattended:
// the entry's trust, tools.allowed (deprecated), or a user policy file
// allowing it.
func geminiAllows(in HostInput, settings map[string]any, s *hostconfig.Server, server, tool string) string {
	if s != nil {
		if t, _ := s.Raw["trust"].(bool); t {
			return fmt.Sprintf("mcpServers.%s.trust", server)
		}
	}
	tools, _ := settings["tools"].(map[string]any)
	if slices.Contains(strList(tools["allowed"]), hostconfig.GeminiToolName(server, tool)) {
		return "tools.allowed"
	}
	dir := filepath.Dir(in.AllowFile)
	files, _ := filepath.Glob(filepath.Join(dir, "*.toml"))
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

func geminiPrompt(in HostInput, ours hostconfig.Server, servers []hostconfig.Server, cg string) []Check {
	settings, _ := readJSONC(in.File)
	var cs []Check
	if via := geminiAllows(in, settings, &ours, in.Name, hostconfig.ToolProjects); via != "" && geminiAllows(in, settings, &ours, in.Name, hostconfig.ToolResolve) != "" {
		cs = append(cs, Okf("approval: Gemini CLI runs cgcat's tools without asking (%s)", p(via)))
	} else {
		cs = append(cs, willPrompt("cgcat install gemini --allow-tools (writes "+p(in.AllowFile)+", allowing exactly cgcat's two tools)",
			"approval: Gemini CLI will ask before every call of cgcat's tools (it ignores readOnlyHint), and `gemini -p` does not offer them at all"))
	}
	var cgServer *hostconfig.Server
	for i := range servers {
		if servers[i].Name == cg {
			cgServer = &servers[i]
		}
	}
	if geminiAllows(in, settings, cgServer, cg, hostlaunchExplore) == "" {
		cs = append(cs, willPrompt(fmt.Sprintf("allow it with a policy rule (mcpName = %q, toolName = %q, decision = \"allow\") in %s if you want CodeGraph's calls unattended", cg, hostlaunchExplore, p(filepath.Dir(in.AllowFile))),
			"approval: Gemini CLI will ask before every call of %s too (CodeGraph's tool), and `gemini -p` does not offer it", hostconfig.GeminiToolName(cg, hostlaunchExplore)))
	}
	return cs
}
