package hostconfig

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/tailscale/hujson"
)

// field is one member of an object we render, in order. val is a string,
// a bool, a []string or a []field (a nested object).
type field struct {
	key string
	val any
}

// renderObject renders fields as a JSON object. indent is the indentation
// of the line holding the member name, unit one level; arrays and nested
// objects go one item per line when multiline.
func renderObject(fields []field, indent, unit, nl string, multiline bool) string {
	if len(fields) == 0 {
		return "{}"
	}
	var b strings.Builder
	if !multiline {
		b.WriteString("{")
		for i, f := range fields {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(jsonString(f.key) + ": " + renderValue(f.val, "", "", "", false))
		}
		b.WriteString("}")
		return b.String()
	}
	in1 := indent + unit
	b.WriteString("{" + nl)
	for i, f := range fields {
		b.WriteString(in1 + jsonString(f.key) + ": " + renderValue(f.val, in1, unit, nl, true))
		if i < len(fields)-1 {
			b.WriteString(",")
		}
		b.WriteString(nl)
	}
	b.WriteString(indent + "}")
	return b.String()
}

func renderValue(v any, indent, unit, nl string, multiline bool) string {
	switch x := v.(type) {
	case string:
		return jsonString(x)
	case bool:
		if x {
			return "true"
		}
		return "false"
	case []field:
		return renderObject(x, indent, unit, nl, multiline)
	case []string:
		quoted := make([]string, len(x))
		for i, s := range x {
			quoted[i] = jsonString(s)
		}
		if !multiline || len(x) == 0 {
			return "[" + strings.Join(quoted, ", ") + "]"
		}
		in1 := indent + unit
		return "[" + nl + in1 + strings.Join(quoted, ","+nl+in1) + nl + indent + "]"
	}
	panic(fmt.Sprintf("hostconfig: cannot render %T", v))
}

// plain turns fields into the values a JSON decoder gives (for comparing).
func plain(fields []field) map[string]any {
	m := make(map[string]any, len(fields))
	for _, f := range fields {
		switch x := f.val.(type) {
		case []field:
			m[f.key] = plain(x)
		case []string:
			l := make([]any, len(x))
			for i, s := range x {
				l[i] = s
			}
			m[f.key] = l
		default:
			m[f.key] = x
		}
	}
	return roundTrip(m).(map[string]any)
}

// jsonHost is a host whose config is one JSON/JSONC object holding its MCP
// servers as the members of one top-level object (OpenCode "mcp", Claude
// Code and Gemini CLI "mcpServers").
type jsonHost struct {
	host   string // "opencode", "claude", "gemini"
	key    string // the top-level object holding the servers
	fields func(Entry) []field
	// newFile is the content of a new file holding only our entry.
	newFile func(e Entry, entry string) string
	// refuse, when set, refuses a servers object this package must not
	// edit (another config generation).
	refuse    func(servers *hujson.Object) error
	validName func(string) error
}

type jsonDoc struct {
	root      hujson.Value
	obj       *hujson.Object
	before    map[string]any
	nl        string
	multiline bool
	unit      string
}

func parseJSONDoc(src []byte) (*jsonDoc, error) {
	root, err := hujson.Parse(src)
	if err != nil {
		return nil, fmt.Errorf("%w as JSON/JSONC: %v; fix the file (or move it aside) and run again", ErrUnparsable, err)
	}
	obj, ok := root.Value.(*hujson.Object)
	if !ok {
		return nil, fmt.Errorf("%w: the top level is not a JSON object; fix the file (or move it aside) and run again", ErrUnparsable)
	}
	decoded, err := decodeJSONC(root)
	if err != nil {
		return nil, fmt.Errorf("%w as JSON/JSONC: %v", ErrUnparsable, err)
	}
	d := &jsonDoc{root: root, obj: obj, before: decoded.(map[string]any), nl: "\n", unit: "  "}
	if bytes.Contains(src, []byte("\r\n")) {
		d.nl = "\r\n"
	}
	d.multiline = len(obj.Members) == 0 || hasNL(bytes.TrimSpace(src))
	for _, m := range obj.Members {
		if in, ok := lineIndent(m.Name.BeforeExtra); ok && in != "" {
			d.unit = in
			break
		}
	}
	return d, nil
}

