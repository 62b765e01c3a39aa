package hostconfig

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestHostDescriptors holds every registered host to the same contract:
// its file is found from the environment, install into an empty file and
// uninstall leave only what uninstall may delete, a user's other settings
// are never a leftover, the entry reads back as the command cgcat runs,
// the --print snippet is the same entry, and the host's own entry checks
// accept what install wrote.
func TestHostDescriptors(t *testing.T) {
	wantFile := map[string]string{
		Codex:    "/h/.codex/config.toml",
		OpenCode: "/h/.config/opencode/opencode.json",
		Claude:   "/h/.claude.json",
		Gemini:   "/h/.gemini/settings.json",
		Cursor:   "/h/.cursor/mcp.json",
	}
	if len(All()) != len(wantFile) {
		t.Fatalf("%d hosts registered, the test knows %d: add the new host's file here", len(All()), len(wantFile))
	}
	seen := map[string]bool{}
	for _, h := range All() {
		t.Run(h.Name, func(t *testing.T) {
			if seen[h.Name] || h.Title == "" || !slices.Contains(Hosts, h.Name) {
				t.Fatalf("name %q title %q: duplicate, untitled or not in Hosts", h.Name, h.Title)
			}
			seen[h.Name] = true
			if got, ok := ByName(h.Name); !ok || got != h {
				t.Fatal("ByName does not find it")
			}
			env := Env{Home: "/h", Getenv: func(string) string { return "" }}
			file, err := h.ConfigFile(env, "")
			if err != nil || file != wantFile[h.Name] {
				t.Fatalf("config file %q, %v; want %q", file, err, wantFile[h.Name])
			}
			if _, err := h.ConfigFile(Env{}, ""); err == nil {
				t.Fatal("no home and no variable: want an error naming what is missing")
			}
			if h.Launch.Timeout <= 0 || h.Launch.TimeoutSource == "" || h.PromptPolicy == "" || h.CodeGraphAdd == "" || h.DirMode == 0 {
				t.Fatalf("incomplete descriptor: %+v", h.Launch)
			}

			// A new file: install, read back, uninstall, leftover.
			out, changed, err := h.Upsert(nil, testEntry, false)
			if err != nil || !changed {
				t.Fatalf("upsert into nothing: %v", err)
			}
			servers, err := h.ReadServers(out)
			if err != nil || len(servers) != 1 {
				t.Fatalf("read back: %v %+v", err, servers)
			}
			s := servers[0]
			if s.Name != testEntry.Name || s.Command != testEntry.Command || !slices.Equal(s.Args, testEntry.Args()) || s.Disabled != "" || s.URL != "" {
				t.Fatalf("entry reads back as %+v", s)
			}
			if fs, ok := h.EntryChecks(s, EntryAt{Where: "w", Reinstall: "r"}); !ok || slices.ContainsFunc(fs, func(f Finding) bool { return f.Level == Fail }) {
				t.Fatalf("the host's own checks refuse what install wrote: %+v", fs)
			}
			if h.Leftover(out) {
				t.Fatal("a file holding cgcat's entry is a leftover")
			}
			empty, changed, err := h.Remove(out, testEntry.Name)
			if err != nil || !changed || !h.Leftover(empty) {
				t.Fatalf("after uninstall: %v changed=%v leftover=%v:\n%s", err, changed, h.Leftover(empty), empty)
			}

			// A user's file: other settings are never a leftover.
			user := `{"theme": "dark", "` + h.ServersKey + `": {}}`
			if h.SnippetTOML {
				user = "model = \"m\"\n"
			}
			withOurs, _, err := h.Upsert([]byte(user), testEntry, false)
			if err != nil {
				t.Fatal(err)
			}
			back, _, err := h.Remove(withOurs, testEntry.Name)
			if err != nil || h.Leftover(back) {
				t.Fatalf("the user's settings count as leftover: %v\n%s", err, back)
			}

			// The snippet is the same entry.
			snip := Snippet(h.Name, testEntry)
			fromSnip, err := h.ReadServers([]byte(snip))
			if err != nil || len(fromSnip) != 1 || fromSnip[0].Command != testEntry.Command || !slices.Equal(fromSnip[0].Args, s.Args) {
				t.Fatalf("snippet reads as %+v, %v:\n%s", fromSnip, err, snip)
			}
		})
	}
}

// TestHostVariables: the variables each host reads move its file.
func TestHostVariables(t *testing.T) {
	vars := map[string]string{"CODEX_HOME": "/c", "XDG_CONFIG_HOME": "/x", "CLAUDE_CONFIG_DIR": "/cl", "GEMINI_CLI_HOME": "/g"}
	env := Env{Home: "/h", Getenv: func(k string) string { return vars[k] }}
	want := map[string]string{Codex: "/c/config.toml", OpenCode: "/x/opencode/opencode.json", Claude: "/cl/.claude.json", Gemini: "/g/.gemini/settings.json", Cursor: "/h/.cursor/mcp.json"}
	for _, h := range All() {
		if got, err := h.ConfigFile(env, ""); err != nil || got != want[h.Name] {
			t.Errorf("%s: %q %v, want %q", h.Name, got, err, want[h.Name])
		}
	}
	for name, want := range map[string]string{Claude: "/cl/settings.json", Gemini: "/g/.gemini/policies/cgcat-n.toml"} {
		h, _ := ByName(name)
		if got, err := h.Allow.File(env, "n"); err != nil || got != want {
			t.Errorf("%s allow file %q %v, want %q", name, got, err, want)
		}
	}
}

