package hostconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tailscale/hujson"
)

// decodeOpenCode parses JSONC independently of the code under test.
func decodeOpenCode(t testing.TB, b []byte) map[string]any {
	t.Helper()
	std, err := hujson.Standardize(bytes.Clone(b))
	if err != nil {
		t.Fatalf("does not parse: %v\n%s", err, b)
	}
	dec := json.NewDecoder(bytes.NewReader(std))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("does not decode: %v\n%s", err, b)
	}
	return m
}

// checkOpenCodeResult checks that out holds want as mcp.<name> (absent when
// want is nil) and that every other member is unchanged.
func checkOpenCodeResult(t testing.TB, src, out []byte, name string, want map[string]any) {
	t.Helper()
	after := decodeOpenCode(t, out)
	before := map[string]any{}
	if len(bytes.TrimSpace(src)) > 0 {
		before = decodeOpenCode(t, src)
	} else {
		before["$schema"] = opencodeSchema
	}
	// Drop our entry from "mcp" on both sides; an "mcp" the upsert created
	// must hold nothing else.
	strip := func(m map[string]any) map[string]any {
		c := make(map[string]any, len(m))
		for k, v := range m {
			c[k] = v
		}
		if mcp, ok := m["mcp"].(map[string]any); ok {
			rest := make(map[string]any, len(mcp))
			for k, v := range mcp {
				if k != name {
					rest[k] = v
				}
			}
			c["mcp"] = rest
		}
		return c
	}
	b, a := strip(before), strip(after)
	if _, ok := before["mcp"]; !ok {
		if rest, _ := a["mcp"].(map[string]any); len(rest) != 0 {
			t.Fatalf("created mcp holds more than our entry: %v", rest)
		}
		delete(a, "mcp")
	}
	if !equalValue(b, a) {
		t.Fatalf("other members changed:\nbefore %v\nafter  %v", b, a)
	}
	mcp, _ := after["mcp"].(map[string]any)
	got, ok := mcp[name]
	switch {
	case want == nil && ok:
		t.Fatalf("entry still present: %v", got)
	case want != nil && !equalValue(got, roundTrip(want)):
		t.Fatalf("entry = %#v, want %#v", got, want)
	}
}

func TestUpsertOpenCodeGolden(t *testing.T) {
	cases := []struct {
		in      string
		force   bool
		changed bool
		errIs   error
	}{
		{in: "empty.json", changed: true},
		{in: "plain.json", changed: true},
		{in: "comments.jsonc", changed: true},
		{in: "no_mcp.jsonc", changed: true},
		{in: "empty_mcp.json", changed: true},
		{in: "with_ours.jsonc", changed: false},
		{in: "ours_last.json", changed: false},
		{in: "different.json", errIs: ErrExists},
		{in: "different.json", force: true, changed: true},
		{in: "minified.json", changed: true},
		{in: "crlf.json", changed: true},
		{in: "opencode2.json", force: true, errIs: ErrUnsafe},
		{in: "unparsable.json", force: true, errIs: ErrUnparsable},
		{in: "not_object.json", force: true, errIs: ErrUnparsable},
		{in: "duplicate_mcp.json", force: true, errIs: ErrUnsafe},
		{in: "mcp_not_object.json", force: true, errIs: ErrUnsafe},
	}
	for _, c := range cases {
		name := c.in
		if c.force {
			name += ".force"
		}
		t.Run(name, func(t *testing.T) {
			src := readFixture(t, "opencode/"+c.in)
			out, changed, err := UpsertOpenCode(src, testEntry, c.force)
			golden := "opencode/" + name + ".upsert.golden"
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
			checkOpenCodeResult(t, src, out, testEntry.Name, opencodeValue(testEntry))
			checkGolden(t, golden, out)
			if strings.Contains(string(out), `"args"`) && !strings.Contains(string(src), `"args"`) {
				t.Errorf("wrote an args key (OpenCode 1.x ignores it)")
			}
			if strings.Contains(string(out), `"servers"`) || strings.Contains(string(out), `"disabled"`) {
				t.Errorf("wrote the OpenCode 2 shape")
			}
			again, changed2, err := UpsertOpenCode(out, testEntry, false)
			if err != nil || changed2 || !bytes.Equal(again, out) {
				t.Fatalf("second upsert: changed=%v err=%v", changed2, err)
			}
		})
	}
}

func TestUpsertOpenCodeKeepsCommentsAndCommas(t *testing.T) {
	src := readFixture(t, "opencode/comments.jsonc")
	out, _, err := UpsertOpenCode(src, testEntry, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		"// OpenCode global config (hand-written)",
		"/* models */",
		`"model": "anthropic/claude-sonnet-4-5", // default`,
		"// the native CodeGraph server",
		"}, // keep enabled",
		"// more servers below",
		`"edit": "ask",` + "\n  },\n}\n",
	} {
		if !strings.Contains(string(out), s) {
			t.Errorf("lost %q:\n%s", s, out)
		}
	}
	// Only lines were added: the diff has no '-' lines.
	for _, l := range strings.Split(UnifiedDiff("x", src, out), "\n") {
		if strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "---") {
			t.Errorf("removed a line: %q", l)
		}
	}
}

