package hostconfig

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// byteSource turns fuzz input into choices; it yields zeros when exhausted.
type byteSource struct {
	b []byte
	i int
}

func (s *byteSource) n(k int) int {
	if s.i >= len(s.b) || k <= 1 {
		s.i++
		return 0
	}
	v := int(s.b[s.i]) % k
	s.i++
	return v
}

func (s *byteSource) pick(opts ...string) string { return opts[s.n(len(opts))] }

// genJSONC writes a valid JSONC config with random comments, layout and
// trailing commas, possibly holding an "mcp" object with our entry.
func genJSONC(s *byteSource) string {
	nl := s.pick("\n", "\n", "\r\n")
	extra := func(indent string) string {
		switch s.n(7) {
		case 0:
			return ""
		case 1:
			return " "
		case 2:
			return nl + indent
		case 3:
			return " // c" + nl + indent
		case 4:
			return "/* c */"
		case 5:
			return nl + nl + indent + "// block" + nl + indent
		default:
			return " /* a" + nl + "b */ "
		}
	}
	var value func(depth int, indent string) string
	value = func(depth int, indent string) string {
		switch k := s.n(6); {
		case k == 0 || depth > 2:
			return s.pick(`1`, `"s"`, `true`, `null`, `-2.5e3`, `"\u00e9\n"`)
		case k <= 2:
			var parts []string
			for range s.n(4) {
				parts = append(parts, extra(indent+"  ")+value(depth+1, indent+"  ")+extra(indent))
			}
			tc := ""
			if len(parts) > 0 && s.n(2) == 1 {
				tc = "," + extra(indent)
			}
			return "[" + strings.Join(parts, ",") + tc + "]"
		default:
			return object(s, depth+1, indent+"  ", extra, value, nil)
		}
	}
	root := func() string {
		var members []string
		if s.n(4) != 0 {
			var ms []string
			for i := range s.n(4) {
				name := fmt.Sprintf("srv%d", i)
				if s.n(2) == 0 {
					name = DefaultName
				}
				ms = append(ms, name)
			}
			members = ms
		}
		mcp := object(s, 1, "  ", extra, value, members)
		return object(s, 0, "", extra, value, map[string]string{"mcp": mcp})
	}
	return root() + s.pick("", nl)
}

// object renders an object with unique member names. fixed adds members
// with preset values (or, when names is a []string, members with those
// names and random values).
func object(s *byteSource, depth int, indent string, extra func(string) string, value func(int, string) string, fixed any) string {
	type kv struct{ k, v string }
	var ms []kv
	seen := map[string]bool{}
	switch f := fixed.(type) {
	case []string:
		for _, n := range f {
			if !seen[n] {
				seen[n] = true
				ms = append(ms, kv{n, value(depth, indent)})
			}
		}
	case map[string]string:
		for i := range s.n(4) {
			ms = append(ms, kv{fmt.Sprintf("k%d", i), value(depth, indent)})
		}
		pos := s.n(len(ms) + 1)
		for k, v := range f {
			if s.n(5) != 0 {
				ms = append(ms[:pos], append([]kv{{k, v}}, ms[pos:]...)...)
			}
		}
	default:
		for i := range s.n(4) {
			ms = append(ms, kv{fmt.Sprintf("k%d", i), value(depth, indent)})
		}
	}
	var parts []string
	for _, m := range ms {
		parts = append(parts, extra(indent)+jsonString(m.k)+s.pick("", " ")+":"+s.pick("", " ")+m.v+s.pick("", " ", "/*x*/"))
	}
	tc := ""
	if len(parts) > 0 && s.n(2) == 1 {
		tc = ","
	}
	return "{" + strings.Join(parts, ",") + tc + extra(indent) + "}"
}

// FuzzOpenCodeGenerated drives UpsertOpenCode/RemoveOpenCode with valid,
// randomly laid out JSONC: they must always succeed (or report a conflict
// without --force) and keep every other member.
func FuzzOpenCodeGenerated(f *testing.F) {
	for i := range 64 {
		f.Add([]byte(fmt.Sprintf("%c%c%c%c%c%c%c%c", i, i*7, i*13, i*29, i*31, i*37, i*41, i*43)))
	}
	f.Fuzz(func(t *testing.T, seed []byte) {
		src := []byte(genJSONC(&byteSource{b: seed}))
		if _, err := decodeJSONCBytes(src); err != nil {
			t.Fatalf("generator made invalid JSONC: %v\n%s", err, src)
		}
		for _, force := range []bool{false, true} {
			out, changed, err := UpsertOpenCode(src, testEntry, force)
			if err != nil {
				if !force && errors.Is(err, ErrExists) {
					continue
				}
				t.Fatalf("force=%v: %v\n%s", force, err, src)
			}
			checkOpenCodeResult(t, src, out, testEntry.Name, opencodeValue(testEntry))
			if again, ch, err := UpsertOpenCode(out, testEntry, false); err != nil || ch || string(again) != string(out) {
				t.Fatalf("second upsert: %v %v\n%s", ch, err, out)
			}
			if changed {
				back, _, err := RemoveOpenCode(out, testEntry.Name)
				if err != nil {
					t.Fatalf("remove: %v\n%s", err, out)
				}
				checkOpenCodeResult(t, out, back, testEntry.Name, nil)
			}
		}
		out, _, err := RemoveOpenCode(src, testEntry.Name)
		if err != nil {
			t.Fatalf("remove: %v\n%s", err, src)
		}
		checkOpenCodeResult(t, src, out, testEntry.Name, nil)
	})
}

