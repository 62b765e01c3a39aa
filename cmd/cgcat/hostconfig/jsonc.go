package hostconfig

import (
	"bytes"
	"encoding/json"

	"github.com/tailscale/hujson"
)

// Layout-keeping edits of one member of a JSON/JSONC object, shared by the
// JSON hosts (OpenCode, Claude Code, Gemini CLI).

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
