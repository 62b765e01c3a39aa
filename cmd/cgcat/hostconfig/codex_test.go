package hostconfig

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

// withoutEntry drops mcp_servers.<name> (and an mcp_servers left empty).
func withoutEntry(m map[string]any, serversKey, name string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	if s, ok := out[serversKey].(map[string]any); ok {
		c := make(map[string]any, len(s))
		for k, v := range s {
			if k != name {
				c[k] = v
			}
		}
		if len(c) == 0 {
			delete(out, serversKey)
		} else {
			out[serversKey] = c
		}
	}
	return out
}

// checkCodexResult parses src and out independently of the code under test
// and checks that out holds want as mcp_servers.<name> (absent when want is
// nil) and that every other key is unchanged.
func checkCodexResult(t testing.TB, src, out []byte, name string, want map[string]any) {
	t.Helper()
	before, after := map[string]any{}, map[string]any{}
	if err := toml.Unmarshal(src, &before); err != nil {
		t.Fatalf("input does not parse: %v", err)
	}
	if err := toml.Unmarshal(out, &after); err != nil {
		t.Fatalf("output does not parse: %v\n%s", err, out)
	}
	if !equalValue(withoutEntry(before, "mcp_servers", name), withoutEntry(after, "mcp_servers", name)) {
		t.Fatalf("other keys changed:\nbefore %v\nafter  %v", before, after)
	}
	servers, _ := after["mcp_servers"].(map[string]any)
	got, ok := servers[name]
	switch {
	case want == nil && ok:
		t.Fatalf("entry still present: %v", got)
	case want != nil && !equalValue(got, want):
		t.Fatalf("entry = %#v, want %#v", got, want)
	}
}

func TestUpsertCodexGolden(t *testing.T) {
	cases := []struct {
		in      string
		force   bool
		changed bool
		errIs   error
	}{
		{in: "empty", changed: true},
		{in: "comments_others", changed: true},
		{in: "with_ours", changed: false},
		{in: "identical_reordered", changed: false},
		{in: "different", errIs: ErrExists},
		{in: "different", force: true, changed: true},
		{in: "subtables", errIs: ErrExists},
		{in: "subtables", force: true, changed: true},
		{in: "implicit_subtable", force: true, changed: true},
		{in: "dotted_root", force: true, errIs: ErrUnsafe},
		{in: "dotted_servers", force: true, errIs: ErrUnsafe},
		{in: "inline_servers", force: true, errIs: ErrUnsafe},
		{in: "inline_entry", force: true, errIs: ErrUnsafe},
		{in: "array_table", force: true, errIs: ErrUnsafe},
		{in: "unparsable", force: true, errIs: ErrUnparsable},
		{in: "duplicate_key", force: true, errIs: ErrUnparsable},
		{in: "crlf", changed: true},
		{in: "no_trailing_newline", changed: true},
		{in: "dotted_other_server", changed: true},
		{in: "ours_at_start", changed: false},
		{in: "multiline_string", changed: true},
	}
	for _, c := range cases {
		name := c.in
		if c.force {
			name += ".force"
		}
		t.Run(name, func(t *testing.T) {
			src := readFixture(t, "codex/"+c.in+".toml")
			out, changed, err := UpsertCodex(src, testEntry, c.force)
			golden := "codex/" + name + ".upsert.golden"
			if c.errIs != nil {
				if !errors.Is(err, c.errIs) {
					t.Fatalf("err = %v, want %v", err, c.errIs)
				}
				if out != nil || changed {
					t.Fatalf("error with output")
				}
				checkGolden(t, golden, []byte("ERROR: "+err.Error()+"\n"))
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if changed != c.changed {
				t.Fatalf("changed = %v, want %v", changed, c.changed)
			}
			if !changed && !bytes.Equal(out, src) {
				t.Fatalf("unchanged but output differs")
			}
			checkCodexResult(t, src, out, testEntry.Name, codexValue(testEntry))
			checkGolden(t, golden, out)

			// Idempotent: a second run changes nothing.
			again, changed2, err := UpsertCodex(out, testEntry, false)
			if err != nil || changed2 || !bytes.Equal(again, out) {
				t.Fatalf("second upsert: changed=%v err=%v", changed2, err)
			}
		})
	}
}

func TestUpsertCodexKeepsOtherBytes(t *testing.T) {
	src := readFixture(t, "codex/comments_others.toml")
	out, _, err := UpsertCodex(src, testEntry, false)
	if err != nil {
		t.Fatal(err)
	}
	table := renderCodexTable(testEntry, "\n")
	if want := string(src) + "\n" + table; string(out) != want {
		t.Fatalf("append is not src + blank line + table:\n%s", out)
	}

	// Replacing in place: everything before the header and after the last
	// key-value of our table stays byte-identical (comments of the
	// following table included).
	src = readFixture(t, "codex/with_ours.toml")
	e := testEntry
	e.Command = "/new/place/cgcat"
	out, changed, err := UpsertCodex(src, e, true)
	if err != nil || !changed {
		t.Fatalf("changed=%v err=%v", changed, err)
	}
	hdr := "[mcp_servers.codegraph-catalog]\n"
	i := strings.Index(string(src), hdr)
	j := strings.Index(string(src), "tool_timeout_sec = 10\n") + len("tool_timeout_sec = 10\n")
	want := string(src[:i]) + renderCodexTable(e, "\n") + string(src[j:])
	if string(out) != want {
		t.Fatalf("replace touched other bytes:\n%s", UnifiedDiff("x", []byte(want), out))
	}
}

func TestUpsertCodexConflictShowsEntry(t *testing.T) {
	src := readFixture(t, "codex/subtables.toml")
	_, _, err := UpsertCodex(src, testEntry, false)
	var ce *ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v", err)
	}
	for _, s := range []string{"--force", "/old/place/cgcat", "CGCAT_LOG", "approval_mode"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error does not mention %q: %v", s, err)
		}
	}
	if strings.Contains(ce.Existing, "/usr/bin/other") {
		t.Errorf("existing text includes another server: %s", ce.Existing)
	}
}

