package gbrain

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A hand-written reader for the small YAML subset a card's frontmatter uses,
// in the forms cgcat writes and GBrain re-serialises: one "key: value" per
// line; values are plain, 'single-quoted' or "double-quoted" scalars, flow
// lists [a, 'b'] of scalars, or block lists ("- item" lines, indented or
// not). Anything else — nested maps, anchors, tags, multi-line scalars,
// duplicate keys — is refused: a card is small and machine-written, so an
// unexpected shape means it is not (or no longer) ours. A YAML library would
// accept far more than we can check.

const (
	maxFrontmatterLines = 400
	maxFrontmatterKeys  = 64
)

var fmKeyRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// fmValue is a scalar (List == nil, Null for ~/null/empty) or a list.
type fmValue struct {
	Scalar string
	Quoted bool // the scalar was quoted: never a number or null
	Null   bool
	IsList bool
	List   []fmValue
}

type frontmatter struct {
	keys   []string
	values map[string]fmValue
}

var errFM = errors.New("frontmatter")

func fmErr(line int, format string, a ...any) error {
	return fmt.Errorf("%w line %d: %s", errFM, line, fmt.Sprintf(format, a...))
}

// splitFrontmatter returns the frontmatter lines and the body of a markdown
// page that starts with a "---" fence.
func splitFrontmatter(content string) (fm []string, body string, err error) {
	if !strings.HasPrefix(content, "---\n") {
		return nil, "", fmt.Errorf("%w: no leading --- fence", errFM)
	}
	rest := content[len("---\n"):]
	lines := strings.SplitAfter(rest, "\n")
	off := 0
	for i, l := range lines {
		if i >= maxFrontmatterLines {
			return nil, "", fmt.Errorf("%w: more than %d lines", errFM, maxFrontmatterLines)
		}
		if strings.TrimRight(l, "\n") == "---" {
			return fm, rest[off+len(l):], nil
		}
		fm = append(fm, strings.TrimSuffix(l, "\n"))
		off += len(l)
	}
	return nil, "", fmt.Errorf("%w: no closing --- fence", errFM)
}

func parseFrontmatter(lines []string) (*frontmatter, error) {
	f := &frontmatter{values: map[string]fmValue{}}
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		n := i + 2 // 1-based, after the opening fence
		if strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimLeft(line, " "), "#") {
			continue
		}
		key, rest, err := f.keyLine(line, n)
		if err != nil {
			return nil, err
		}
		var v fmValue
		if strings.TrimSpace(stripComment(rest)) == "" {
			// A block list follows, or the value is null.
			var used int
			if v, used, err = parseBlockList(lines[i+1:], i+3, key); err != nil {
				return nil, err
			}
			i += used
		} else if v, err = parseInlineValue(rest, n, key); err != nil {
			return nil, err
		}
		f.keys = append(f.keys, key)
		f.values[key] = v
	}
	return f, nil
}

// keyLine splits a top-level "key: rest" line, refusing what the subset
// does not hold: tabs, indentation, list items, bad or duplicate keys, too
// many keys. n is the line's number.
func (f *frontmatter) keyLine(line string, n int) (key, rest string, err error) {
	if strings.ContainsRune(line, '\t') {
		return "", "", fmErr(n, "tab character")
	}
	if line[0] == ' ' || strings.HasPrefix(line, "- ") || line == "-" {
		return "", "", fmErr(n, "unexpected indented line or list item")
	}
	colon := strings.Index(line, ":")
	if colon < 0 {
		return "", "", fmErr(n, "not a key: value line")
	}
	key, rest = line[:colon], line[colon+1:]
	if !fmKeyRE.MatchString(key) {
		return "", "", fmErr(n, "bad key %q", key)
	}
	if _, dup := f.values[key]; dup {
		return "", "", fmErr(n, "duplicate key %q", key)
	}
	if len(f.keys) >= maxFrontmatterKeys {
		return "", "", fmErr(n, "more than %d keys", maxFrontmatterKeys)
	}
	return key, rest, nil
}