func decodeJSONCBytes(b []byte) (any, error) {
	d, err := parseOpenCode(b)
	if err != nil {
		return nil, err
	}
	return d.before, nil
}

// genTOML writes a valid Codex-like config.toml with comments, blank
// lines, other servers and profiles, and possibly our entry (with
// sub-tables) anywhere.
func genTOML(s *byteSource) string {
	nl := s.pick("\n", "\n", "\r\n")
	var b strings.Builder
	blank := func() {
		for range s.n(3) {
			b.WriteString(s.pick("", "  ", "# note") + nl)
		}
	}
	kv := func(k string) {
		b.WriteString(k + " = " + s.pick(`"v"`, `1`, `true`, `["a", 'b']`, `{ x = 1 }`, `"""`+nl+`[mcp_servers.`+DefaultName+`]`+nl+`"""`, `1979-05-27T07:32:00+08:00`, `nan`) + s.pick("", "  # c") + nl)
	}
	for i := range s.n(3) {
		kv(fmt.Sprintf("top%d", i))
	}
	blank()
	tables := []string{"mcp_servers.a", "mcp_servers.a.env", "profiles.p", "mcp_servers." + DefaultName, "mcp_servers." + DefaultName + ".env", "mcp_servers.\"" + DefaultName + "\".tools.x", "[mcp_servers.b]", "mcp_servers"}
	used := map[string]bool{}
	for range s.n(9) {
		tname := tables[s.n(len(tables))]
		if used[tname] || (tname == "mcp_servers.\""+DefaultName+"\".tools.x" && used["x"]) {
			continue
		}
		used[tname] = true
		if tname == "mcp_servers.\""+DefaultName+"\".tools.x" {
			used["x"] = true
		}
		if s.n(3) == 0 {
			b.WriteString(s.pick("# about the next table", "#") + nl)
		}
		if strings.HasPrefix(tname, "[") {
			b.WriteString("[" + tname + "]" + s.pick("", " # arr") + nl)
		} else {
			b.WriteString(s.pick("[", "[ ") + tname + s.pick("]", " ]") + s.pick("", " # hdr") + nl)
		}
		for i := range s.n(4) {
			if s.n(4) == 0 {
				b.WriteString("# inside" + nl)
			}
			kv(fmt.Sprintf("k%d", i))
		}
		blank()
	}
	out := b.String()
	if s.n(3) == 0 {
		out = strings.TrimRight(out, "\r\n")
	}
	return out
}

// FuzzCodexGenerated drives UpsertCodex/RemoveCodex with valid, randomly
// laid out TOML: with --force they must always succeed (the generator never
// writes our entry with dotted keys or inline tables) and keep every other
// key.
func FuzzCodexGenerated(f *testing.F) {
	for i := range 64 {
		f.Add([]byte(fmt.Sprintf("%c%c%c%c%c%c%c%c%c%c", i, i*7, i*13, i*29, i*31, i*37, i*41, i*43, i*47, i*53)))
	}
	f.Fuzz(func(t *testing.T, seed []byte) {
		src := []byte(genTOML(&byteSource{b: seed}))
		if _, err := parseCodex(src, testEntry.Name); err != nil {
			return // e.g. [mcp_servers.b] array mixed with a table: invalid TOML
		}
		out, _, err := UpsertCodex(src, testEntry, true)
		if err != nil {
			t.Fatalf("%v\n%s", err, src)
		}
		checkCodexResult(t, src, out, testEntry.Name, codexValue(testEntry))
		if again, ch, err := UpsertCodex(out, testEntry, false); err != nil || ch || string(again) != string(out) {
			t.Fatalf("second upsert: %v %v\n%s", ch, err, out)
		}
		back, _, err := RemoveCodex(out, testEntry.Name)
		if err != nil {
			t.Fatalf("remove: %v\n%s", err, out)
		}
		checkCodexResult(t, out, back, testEntry.Name, nil)
		back, _, err = RemoveCodex(src, testEntry.Name)
		if err != nil {
			t.Fatalf("remove: %v\n%s", err, src)
		}
		checkCodexResult(t, src, back, testEntry.Name, nil)
	})
}
