package hostconfig

import (
	"slices"
	"strings"
	"testing"
)

func approvalOf(t *testing.T, host, src string, readOnly bool) []Finding {
	t.Helper()
	h, _ := ByName(host)
	servers, err := h.ReadServers([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var ours Server
	for _, s := range servers {
		if s.Name == DefaultName {
			ours = s
		}
	}
	return h.Approval(ApprovalInput{File: "/cfg", Src: []byte(src), Servers: servers, Ours: ours, Name: DefaultName,
		CodeGraph: DefaultCodeGraphServer, ReadOnly: readOnly})
}

func worst(fs []Finding) Level {
	l := Info
	for _, f := range fs {
		l = max(l, f.Level)
	}
	return l
}

func hasCode(fs []Finding, code string) bool {
	return slices.ContainsFunc(fs, func(f Finding) bool { return f.Code == code })
}

// TestOpenCodeToolFilters: a "tools" pattern that turns cgcat's tools off
// hides them from the model (✗ globally, ! when some agents still see
// them or when only some agents hide them); the longest matching pattern
// wins, as in OpenCode.
func TestOpenCodeToolFilters(t *testing.T) {
	entry := `"mcp": {"codegraph-catalog": {"type": "local", "command": ["/bin/cgcat", "serve"]}}`
	for _, c := range []struct {
		name, cfg string
		want      Level
		code      string
		in        string
	}{
		{"none", `{` + entry + `}`, OK, "", "runs MCP tools without asking"},
		{"global off", `{"tools": {"codegraph-catalog_*": false}, ` + entry + `}`, Fail, "tool_hidden", "for every agent"},
		{"global wildcard", `{"tools": {"*": false}, ` + entry + `}`, Fail, "tool_hidden", `{"*": false}`},
		{"longer pattern turns it back on", `{"tools": {"*": false, "codegraph-catalog_*": true}, ` + entry + `}`, OK, "", "without asking"},
		{"one tool", `{"tools": {"codegraph-catalog_local_codegraph_resolve": false}, ` + entry + `}`, Fail, "tool_hidden", "local_codegraph_resolve"},
		{"other server", `{"tools": {"github_*": false}, ` + entry + `}`, OK, "", "without asking"},
		{"agent hides", `{"agent": {"plan": {"tools": {"codegraph-catalog*": false}}}, ` + entry + `}`, Warn, "tool_hidden", "agents plan"},
		{"global off, agent on", `{"tools": {"codegraph-catalog_*": false}, "agent": {"build": {"tools": {"codegraph-catalog_*": true}}}, ` + entry + `}`, Warn, "tool_hidden", "only the agents build"},
		{"permission ask", `{"permission": {"codegraph-catalog_*": "ask"}, ` + entry + `}`, Warn, WillPrompt, `"ask"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			fs := approvalOf(t, OpenCode, c.cfg, true)
			var text []string
			for _, f := range fs {
				text = append(text, f.What)
			}
			all := strings.Join(text, "\n")
			if worst(fs) != c.want || (c.code != "" && !hasCode(fs, c.code)) || !strings.Contains(all, c.in) {
				t.Fatalf("worst %v (want %v), code %q, text lacks %q?\n%s", worst(fs), c.want, c.code, c.in, all)
			}
		})
	}
}

// TestCodexApprovalMode: what makes Codex ask is the tool's approval mode
// (and readOnlyHint for "auto" and "writes"), not approval_policy.
func TestCodexApprovalMode(t *testing.T) {
	base := "approval_policy = \"never\"\n[mcp_servers.codegraph-catalog]\ncommand = \"/bin/cgcat\"\n"
	for _, c := range []struct {
		name, extra string
		readOnly    bool
		want        Level
		in          string
	}{
		{"default auto, read-only", "", true, OK, `approval mode "auto" (the default) and readOnlyHint`},
		{"policy is named", "", true, OK, `approval_policy "never" governs commands`},
		{"auto, not shown read-only", "", false, Info, "not checked"},
		{"writes", "default_tools_approval_mode = \"writes\"\n", true, OK, `default_tools_approval_mode = "writes"`},
		{"approve", "default_tools_approval_mode = \"approve\"\n", false, OK, `= "approve"`},
		{"prompt", "default_tools_approval_mode = \"prompt\"\n", true, Warn, "will ask before every call"},
		{"per tool prompt", "[mcp_servers.codegraph-catalog.tools.local_codegraph_resolve]\napproval_mode = \"prompt\"\n", true, Warn, "tools.local_codegraph_resolve.approval_mode"},
		{"per tool wins", "default_tools_approval_mode = \"prompt\"\n[mcp_servers.codegraph-catalog.tools.local_codegraph_projects]\napproval_mode = \"approve\"\n[mcp_servers.codegraph-catalog.tools.local_codegraph_resolve]\napproval_mode = \"auto\"\n", true, OK, "without asking"},
		{"unknown mode", "default_tools_approval_mode = \"sometimes\"\n", true, Warn, "does not know"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fs := approvalOf(t, Codex, base+c.extra, c.readOnly)
			var text []string
			for _, f := range fs {
				text = append(text, f.What)
			}
			all := strings.Join(text, "\n")
			if worst(fs) != c.want || !strings.Contains(all, c.in) {
				t.Fatalf("worst %v (want %v), text lacks %q?\n%s", worst(fs), c.want, c.in, all)
			}
			if c.want == Warn && strings.Contains(c.in, "ask") && !hasCode(fs, WillPrompt) {
				t.Fatalf("no %s code: %+v", WillPrompt, fs)
			}
		})
	}
}

func TestWildcardMatch(t *testing.T) {
	for _, c := range []struct {
		p, s string
		ok   bool
	}{
		{"*", "", true}, {"a*", "abc", true}, {"*c", "abc", true}, {"a?c", "abc", true}, {"a?c", "ac", false},
		{"codegraph-catalog_*", "codegraph-catalog_local_codegraph_projects", true},
		{"codegraph-catalog_*", "codegraph_codegraph_explore", false},
		{"[a]", "a", false}, {"[a]", "[a]", true},
	} {
		if wildcardMatch(c.p, c.s) != c.ok {
			t.Errorf("%q ~ %q: want %v", c.p, c.s, c.ok)
		}
	}
}
