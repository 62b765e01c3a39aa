package hostconfig

import (
	"errors"
	"strings"
	"testing"
)

// A .claude.json as Claude Code writes it: two-space JSON, no final
// newline, lots of state around mcpServers.
const claudeState = `{
  "firstStartTime": "2026-12-01T14:47:30.372Z",
  "numStartups": 3,
  "projects": {
    "/home/u/a": {
      "allowedTools": []
    }
  },
  "mcpServers": {
    "codegraph": {
      "type": "stdio",
      "command": "codegraph",
      "args": [
        "serve",
        "--mcp"
      ],
      "alwaysLoad": true
    }
  }
}`

func TestClaudeUpsertKeepsStateAndIsIdempotent(t *testing.T) {
	out, changed, err := UpsertClaude([]byte(claudeState), testEntry, false)
	if err != nil || !changed {
		t.Fatalf("changed=%v err=%v", changed, err)
	}
	want := strings.Replace(claudeState, `      "alwaysLoad": true
    }
  }
}`, `      "alwaysLoad": true
    },
    "codegraph-catalog": {
      "type": "stdio",
      "command": "/opt/cgcat/bin/cgcat",
      "args": [
        "serve",
        "--config",
        "/home/u/.config/cgcat/config.json"
      ],
      "alwaysLoad": true
    }
  }
}`, 1)
	if string(out) != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out, want)
	}
	again, changed, err := UpsertClaude(out, testEntry, false)
	if err != nil || changed || string(again) != string(out) {
		t.Fatalf("second upsert: changed=%v err=%v", changed, err)
	}
	// A different entry of our name is a conflict; --force replaces it.
	other := testEntry
	other.Command = "/other/cgcat"
	if _, _, err := UpsertClaude(out, other, false); !errors.Is(err, ErrExists) {
		t.Fatalf("conflict: %v", err)
	}
	back, changed, err := RemoveClaude(out, testEntry.Name)
	if err != nil || !changed || string(back) != claudeState {
		t.Fatalf("remove: changed=%v err=%v\n%s", changed, err, back)
	}
	// A new file.
	fresh, _, err := UpsertClaude(nil, testEntry, false)
	if err != nil {
		t.Fatal(err)
	}
	servers, err := ReadServers(Claude, fresh)
	if err != nil || len(servers) != 1 || servers[0].Command != testEntry.Command || servers[0].Raw["alwaysLoad"] != true {
		t.Fatalf("new file %s: %+v %v", fresh, servers, err)
	}
}

