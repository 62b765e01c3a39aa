package hostconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/tailscale/hujson"
)

// OpenCode 1.x config file names, in a global ($XDG_CONFIG_HOME/opencode)
// or project directory.
const (
	OpenCodeJSON  = "opencode.json"
	OpenCodeJSONC = "opencode.jsonc"
)

const opencodeSchema = "https://opencode.ai/config.json"

// FindOpenCode returns the existing OpenCode config file in dir:
// opencode.json or opencode.jsonc. It returns "" when neither exists (the
// caller then creates opencode.json), and an error when both exist: writing
// to one would leave the other shadowing or shadowed, so the user has to
// merge them first.
func FindOpenCode(dir string) (string, error) {
	var found []string
	for _, name := range []string{OpenCodeJSON, OpenCodeJSONC} {
		p := filepath.Join(dir, name)
		fi, err := os.Stat(p)
		switch {
		case err == nil:
			if fi.IsDir() {
				return "", fmt.Errorf("%s is a directory, not an OpenCode config file", p)
			}
			found = append(found, p)
		case errors.Is(err, fs.ErrNotExist):
		default:
			return "", err
		}
	}
	switch len(found) {
	case 0:
		return "", nil
	case 1:
		return found[0], nil
	}
	return "", fmt.Errorf("%w: both %s and %s exist in %s; OpenCode reads both, so cgcat will not pick one: merge them into one file, then run again",
		ErrUnsafe, OpenCodeJSON, OpenCodeJSONC, dir)
}

func opencodeValue(e Entry) map[string]any {
	cmd := []any{e.Command}
	for _, a := range e.args() {
		cmd = append(cmd, a)
	}
	return map[string]any{"type": "local", "command": cmd, "enabled": true}
}

func jsonString(s string) string { return string(hujson.String(s)) }

// renderOpenCodeValue renders our mcp.<name> object. indent is the
// indentation of the line holding the member name, unit one level of
// indentation. Everything goes in "command": OpenCode 1.x ignores "args".
func renderOpenCodeValue(e Entry, indent, unit, nl string, multiline bool) string {
	cmd := append([]string{e.Command}, e.args()...)
	quoted := make([]string, len(cmd))
	for i, c := range cmd {
		quoted[i] = jsonString(c)
	}
	if !multiline {
		return `{"type": "local", "command": [` + strings.Join(quoted, ", ") + `], "enabled": true}`
	}
	in1, in2 := indent+unit, indent+unit+unit
	var b strings.Builder
	b.WriteString("{" + nl)
	b.WriteString(in1 + `"type": "local",` + nl)
	b.WriteString(in1 + `"command": [` + nl)
	for i, q := range quoted {
		b.WriteString(in2 + q)
		if i < len(quoted)-1 {
			b.WriteString(",")
		}
		b.WriteString(nl)
	}
	b.WriteString(in1 + "]," + nl)
	b.WriteString(in1 + `"enabled": true` + nl)
	b.WriteString(indent + "}")
	return b.String()
}

// decodeJSONC turns a hujson value into plain Go values (numbers kept as
// json.Number so nothing is rounded).
func decodeJSONC(v hujson.Value) (any, error) {
	v = v.Clone()
	v.Standardize()
	dec := json.NewDecoder(bytes.NewReader(v.Pack()))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return nil, err
	}
	return out, nil
}

func memberName(m hujson.ObjectMember) string {
	if lit, ok := m.Name.Value.(hujson.Literal); ok {
		return lit.String()
	}
	return ""
}

// findMember returns the index of the member called name and how many
// members have that name.
func findMember(obj *hujson.Object, name string) (idx, count int) {
	idx = -1
	for i, m := range obj.Members {
		if memberName(m) == name {
			if idx < 0 {
				idx = i
			}
			count++
		}
	}
	return idx, count
}

func isHWS(c byte) bool { return c == ' ' || c == '\t' }

func trimLeftHWS(b []byte) []byte {
	i := 0
	for i < len(b) && isHWS(b[i]) {
		i++
	}
	return b[i:]
}

