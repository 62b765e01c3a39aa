package server

import (
	"encoding/json"
	"strconv"
)

// top is what a look at the top level of one JSON-RPC message found,
// without decoding any nested value: a message nested 10,000 levels deep
// (past encoding/json's limit) is read as easily as a flat one.
type top struct {
	id       json.RawMessage // the "id" member when a string or a number
	method   bool            // a "method" member that is a string
	response bool            // a "result" or "error" member
	complete bool            // the whole line is one object with well-formed members
}

// scanTop walks the top-level object that b holds. Nested objects and
// arrays are skipped by counting brackets (strings respected), so no depth
// is too deep; members are read up to where b stops making sense, and
// complete says whether that was the end of one whole object.
func scanTop(b []byte) top {
	var t top
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return t
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		t.complete = skipSpace(b, i+1) == len(b)
		return t
	}
	for i < len(b) {
		if b[i] != '"' {
			return t
		}
		end := skipString(b, i)
		if end < 0 {
			return t
		}
		var key string
		if json.Unmarshal(b[i:end], &key) != nil {
			return t
		}
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return t
		}
		i = skipSpace(b, i+1)
		vend := skipValue(b, i)
		if vend < 0 {
			return t
		}
		v := b[i:vend]
		switch key {
		case "id":
			if len(v) > 0 && (v[0] == '"' || v[0] == '-' || v[0] >= '0' && v[0] <= '9') && json.Valid(v) {
				t.id = v
			}
		case "method":
			t.method = len(v) > 0 && v[0] == '"'
		case "result", "error":
			t.response = true
		}
		i = skipSpace(b, vend)
		if i >= len(b) {
			return t
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			t.complete = skipSpace(b, i+1) == len(b)
			return t
		default:
			return t
		}
	}
	return t
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string that starts at b[i] (a
// quote), or -1 when it does not end.
func skipString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// skipValue returns the index after the value that starts at b[i]: a
// string, an object or array (any depth), or a scalar; -1 when it does not
// end. Scalars and nested members are not checked.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				if j = skipString(b, j); j < 0 {
					return -1
				}
				j--
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
		j++
	}
	if j == i {
		return -1
	}
	return j
}

// idKey is a request id as both sides of the connection see it: mcp-go
// reads a number as a float64 and writes it back so, so 1 and 1.0 are one
// id; a string is itself.
func idKey(id json.RawMessage) string {
	if len(id) > 0 && id[0] == '"' {
		var s string
		_ = json.Unmarshal(id, &s)
		return "s" + s
	}
	f, err := strconv.ParseFloat(string(id), 64)
	if err != nil {
		return "r" + string(id)
	}
	return "n" + strconv.FormatFloat(f, 'g', -1, 64)
}