func TestGeminiUpsertWithCommentsAndCodeGraphName(t *testing.T) {
	src := `{
  // my Gemini settings
  "security": {"auth": {"selectedType": "gemini-api-key"}},
  "mcpServers": {
    "cg": {"command": "/usr/bin/codegraph", "args": ["serve", "--mcp"], "trust": false}, // CodeGraph
  },
}
`
	servers, err := ReadServers(Gemini, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	cg, ok := FindCodeGraph(servers)
	if !ok || cg.Name != "cg" {
		t.Fatalf("CodeGraph entry: %+v %v", cg, ok)
	}
	e := testEntry
	e.CodeGraphServer = cg.Name
	out, changed, err := UpsertGemini([]byte(src), e, false)
	if err != nil || !changed {
		t.Fatal(changed, err)
	}
	for _, keep := range []string{"// my Gemini settings", "// CodeGraph", `"trust": false`} {
		if !strings.Contains(string(out), keep) {
			t.Fatalf("lost %q:\n%s", keep, out)
		}
	}
	servers, _ = ReadServers(Gemini, out)
	for _, s := range servers {
		if s.Name == e.Name && CodeGraphServerOf(s.Args) != "cg" {
			t.Fatalf("our args %v", s.Args)
		}
	}
	// ReadServers works on a copy: hujson.Standardize edits in place.
	if string(out) == strings.ReplaceAll(string(out), "//", "  ") {
		t.Fatal("comments vanished")
	}
	b := []byte(src)
	if _, err := ReadServers(Gemini, b); err != nil || string(b) != src {
		t.Fatal("ReadServers changed its input")
	}
}

func TestGeminiPolicy(t *testing.T) {
	p := GeminiPolicy("codegraph-catalog")
	for _, want := range []string{`mcpName = "codegraph-catalog"`, `toolName = ["local_codegraph_projects", "local_codegraph_resolve"]`, `decision = "allow"`, "priority = 100"} {
		if !strings.Contains(p, want) {
			t.Fatalf("policy lacks %q:\n%s", want, p)
		}
	}
	if !IsGeminiPolicy([]byte(p)) || IsGeminiPolicy([]byte("[[rule]]\n")) {
		t.Fatal("IsGeminiPolicy")
	}
}

func TestAllowList(t *testing.T) {
	rules := ClaudeAllowRules("codegraph-catalog")
	for _, tc := range []struct{ name, src, want string }{
		{"new file", "", "{\n  \"permissions\": {\n    \"allow\": [\n      \"mcp__codegraph-catalog__local_codegraph_projects\",\n      \"mcp__codegraph-catalog__local_codegraph_resolve\"\n    ]\n  }\n}\n"},
		{"existing list", "{\n  \"permissions\": {\n    \"allow\": [\n      \"mcp__codegraph__*\"\n    ]\n  },\n  \"model\": \"opus\"\n}\n",
			"{\n  \"permissions\": {\n    \"allow\": [\n      \"mcp__codegraph__*\",\n      \"mcp__codegraph-catalog__local_codegraph_projects\",\n      \"mcp__codegraph-catalog__local_codegraph_resolve\"\n    ]\n  },\n  \"model\": \"opus\"\n}\n"},
		{"no permissions", "{\"model\": \"opus\"}\n", "{\"model\": \"opus\", \"permissions\": {\"allow\": [\"mcp__codegraph-catalog__local_codegraph_projects\", \"mcp__codegraph-catalog__local_codegraph_resolve\"]}}\n"},
		{"empty list", "{\"permissions\": {\"allow\": [], \"deny\": [\"Bash\"]}}", "{\"permissions\": {\"allow\": [\"mcp__codegraph-catalog__local_codegraph_projects\", \"mcp__codegraph-catalog__local_codegraph_resolve\"], \"deny\": [\"Bash\"]}}"},
		{"one already there", "{\"permissions\": {\"allow\": [\"mcp__codegraph-catalog__local_codegraph_resolve\", \"Read\"]}}",
			"{\"permissions\": {\"allow\": [\"mcp__codegraph-catalog__local_codegraph_resolve\", \"Read\", \"mcp__codegraph-catalog__local_codegraph_projects\"]}}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, changed, err := AddToList([]byte(tc.src), ClaudeAllowPath, rules)
			if err != nil || !changed {
				t.Fatalf("changed=%v err=%v", changed, err)
			}
			if string(out) != tc.want {
				t.Fatalf("got:\n%s\nwant:\n%s", out, tc.want)
			}
			if _, changed, _ := AddToList(out, ClaudeAllowPath, rules); changed {
				t.Fatal("second add changed the file")
			}
			has, err := ListHas(out, ClaudeAllowPath, rules)
			if err != nil || len(has) != 2 {
				t.Fatalf("ListHas = %v %v", has, err)
			}
			back, changed, err := RemoveFromList(out, ClaudeAllowPath, rules)
			if err != nil || !changed {
				t.Fatalf("remove: %v %v", changed, err)
			}
			if has, _ := ListHas(back, ClaudeAllowPath, rules); len(has) != 0 {
				t.Fatalf("still has %v:\n%s", has, back)
			}
			if tc.name == "existing list" && string(back) != tc.src {
				t.Fatalf("remove did not give the file back:\n%s", back)
			}
		})
	}
	// Shapes it must not edit.
	for _, src := range []string{`{"permissions": {"allow": "x"}}`, `{"permissions": []}`, `{"permissions": {"allow": []}, "permissions": {}}`, `{`} {
		if _, _, err := AddToList([]byte(src), ClaudeAllowPath, rules); err == nil {
			t.Fatalf("%s: no error", src)
		}
	}
}

func TestIsCodeGraph(t *testing.T) {
	for _, tc := range []struct {
		s    Server
		want bool
	}{
		{Server{Command: "codegraph", Args: []string{"serve", "--mcp"}}, true},
		{Server{Command: "/usr/local/bin/codegraph", Args: []string{"serve", "--mcp"}}, true},
		{Server{Command: `C:\npm\codegraph.cmd`, Args: []string{"serve", "--mcp"}}, true},
		{Server{Command: "npx", Args: []string{"-y", "@colbymchenry/codegraph", "serve", "--mcp"}}, true},
		{Server{Command: "codegraph", Args: []string{"serve"}}, false},
		{Server{Command: "/opt/cgcat", Args: []string{"serve", "--mcp"}}, false},
		{Server{URL: "http://127.0.0.1/codegraph", Command: "codegraph", Args: []string{"serve", "--mcp"}}, false},
	} {
		if got := IsCodeGraph(tc.s); got != tc.want {
			t.Errorf("IsCodeGraph(%+v) = %v", tc.s, got)
		}
	}
	// An enabled entry before a disabled one, the conventional name first.
	s, _ := FindCodeGraph([]Server{
		{Name: "a", Command: "codegraph", Args: []string{"serve", "--mcp"}, Disabled: "enabled = false"},
		{Name: "b", Command: "codegraph", Args: []string{"serve", "--mcp"}},
		{Name: "codegraph", Command: "codegraph", Args: []string{"serve", "--mcp"}},
	})
	if s.Name != "codegraph" {
		t.Fatalf("FindCodeGraph = %s", s.Name)
	}
}