// trimRightHWS trims trailing spaces and tabs (never a newline, which may
// end a line comment).
func trimRightHWS(b []byte) []byte {
	i := len(b)
	for i > 0 && isHWS(b[i-1]) {
		i--
	}
	return b[:i]
}

// lineIndent returns the spaces and tabs after the last newline of extra,
// if extra has a newline and nothing but spaces and tabs follows it.
func lineIndent(extra []byte) (string, bool) {
	i := bytes.LastIndexByte(extra, '\n')
	if i < 0 {
		return "", false
	}
	tail := extra[i+1:]
	if len(trimLeftHWS(tail)) != 0 {
		return "", false
	}
	return string(tail), true
}

// splitSameLine splits the extra after a member into the comments that sit
// on the member's own line (T, including the newline that ends a line
// comment) and the rest (R).
func splitSameLine(a []byte) (t, r []byte) {
	n := 0
	for {
		i := n
		for i < len(a) && isHWS(a[i]) {
			i++
		}
		switch {
		case bytes.HasPrefix(a[i:], []byte("//")):
			j := bytes.IndexByte(a[i:], '\n')
			if j < 0 {
				return a, nil
			}
			return a[:i+j+1], a[i+j+1:]
		case bytes.HasPrefix(a[i:], []byte("/*")):
			j := bytes.Index(a[i+2:], []byte("*/"))
			if j < 0 {
				return a, nil
			}
			n = i + 2 + j + 2
			continue
		}
		return a[:n], a[n:]
	}
}

func concat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	if out == nil {
		out = []byte{}
	}
	return out
}

func hasNL(b []byte) bool { return bytes.IndexByte(b, '\n') >= 0 }

// objMultiline reports whether an object is laid out over several lines.
func objMultiline(obj *hujson.Object, fileMultiline bool) bool {
	if len(obj.Members) == 0 {
		return fileMultiline
	}
	if hasNL(obj.AfterExtra) {
		return true
	}
	for _, m := range obj.Members {
		if hasNL(m.Name.BeforeExtra) {
			return true
		}
	}
	return false
}

// memberIndent returns the indentation of the members of obj, falling back
// to parentIndent+unit.
func memberIndent(obj *hujson.Object, parentIndent, unit string) string {
	for i := len(obj.Members) - 1; i >= 0; i-- {
		if in, ok := lineIndent(obj.Members[i].Name.BeforeExtra); ok {
			return in
		}
	}
	return parentIndent + unit
}

// closingIndent returns the indentation of obj's closing brace, falling back
// to parentIndent.
func closingIndent(obj *hujson.Object, parentIndent string) string {
	if in, ok := lineIndent(obj.AfterExtra); ok {
		return in
	}
	return parentIndent
}

func parseTrimmed(text string) (hujson.ValueTrimmed, error) {
	v, err := hujson.Parse([]byte(text))
	if err != nil {
		return nil, err
	}
	return v.Value, nil
}