func TestRemoveCodexGolden(t *testing.T) {
	cases := []struct {
		in      string
		changed bool
		errIs   error
	}{
		{in: "with_ours", changed: true},
		{in: "ours_at_start", changed: true},
		{in: "subtables", changed: true},
		{in: "implicit_subtable", changed: true},
		{in: "comments_others", changed: false},
		{in: "empty", changed: false},
		{in: "dotted_root", errIs: ErrUnsafe},
		{in: "inline_entry", errIs: ErrUnsafe},
		{in: "unparsable", errIs: ErrUnparsable},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			src := readFixture(t, "codex/"+c.in+".toml")
			out, changed, err := RemoveCodex(src, testEntry.Name)
			if c.errIs != nil {
				if !errors.Is(err, c.errIs) {
					t.Fatalf("err = %v, want %v", err, c.errIs)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if changed != c.changed {
				t.Fatalf("changed = %v, want %v", changed, c.changed)
			}
			checkCodexResult(t, src, out, testEntry.Name, nil)
			if !changed {
				if !bytes.Equal(out, src) {
					t.Fatal("unchanged but output differs")
				}
				return
			}
			checkGolden(t, "codex/"+c.in+".remove.golden", out)
		})
	}
}

func TestCodexRoundTrip(t *testing.T) {
	// Install then uninstall gives the original file back.
	for _, in := range []string{"comments_others", "crlf", "dotted_other_server", "multiline_string"} {
		src := readFixture(t, "codex/"+in+".toml")
		out, _, err := UpsertCodex(src, testEntry, false)
		if err != nil {
			t.Fatal(in, err)
		}
		back, changed, err := RemoveCodex(out, testEntry.Name)
		if err != nil || !changed {
			t.Fatal(in, changed, err)
		}
		if !bytes.Equal(back, src) {
			t.Errorf("%s: install+uninstall is not the original:\n%s", in, UnifiedDiff(in, src, back))
		}
	}
}

func TestCodexAwkwardPaths(t *testing.T) {
	paths := []string{
		"/Users/Jane Doe/bin/cgcat",
		`/opt/"quoted"/cgcat`,
		`/opt/back\slash/cgcat`,
		"/home/用户/代码/cgcat",
		"/opt/tab\there/new\nline/cgcat",
		"/opt/del\x7f/ctl\x01/cgcat",
		"/opt/it's/single'quote",
		"/opt/emoji 🚀/cgcat",
	}
	for _, p := range paths {
		e := Entry{Name: "cat_2", Command: p, ConfigPath: p + ".json"}
		src := readFixture(t, "codex/comments_others.toml")
		out, changed, err := UpsertCodex(src, e, false)
		if err != nil || !changed {
			t.Fatalf("%q: changed=%v err=%v", p, changed, err)
		}
		checkCodexResult(t, src, out, e.Name, codexValue(e))
		var m struct {
			MCPServers map[string]struct {
				Command string   `toml:"command"`
				Args    []string `toml:"args"`
			} `toml:"mcp_servers"`
		}
		if err := toml.Unmarshal(out, &m); err != nil {
			t.Fatal(err)
		}
		got := m.MCPServers["cat_2"]
		if got.Command != p || len(got.Args) != 3 || got.Args[2] != p+".json" {
			t.Errorf("%q round-tripped as %q %q", p, got.Command, got.Args)
		}
		// The --print snippet is valid TOML with the same values.
		codex, _ := Snippets(e)
		var sm map[string]any
		if err := toml.Unmarshal([]byte(codex), &sm); err != nil {
			t.Errorf("%q: snippet does not parse: %v\n%s", p, err, codex)
		}
	}
}

func TestUpsertCodexInvalidEntry(t *testing.T) {
	bad := []Entry{
		{Name: "", Command: "/a", ConfigPath: "/b"},
		{Name: "has.dot", Command: "/a", ConfigPath: "/b"},
		{Name: "has space", Command: "/a", ConfigPath: "/b"},
		{Name: "ok", Command: "cgcat", ConfigPath: "/b"},
		{Name: "ok", Command: "/a", ConfigPath: "rel/config.json"},
		{Name: "ok", Command: "/a\xff", ConfigPath: "/b"},
	}
	for _, e := range bad {
		if _, _, err := UpsertCodex(nil, e, false); !errors.Is(err, ErrInvalidEntry) {
			t.Errorf("%+v: err = %v", e, err)
		}
		if _, _, err := UpsertOpenCode(nil, e, false); !errors.Is(err, ErrInvalidEntry) {
			t.Errorf("%+v: opencode err = %v", e, err)
		}
	}
}

func TestCodexPath(t *testing.T) {
	if got := CodexPath("/home/u/.codex"); got != "/home/u/.codex/config.toml" {
		t.Errorf("CodexPath = %q", got)
	}
	if got := CodexPath(""); got != "" {
		t.Errorf("CodexPath(\"\") = %q", got)
	}
}