// servers returns the servers object, nil when there is none. It refuses
// the shapes we must not edit.
func (h *jsonHost) servers(d *jsonDoc, name string) (*hujson.Object, int, error) {
	i, count := findMember(d.obj, h.key)
	switch {
	case count == 0:
		return nil, -1, nil
	case count > 1:
		return nil, -1, unsafef(`the file has %d %q keys; keep one, then run again`, count, h.key)
	}
	servers, ok := d.obj.Members[i].Value.Value.(*hujson.Object)
	if !ok {
		return nil, -1, unsafef(`%q is not an object; fix it by hand, then run again`, h.key)
	}
	if _, c := findMember(servers, name); c > 1 {
		return nil, -1, unsafef(`%q has %d %q keys; keep one, then run again`, h.key, c, name)
	}
	if h.refuse != nil {
		if err := h.refuse(servers); err != nil {
			return nil, -1, err
		}
	}
	return servers, i, nil
}

func (h *jsonHost) checkName(name string) error {
	if !validName(name) {
		return fmt.Errorf("%w: server name %q: use letters, digits, '-' and '_' only", ErrInvalidEntry, name)
	}
	if h.validName != nil {
		return h.validName(name)
	}
	return nil
}

// upsert adds or replaces our <key>.<name> entry, keeping comments,
// trailing commas, layout and every other member. Empty input (only
// whitespace) gives a new file. An existing entry equal to ours gives
// changed=false; a different one a *ConflictError unless force, which
// replaces its value in place.
func (h *jsonHost) upsert(src []byte, e Entry, force bool) (out []byte, changed bool, err error) {
	if err := e.validate(); err != nil {
		return nil, false, err
	}
	if err := h.checkName(e.Name); err != nil {
		return nil, false, err
	}
	fields := h.fields(e)
	want := plain(fields)
	if len(bytes.TrimSpace(src)) == 0 {
		out = []byte(h.newFile(e, jsonString(e.Name)+": "+renderObject(fields, "    ", "  ", "\n", true)))
		before := map[string]any{}
		if d, err := parseJSONDoc(out); err == nil {
			before = d.before
			delete(before, h.key)
		}
		if err := h.verify(before, out, e.Name, want); err != nil {
			return nil, false, err
		}
		return out, true, nil
	}
	d, err := parseJSONDoc(src)
	if err != nil {
		return nil, false, err
	}
	servers, si, err := h.servers(d, e.Name)
	if err != nil {
		return nil, false, err
	}
	rootIndent := memberIndent(d.obj, "", d.unit)
	switch {
	case servers == nil:
		indent := rootIndent
		inner := indent + d.unit
		var text string
		if d.multiline {
			text = "{" + d.nl + inner + jsonString(e.Name) + ": " + renderObject(fields, inner, d.unit, d.nl, true) + d.nl + indent + "}"
		} else {
			text = "{" + jsonString(e.Name) + ": " + renderObject(fields, "", "", "", false) + "}"
		}
		v, err := parseTrimmed(text)
		if err != nil {
			return nil, false, fmt.Errorf("%w: rendering the entry: %v", ErrVerify, err)
		}
		insertMember(d.obj, h.key, v, indent, closingIndent(d.obj, ""), d.nl, objMultiline(d.obj, d.multiline))
	default:
		serversIndent := rootIndent
		if in, ok := lineIndent(d.obj.Members[si].Name.BeforeExtra); ok {
			serversIndent = in
		}
		ml := objMultiline(servers, d.multiline)
		indent := memberIndent(servers, serversIndent, d.unit)
		idx, _ := findMember(servers, e.Name)
		if idx >= 0 {
			cur, err := decodeJSONC(servers.Members[idx].Value)
			if err != nil {
				return nil, false, fmt.Errorf("%w: %v", ErrUnparsable, err)
			}
			if equalValue(cur, want) {
				return src, false, nil
			}
			if !force {
				existing := hujson.Value{Value: servers.Members[idx].Value.Value}.String()
				if in, ok := lineIndent(servers.Members[idx].Name.BeforeExtra); ok && in != "" {
					existing = strings.ReplaceAll(existing, "\n"+in, "\n")
				}
				return nil, false, &ConflictError{Host: h.host, Name: e.Name,
					Existing: jsonString(e.Name) + ": " + existing}
			}
			if in, ok := lineIndent(servers.Members[idx].Name.BeforeExtra); ok {
				indent = in
			}
			v, err := parseTrimmed(renderObject(fields, indent, d.unit, d.nl, ml))
			if err != nil {
				return nil, false, fmt.Errorf("%w: rendering the entry: %v", ErrVerify, err)
			}
			servers.Members[idx].Value.Value = v
		} else {
			v, err := parseTrimmed(renderObject(fields, indent, d.unit, d.nl, ml))
			if err != nil {
				return nil, false, fmt.Errorf("%w: rendering the entry: %v", ErrVerify, err)
			}
			insertMember(servers, e.Name, v, indent, closingIndent(servers, serversIndent), d.nl, ml)
		}
	}
	out = d.root.Pack()
	if err := h.verify(d.before, out, e.Name, want); err != nil {
		return nil, false, err
	}
	return out, true, nil
}