// insertMember appends a member at the end of obj with the layout of its
// siblings: same indentation, same trailing-comma style, comments that sat
// on the old last member's line stay there.
func insertMember(obj *hujson.Object, name string, value hujson.ValueTrimmed, indent, closing, nl string, multiline bool) {
	n := len(obj.Members)
	trailingComma := n > 0 && obj.Members[n-1].Value.AfterExtra != nil
	var nameBefore, after []byte
	switch {
	case !multiline && n == 0:
		nameBefore, after = trimRightHWS(obj.AfterExtra), nil
	case !multiline:
		t, r := splitSameLine(obj.AfterExtra)
		nameBefore = concat(t, []byte(" "))
		if hasNL(t) {
			nameBefore = concat(t, []byte(indent))
		}
		after = r
	case n == 0:
		lead := trimRightHWS(obj.AfterExtra)
		if len(lead) > 0 && !bytes.HasSuffix(lead, []byte("\n")) {
			lead = concat(lead, []byte(nl))
		} else if len(lead) == 0 {
			lead = []byte(nl)
		}
		nameBefore = concat(lead, []byte(indent))
		after = []byte(nl + closing)
	default:
		t, r := splitSameLine(obj.AfterExtra)
		if len(t) > 0 && bytes.HasSuffix(t, []byte("\n")) {
			nameBefore = concat(t, []byte(indent))
		} else {
			nameBefore = concat(t, []byte(nl+indent))
		}
		if bytes.HasPrefix(r, []byte("\n")) || bytes.HasPrefix(r, []byte("\r\n")) {
			after = r
		} else {
			after = concat([]byte(nl), r)
		}
	}
	m := hujson.ObjectMember{
		Name:  hujson.Value{BeforeExtra: nameBefore, Value: hujson.String(name)},
		Value: hujson.Value{BeforeExtra: hujson.Extra(" "), Value: value},
	}
	if trailingComma {
		m.Value.AfterExtra = hujson.Extra{}
	}
	obj.Members = append(obj.Members, m)
	obj.AfterExtra = after
}

// dropSameLine drops what is left of a member's line from the extra after
// it: spaces, comments starting on that line (a block comment may run over
// several lines) and the newline. hadNL reports whether a newline ended it.
func dropSameLine(e []byte) (rest []byte, hadNL bool) {
	i := 0
	for i < len(e) {
		switch {
		case isHWS(e[i]) || e[i] == '\r':
			i++
		case e[i] == '\n':
			return e[i+1:], true
		case bytes.HasPrefix(e[i:], []byte("//")):
			j := bytes.IndexByte(e[i:], '\n')
			if j < 0 {
				return nil, false
			}
			return e[i+j+1:], true
		case bytes.HasPrefix(e[i:], []byte("/*")):
			j := bytes.Index(e[i+2:], []byte("*/"))
			if j < 0 {
				return nil, false
			}
			i += 2 + j + 2
		default:
			return e[i:], false
		}
	}
	return nil, false
}

// removeMember removes member i of obj. Comments before the member are
// kept; comments on its own line go with it.
func removeMember(obj *hujson.Object, i int, nl string) {
	n := len(obj.Members)
	bi := obj.Members[i].Name.BeforeExtra
	if i < n-1 {
		rest, _ := dropSameLine(obj.Members[i+1].Name.BeforeExtra)
		obj.Members[i+1].Name.BeforeExtra = concat(bi, trimLeftHWS(rest))
		obj.Members = append(obj.Members[:i:i], obj.Members[i+1:]...)
		return
	}
	// The last member: what follows it is the object's closing extra.
	trailingComma := obj.Members[i].Value.AfterExtra != nil
	lead := trimRightHWS(bi)
	rest, hadNL := dropSameLine(obj.AfterExtra)
	if hadNL && !bytes.HasSuffix(lead, []byte("\n")) {
		lead = concat(lead, []byte(nl))
	}
	after := concat(lead, rest)
	if n == 1 && len(bytes.TrimSpace(after)) == 0 {
		after = nil // "mcp": {}
	}
	obj.Members = obj.Members[:i:i]
	if i > 0 {
		prev := &obj.Members[i-1].Value
		switch {
		case trailingComma && prev.AfterExtra == nil:
			prev.AfterExtra = hujson.Extra{}
		case !trailingComma && prev.AfterExtra != nil:
			after = concat(prev.AfterExtra, after)
			prev.AfterExtra = nil
		}
	}
	obj.AfterExtra = after
}

type opencodeDoc struct {
	root      hujson.Value
	obj       *hujson.Object
	before    map[string]any
	nl        string
	multiline bool
	unit      string
}

func opencodeUnsafe(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUnsafe, fmt.Sprintf(format, args...))
}