func TestRemoveOpenCodeGolden(t *testing.T) {
	cases := []struct {
		in      string
		changed bool
		errIs   error
	}{
		{in: "with_ours.jsonc", changed: true},
		{in: "ours_last.json", changed: true},
		{in: "ours_only.json", changed: true},
		{in: "plain.json", changed: false},
		{in: "no_mcp.jsonc", changed: false},
		{in: "empty.json", changed: false},
		{in: "unparsable.json", errIs: ErrUnparsable},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			src := readFixture(t, "opencode/"+c.in)
			out, changed, err := RemoveOpenCode(src, testEntry.Name)
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
			if !changed {
				if !bytes.Equal(out, src) {
					t.Fatal("unchanged but output differs")
				}
				return
			}
			checkOpenCodeResult(t, src, out, testEntry.Name, nil)
			checkGolden(t, "opencode/"+c.in+".remove.golden", out)
		})
	}
}

func TestOpenCodeRoundTrip(t *testing.T) {
	// Files that already have an "mcp" object come back byte-identical (an
	// "mcp" created by the install stays, empty, after the uninstall).
	for _, in := range []string{"plain.json", "comments.jsonc", "empty_mcp.json", "minified.json"} {
		src := readFixture(t, "opencode/"+in)
		out, _, err := UpsertOpenCode(src, testEntry, false)
		if err != nil {
			t.Fatal(in, err)
		}
		back, changed, err := RemoveOpenCode(out, testEntry.Name)
		if err != nil || !changed {
			t.Fatal(in, changed, err)
		}
		checkOpenCodeResult(t, src, back, testEntry.Name, nil)
		if !bytes.Equal(back, src) {
			t.Errorf("%s: install+uninstall is not the original:\n%s", in, UnifiedDiff(in, src, back))
		}
	}
}

func TestOpenCodeAwkwardPaths(t *testing.T) {
	for _, p := range []string{
		"/Users/Jane Doe/bin/cgcat",
		`/opt/"quoted"/cgcat`,
		`/opt/back\slash/cgcat`,
		"/home/用户/代码/cgcat",
		"/opt/tab\there/new\nline/ctl\x01/cgcat",
		"/opt/<html>&amp;/cgcat",
	} {
		e := Entry{Name: "cat_2", Command: p, ConfigPath: p + ".json"}
		src := readFixture(t, "opencode/comments.jsonc")
		out, _, err := UpsertOpenCode(src, e, false)
		if err != nil {
			t.Fatalf("%q: %v", p, err)
		}
		checkOpenCodeResult(t, src, out, e.Name, opencodeValue(e))
		_, snippet := Snippets(e)
		var m struct {
			MCP map[string]struct {
				Command []string `json:"command"`
			} `json:"mcp"`
		}
		if err := json.Unmarshal([]byte(snippet), &m); err != nil {
			t.Fatalf("%q: snippet is not JSON: %v\n%s", p, err, snippet)
		}
		if got := m.MCP["cat_2"].Command; len(got) != 4 || got[0] != p || got[3] != p+".json" {
			t.Errorf("%q: snippet command = %q", p, got)
		}
	}
}

func TestUpsertOpenCodeRejectsServersName(t *testing.T) {
	e := testEntry
	e.Name = "servers"
	if _, _, err := UpsertOpenCode([]byte("{}"), e, true); !errors.Is(err, ErrInvalidEntry) {
		t.Fatalf("err = %v", err)
	}
}

func TestFindOpenCode(t *testing.T) {
	dir := t.TempDir()
	if p, err := FindOpenCode(dir); p != "" || err != nil {
		t.Fatalf("empty dir: %q %v", p, err)
	}
	write := func(name string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(OpenCodeJSONC)
	if p, err := FindOpenCode(dir); p != filepath.Join(dir, OpenCodeJSONC) || err != nil {
		t.Fatalf("jsonc only: %q %v", p, err)
	}
	write(OpenCodeJSON)
	p, err := FindOpenCode(dir)
	if p != "" || !errors.Is(err, ErrUnsafe) {
		t.Fatalf("both: %q %v", p, err)
	}
	if !strings.Contains(err.Error(), "opencode.json") || !strings.Contains(err.Error(), "opencode.jsonc") {
		t.Errorf("error does not name both files: %v", err)
	}
	os.Remove(filepath.Join(dir, OpenCodeJSONC))
	if p, err := FindOpenCode(dir); p != filepath.Join(dir, OpenCodeJSON) || err != nil {
		t.Fatalf("json only: %q %v", p, err)
	}
}