// parseBlockList reads the "- item" lines that follow key's empty value:
// a list when there are any, null otherwise. It returns how many of lines
// it read; n is the number of lines[0].
func parseBlockList(lines []string, n int, key string) (v fmValue, used int, err error) {
	var items []fmValue
	indent := -1
	for ; used < len(lines); used++ {
		next := lines[used]
		trimmed := strings.TrimLeft(next, " ")
		if strings.TrimSpace(next) == "" {
			continue
		}
		if !strings.HasPrefix(trimmed, "- ") && trimmed != "-" {
			if len(next) > len(trimmed) {
				return fmValue{}, 0, fmErr(n+used, "nested value under %q is not supported", key)
			}
			break
		}
		in := len(next) - len(trimmed)
		if indent >= 0 && in != indent {
			return fmValue{}, 0, fmErr(n+used, "list items of %q are not aligned", key)
		}
		indent = in
		item, err := parseScalar(strings.TrimPrefix(trimmed, "-"), n+used)
		if err != nil {
			return fmValue{}, 0, err
		}
		items = append(items, item)
	}
	if indent < 0 {
		return fmValue{Null: true}, used, nil
	}
	return fmValue{IsList: true, List: items}, used, nil
}

// parseInlineValue reads the value written on key's own line: a flow list
// or a scalar.
func parseInlineValue(rest string, n int, key string) (fmValue, error) {
	if rest[0] != ' ' {
		return fmValue{}, fmErr(n, "no space after %q:", key)
	}
	val := strings.TrimSpace(rest)
	if strings.HasPrefix(val, "[") {
		return parseFlowList(val, n)
	}
	return parseScalar(val, n)
}

// stripComment drops a " #..." comment from a plain scalar.
func stripComment(s string) string {
	if strings.HasPrefix(strings.TrimLeft(s, " "), "#") {
		return ""
	}
	if i := strings.Index(s, " #"); i >= 0 {
		return s[:i]
	}
	return s
}

// parseScalar reads one scalar that must fill the rest of its line.
func parseScalar(s string, n int) (fmValue, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return fmValue{Null: true}, nil
	}
	switch s[0] {
	case '"', '\'':
		v, rest, err := parseQuoted(s, n)
		if err != nil {
			return fmValue{}, err
		}
		if r := strings.TrimSpace(rest); r != "" && !strings.HasPrefix(r, "#") {
			return fmValue{}, fmErr(n, "text after a quoted scalar")
		}
		return fmValue{Scalar: v, Quoted: true}, nil
	case '&', '*', '!', '|', '>', '{', '[', '%', '@', '`', ']', '}', ',', '?':
		return fmValue{}, fmErr(n, "unsupported YAML construct %q", s[0])
	case '-':
		if strings.HasPrefix(s, "- ") || s == "-" {
			return fmValue{}, fmErr(n, "nested list is not supported")
		}
	}
	plain := strings.TrimSpace(stripComment(s))
	if strings.Contains(plain, ": ") || strings.HasSuffix(plain, ":") {
		return fmValue{}, fmErr(n, "nested map is not supported")
	}
	switch plain {
	case "~", "null", "Null", "NULL":
		return fmValue{Null: true}, nil
	}
	return fmValue{Scalar: plain}, nil
}

// parseQuoted reads a quoted scalar at the start of s and returns it and
// what follows the closing quote.
func parseQuoted(s string, n int) (string, string, error) {
	q := s[0]
	var b strings.Builder
	for i := 1; i < len(s); {
		c := s[i]
		switch {
		case q == '\'' && c == '\'':
			if i+1 < len(s) && s[i+1] == '\'' {
				b.WriteByte('\'')
				i += 2
				continue
			}
			return b.String(), s[i+1:], nil
		case q == '"' && c == '"':
			return b.String(), s[i+1:], nil
		case q == '"' && c == '\\':
			r, width, err := readEscape(s[i:], n)
			if err != nil {
				return "", "", err
			}
			b.WriteRune(r)
			i += width
		default:
			b.WriteByte(c)
			i++
		}
	}
	return "", "", fmErr(n, "unterminated quoted scalar")
}

// simpleEscapes are the one-letter escapes of a double-quoted scalar.
var simpleEscapes = map[byte]rune{
	'\\': '\\', '"': '"', '/': '/', 'n': '\n', 't': '\t', 'r': '\r', '0': 0, 'b': '\b', 'f': '\f',
	'e': 0x1b, ' ': ' ', 'N': '\u0085', '_': '\u00a0', 'L': '\u2028', 'P': '\u2029',
}