func parseOpenCode(src []byte) (*opencodeDoc, error) {
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
	d := &opencodeDoc{root: root, obj: obj, before: decoded.(map[string]any), nl: "\n", unit: "  "}
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

// mcp returns the mcp object, nil when there is none. It refuses the shapes
// we must not edit.
func (d *opencodeDoc) mcp(name string) (*hujson.Object, int, error) {
	i, count := findMember(d.obj, "mcp")
	switch {
	case count == 0:
		return nil, -1, nil
	case count > 1:
		return nil, -1, opencodeUnsafe(`the file has %d "mcp" keys; keep one, then run again`, count)
	}
	mcp, ok := d.obj.Members[i].Value.Value.(*hujson.Object)
	if !ok {
		return nil, -1, opencodeUnsafe(`"mcp" is not an object; fix it by hand, then run again`)
	}
	if _, c := findMember(mcp, name); c > 1 {
		return nil, -1, opencodeUnsafe(`"mcp" has %d %q keys; keep one, then run again`, c, name)
	}
	return mcp, i, nil
}

func opencodeValidName(name string) error {
	if !validName(name) {
		return fmt.Errorf("%w: server name %q: use letters, digits, '-' and '_' only", ErrInvalidEntry, name)
	}
	if name == "servers" {
		return fmt.Errorf(`%w: server name "servers" would read as the OpenCode 2 "mcp.servers" shape; choose another name`, ErrInvalidEntry)
	}
	return nil
}

// UpsertOpenCode adds or replaces our mcp.<name> entry in an OpenCode 1.x
// opencode.json / opencode.jsonc, keeping comments, trailing commas, layout
// and every other member. Empty input (only whitespace) gives a new minimal
// file. An existing entry equal to ours gives changed=false; a different one
// a *ConflictError unless force, which replaces its value in place.
//
// It never writes the OpenCode 2 shape and refuses files that already have
// "mcp.servers" (another config generation).
func UpsertOpenCode(src []byte, e Entry, force bool) (out []byte, changed bool, err error) {
	if err := e.validate(); err != nil {
		return nil, false, err
	}
	if err := opencodeValidName(e.Name); err != nil {
		return nil, false, err
	}
	want := opencodeValue(e)
	if len(bytes.TrimSpace(src)) == 0 {
		out = []byte("{\n  \"$schema\": " + jsonString(opencodeSchema) + ",\n  \"mcp\": {\n    " +
			jsonString(e.Name) + ": " + renderOpenCodeValue(e, "    ", "  ", "\n", true) + "\n  }\n}\n")
		if err := verifyOpenCode(map[string]any{"$schema": opencodeSchema}, out, e.Name, want); err != nil {
			return nil, false, err
		}
		return out, true, nil
	}
	d, err := parseOpenCode(src)
	if err != nil {
		return nil, false, err
	}
	mcp, mi, err := d.mcp(e.Name)
	if err != nil {
		return nil, false, err
	}
	if mcp != nil {
		if _, c := findMember(mcp, "servers"); c > 0 {
			return nil, false, opencodeUnsafe(`the file uses "mcp.servers", the OpenCode 2 configuration shape; cgcat writes only the OpenCode 1.x shape (mcp.<name>) and will not mix generations: add the entry by hand (see cgcat install --print) or keep the config on one generation`)
		}
	}
	rootIndent := memberIndent(d.obj, "", d.unit)
	switch {
	case mcp == nil:
		indent := rootIndent
		inner := indent + d.unit
		var text string
		if d.multiline {
			text = "{" + d.nl + inner + jsonString(e.Name) + ": " + renderOpenCodeValue(e, inner, d.unit, d.nl, true) + d.nl + indent + "}"
		} else {
			text = "{" + jsonString(e.Name) + ": " + renderOpenCodeValue(e, "", "", "", false) + "}"
		}
		v, err := parseTrimmed(text)
		if err != nil {
			return nil, false, fmt.Errorf("%w: rendering the entry: %v", ErrVerify, err)
		}
		insertMember(d.obj, "mcp", v, indent, closingIndent(d.obj, ""), d.nl, objMultiline(d.obj, d.multiline))
	default:
		mcpIndent := rootIndent
		if in, ok := lineIndent(d.obj.Members[mi].Name.BeforeExtra); ok {
			mcpIndent = in
		}
		ml := objMultiline(mcp, d.multiline)
		indent := memberIndent(mcp, mcpIndent, d.unit)
		idx, _ := findMember(mcp, e.Name)
		if idx >= 0 {
			cur, err := decodeJSONC(mcp.Members[idx].Value)
			if err != nil {
				return nil, false, fmt.Errorf("%w: %v", ErrUnparsable, err)
			}
			if equalValue(cur, want) {
				return src, false, nil
			}
			if !force {
				existing := hujson.Value{Value: mcp.Members[idx].Value.Value}.String()
				if in, ok := lineIndent(mcp.Members[idx].Name.BeforeExtra); ok && in != "" {
					existing = strings.ReplaceAll(existing, "\n"+in, "\n")
				}
				return nil, false, &ConflictError{Host: "opencode", Name: e.Name,
					Existing: jsonString(e.Name) + ": " + existing}
			}
			if in, ok := lineIndent(mcp.Members[idx].Name.BeforeExtra); ok {
				indent = in
			}
			v, err := parseTrimmed(renderOpenCodeValue(e, indent, d.unit, d.nl, ml))
			if err != nil {
				return nil, false, fmt.Errorf("%w: rendering the entry: %v", ErrVerify, err)
			}
			mcp.Members[idx].Value.Value = v
		} else {
			v, err := parseTrimmed(renderOpenCodeValue(e, indent, d.unit, d.nl, ml))
			if err != nil {
				return nil, false, fmt.Errorf("%w: rendering the entry: %v", ErrVerify, err)
			}
			insertMember(mcp, e.Name, v, indent, closingIndent(mcp, mcpIndent), d.nl, ml)
		}
	}
	out = d.root.Pack()
	if err := verifyOpenCode(d.before, out, e.Name, want); err != nil {
		return nil, false, err
	}
	return out, true, nil
}

// RemoveOpenCode removes our mcp.<name> entry. The "mcp" object itself
// stays (possibly empty). It returns src unchanged (changed=false) when
// there is no such entry.
func RemoveOpenCode(src []byte, name string) (out []byte, changed bool, err error) {
	if err := opencodeValidName(name); err != nil {
		return nil, false, err
	}
	if len(bytes.TrimSpace(src)) == 0 {
		return src, false, nil
	}
	d, err := parseOpenCode(src)
	if err != nil {
		return nil, false, err
	}
	mcp, _, err := d.mcp(name)
	if err != nil {
		return nil, false, err
	}
	if mcp == nil {
		return src, false, nil
	}
	idx, _ := findMember(mcp, name)
	if idx < 0 {
		return src, false, nil
	}
	removeMember(mcp, idx, d.nl)
	out = d.root.Pack()
	if err := verifyOpenCode(d.before, out, name, nil); err != nil {
		return nil, false, err
	}
	return out, true, nil
}

// verifyOpenCode parses out and checks it equals before with mcp.<name> set
// to want (or removed, when want is nil).
func verifyOpenCode(before map[string]any, out []byte, name string, want map[string]any) error {
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
	mcp := map[string]any{}
	if raw, ok := before["mcp"]; ok {
		m, ok := raw.(map[string]any)
		if !ok {
			return opencodeUnsafe(`"mcp" is not an object`)
		}
		for k, v := range m {
			mcp[k] = v
		}
	}
	if want != nil {
		// Compare through JSON so that want's types match decoded ones.
		mcp[name] = roundTrip(want)
	} else {
		delete(mcp, name)
	}
	expected["mcp"] = mcp
	if !equalValue(expected, decoded) {
		return fmt.Errorf("%w: the edited file would change more than the mcp.%s entry; nothing was written (please report this with the file)", ErrVerify, name)
	}
	return nil
}

func roundTrip(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	if dec.Decode(&out) != nil {
		return v
	}
	return out
}