// remove removes our <key>.<name> entry. The servers object itself stays
// (possibly empty). It returns src unchanged (changed=false) when there is
// no such entry.
func (h *jsonHost) remove(src []byte, name string) (out []byte, changed bool, err error) {
	if err := h.checkName(name); err != nil {
		return nil, false, err
	}
	if len(bytes.TrimSpace(src)) == 0 {
		return src, false, nil
	}
	d, err := parseJSONDoc(src)
	if err != nil {
		return nil, false, err
	}
	servers, _, err := h.servers(d, name)
	if err != nil {
		return nil, false, err
	}
	if servers == nil {
		return src, false, nil
	}
	idx, _ := findMember(servers, name)
	if idx < 0 {
		return src, false, nil
	}
	removeMember(servers, idx, d.nl)
	out = d.root.Pack()
	if err := h.verify(d.before, out, name, nil); err != nil {
		return nil, false, err
	}
	return out, true, nil
}

// verify parses out and checks it equals before with <key>.<name> set to
// want (or removed, when want is nil).
func (h *jsonHost) verify(before map[string]any, out []byte, name string, want map[string]any) error {
	v, err := hujson.Parse(out)
	if err != nil {
		return fmt.Errorf("%w: the edited file does not parse (%v); nothing was written", ErrVerify, err)
	}
	decoded, err := decodeJSONC(v)
	if err != nil {
		return fmt.Errorf("%w: the edited file does not parse (%v); nothing was written", ErrVerify, err)
	}
	expected := make(map[string]any, len(before)+1)
	for k, v := range before {
		expected[k] = v
	}
	servers := map[string]any{}
	if raw, ok := before[h.key]; ok {
		m, ok := raw.(map[string]any)
		if !ok {
			return unsafef(`%q is not an object`, h.key)
		}
		for k, v := range m {
			servers[k] = v
		}
	}
	if want != nil {
		servers[name] = want
	} else {
		delete(servers, name)
	}
	expected[h.key] = servers
	if !equalValue(expected, decoded) {
		return fmt.Errorf("%w: the edited file would change more than the %s.%s entry; nothing was written (please report this with the file)", ErrVerify, h.key, name)
	}
	return nil
}