// escapeWidths are the hex digits of the \x, \u and \U escapes.
var escapeWidths = map[byte]int{'x': 2, 'u': 4, 'U': 8}

// readEscape reads the escape at the start of s (its backslash included)
// and returns the character and how many bytes it took.
func readEscape(s string, n int) (rune, int, error) {
	if len(s) < 2 {
		return 0, 0, fmErr(n, "unfinished escape")
	}
	e := s[1]
	if r, ok := simpleEscapes[e]; ok {
		return r, 2, nil
	}
	width, ok := escapeWidths[e]
	if !ok {
		return 0, 0, fmErr(n, "unknown escape \\%c", e)
	}
	if 2+width > len(s) {
		return 0, 0, fmErr(n, "short \\%c escape", e)
	}
	cp, err := strconv.ParseUint(s[2:2+width], 16, 32)
	if err != nil || !utf8.ValidRune(rune(cp)) {
		return 0, 0, fmErr(n, "bad \\%c escape", e)
	}
	return rune(cp), 2 + width, nil
}

// parseFlowList reads [a, 'b', "c"] on one line.
func parseFlowList(s string, n int) (fmValue, error) {
	v := fmValue{IsList: true, List: []fmValue{}}
	i := 1
	expectItem := true
	for {
		for i < len(s) && s[i] == ' ' {
			i++
		}
		if i >= len(s) {
			return fmValue{}, fmErr(n, "unterminated flow list")
		}
		switch c := s[i]; {
		case c == ']':
			if expectItem && len(v.List) > 0 {
				return fmValue{}, fmErr(n, "empty item in flow list")
			}
			if r := strings.TrimSpace(s[i+1:]); r != "" && !strings.HasPrefix(r, "#") {
				return fmValue{}, fmErr(n, "text after a flow list")
			}
			return v, nil
		case c == ',':
			if expectItem {
				return fmValue{}, fmErr(n, "empty item in flow list")
			}
			expectItem = true
			i++
		case !expectItem:
			return fmValue{}, fmErr(n, "missing comma in flow list")
		case c == '"' || c == '\'':
			str, rest, err := parseQuoted(s[i:], n)
			if err != nil {
				return fmValue{}, err
			}
			v.List = append(v.List, fmValue{Scalar: str, Quoted: true})
			i = len(s) - len(rest)
			expectItem = false
		default:
			j := i
			for j < len(s) && s[j] != ',' && s[j] != ']' {
				j++
			}
			item := strings.TrimSpace(s[i:j])
			if item == "" || strings.ContainsAny(item, "[{}\"'#&*!|>") || strings.Contains(item, ": ") {
				return fmValue{}, fmErr(n, "unsupported flow list item %q", item)
			}
			v.List = append(v.List, fmValue{Scalar: item})
			i = j
			expectItem = false
		}
	}
}

// Typed accessors used by Decode.

func (f *frontmatter) has(key string) bool { _, ok := f.values[key]; return ok }

func (f *frontmatter) str(key string) (string, bool, error) {
	v, ok := f.values[key]
	if !ok || v.Null {
		return "", false, nil
	}
	if v.IsList {
		return "", false, fmt.Errorf("%w: %s is a list, want a string", errFM, key)
	}
	return v.Scalar, true, nil
}

func (f *frontmatter) uint(key string) (uint64, bool, error) {
	v, ok := f.values[key]
	if !ok || v.Null {
		return 0, false, nil
	}
	if v.IsList || v.Quoted {
		return 0, false, fmt.Errorf("%w: %s is not a number", errFM, key)
	}
	u, err := strconv.ParseUint(v.Scalar, 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("%w: %s is not an unsigned integer", errFM, key)
	}
	return u, true, nil
}

func (f *frontmatter) list(key string, maxItems int) ([]string, error) {
	v, ok := f.values[key]
	if !ok || v.Null {
		return nil, nil
	}
	if !v.IsList {
		return nil, fmt.Errorf("%w: %s is not a list", errFM, key)
	}
	if len(v.List) > maxItems {
		return nil, fmt.Errorf("%w: %s has more than %d items", errFM, key, maxItems)
	}
	out := make([]string, 0, len(v.List))
	for _, it := range v.List {
		if it.Null {
			return nil, fmt.Errorf("%w: %s has an empty item", errFM, key)
		}
		out = append(out, it.Scalar)
	}
	return out, nil
}