// TestCursorEntry: Cursor's mcp.json keeps the user's servers and
// comments, and cgcat's entry is a stdio server with an absolute command.
func TestCursorEntry(t *testing.T) {
	src := []byte(`{
  // my Cursor servers
  "mcpServers": {
    "github": {"url": "https://api.example.com/mcp"},
    "codegraph": {"command": "codegraph", "args": ["serve", "--mcp"]},
  },
}
`)
	out, changed, err := UpsertCursor(src, testEntry, false)
	if err != nil || !changed {
		t.Fatal(err)
	}
	for _, keep := range []string{"// my Cursor servers", `"github": {"url": "https://api.example.com/mcp"}`, `"codegraph": {"command": "codegraph", "args": ["serve", "--mcp"]},`} {
		if !strings.Contains(string(out), keep) {
			t.Fatalf("lost %q:\n%s", keep, out)
		}
	}
	if !strings.Contains(string(out), `"type": "stdio"`) {
		t.Fatalf("entry is not a stdio server:\n%s", out)
	}
	h, _ := ByName(Cursor)
	servers, err := h.ReadServers(out)
	if err != nil {
		t.Fatal(err)
	}
	cg, ok := FindCodeGraph(servers)
	if !ok || cg.Name != "codegraph" {
		t.Fatalf("CodeGraph's entry not found: %+v", servers)
	}
	back, _, err := RemoveCursor(out, testEntry.Name)
	if err != nil || string(back) != string(src) {
		t.Fatalf("remove did not give the file back (%v):\n%s", err, back)
	}
	// A conflicting entry of our name is shown, replaced only with force.
	other := []byte(`{"mcpServers": {"codegraph-catalog": {"command": "/old/cgcat"}}}`)
	if _, _, err := UpsertCursor(other, testEntry, false); err == nil {
		t.Fatal("replaced a different entry without force")
	}
	// Its entry checks refuse a remote entry of our name.
	if _, ok := h.EntryChecks(Server{Raw: map[string]any{"type": "http"}}, EntryAt{}); ok {
		t.Fatal("an HTTP entry passed as startable")
	}
}

// TestCursorApproval says it could not check, and names what the one
// readable file has for the entry.
func TestCursorApproval(t *testing.T) {
	home := t.TempDir()
	h, _ := ByName(Cursor)
	in := ApprovalInput{Env: Env{Home: home}, Name: DefaultName}
	fs := h.Approval(in)
	if len(fs) != 1 || fs[0].Level != Info || !strings.Contains(fs[0].What, "not checked") {
		t.Fatalf("%+v", fs)
	}
	if err := os.MkdirAll(filepath.Join(home, ".cursor"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".cursor", "permissions.json"), []byte(`{"mcpAllowlist": ["codegraph-catalog:local_codegraph_projects", "x:y"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	fs = h.Approval(in)
	if len(fs) != 1 || fs[0].Level != Info || !strings.Contains(fs[0].What, "codegraph-catalog:local_codegraph_projects") || strings.Contains(fs[0].What, "x:y") {
		t.Fatalf("%+v", fs)
	}
}

// TestPruneEmpty: what install added around the entry goes when it holds
// nothing, and only then; comments and other members stay.
func TestPruneEmpty(t *testing.T) {
	src := "{\n  // mine\n  \"theme\": \"dark\",\n  \"mcpServers\": {}\n}\n"
	out, changed, err := PruneEmpty([]byte(src), []string{"mcpServers"}, 1)
	if err != nil || !changed || string(out) != "{\n  // mine\n  \"theme\": \"dark\"\n}\n" {
		t.Fatalf("%v %v:\n%s", changed, err, out)
	}
	for _, keep := range []string{`{"mcpServers": {"x": {}}}`, `{"mcpServers": {"x": 1}}`, `{"permissions": {"allow": ["Read"]}}`, `{"theme": 1}`} {
		if out, changed, err := PruneEmpty([]byte(keep), []string{"mcpServers"}, 1); err != nil || changed || string(out) != keep {
			t.Fatalf("%s: %v %v %s", keep, changed, err, out)
		}
	}
	if out, changed, err := PruneEmpty([]byte(`{"a": 1, "permissions": {"allow": []}}`), []string{"permissions", "allow"}, 1); err != nil || !changed || string(out) != `{"a": 1}` {
		t.Fatalf("%v %v %s", changed, err, out)
	}
	// Only down to what the edit created: the user's own empty
	// "permissions" stays.
	if out, changed, err := PruneEmpty([]byte(`{"permissions": {"allow": []}}`), []string{"permissions", "allow"}, 2); err != nil || !changed || string(out) != `{"permissions": {}}` {
		t.Fatalf("%v %v %s", changed, err, out)
	}
	if got := MissingPath([]byte(`{"permissions": {}}`), []string{"permissions", "allow"}); len(got) != 2 {
		t.Fatalf("missing %v", got)
	}
	if got := MissingPath([]byte(`{"a": 1}`), []string{"permissions", "allow"}); len(got) != 1 {
		t.Fatalf("missing %v", got)
	}
}
