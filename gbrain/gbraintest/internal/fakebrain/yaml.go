package fakebrain

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// The fake's own reading and writing of frontmatter, written apart from the
// cgcat codec so the two do not share mistakes. It reads a generic YAML
// subset (scalars with YAML typing, flow and block lists; nested maps are
// "invalid YAML") and writes the way GBrain re-serialises: type and title
// first, the other keys in Postgres JSONB order (shorter keys first, then
// bytewise), tags last as a block list, strings quoted only when needed and
// then with single quotes, dates widened to timestamps.

var (
	dateRE  = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
	stampRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}[Tt ]`)
	intRE   = regexp.MustCompile(`^[-+]?[0-9]+$`)
	floatRE = regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)
)

// ErrYAML marks frontmatter GBrain would call invalid.
var ErrYAML = errors.New("invalid YAML frontmatter")

// SplitPage separates "---\n<yaml>---\n<body>" into its parts. A page
// without a complete leading fence is all body.
func SplitPage(content string) (yaml string, body string, has bool) {
	content = strings.ReplaceAll(content, "\r\n", "\n")
	if !strings.HasPrefix(content, "---\n") {
		return "", content, false
	}
	rest := content[4:]
	if strings.HasPrefix(rest, "---\n") || rest == "---" {
		return "", strings.TrimPrefix(rest, "---"), true
	}
	i := strings.Index(rest, "\n---\n")
	if i < 0 {
		if strings.HasSuffix(rest, "\n---") {
			return rest[:len(rest)-3], "", true
		}
		return "", content, false
	}
	return rest[:i+1], rest[i+5:], true
}

// ParseYAML reads the frontmatter into ordered entries.
func ParseYAML(src string) ([]KV, error) {
	var out []KV
	seen := map[string]bool{}
	lines := strings.Split(src, "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.TrimSpace(l) == "" || strings.HasPrefix(strings.TrimSpace(l), "#") {
			continue
		}
		k, v, err := yamlKeyLine(l, seen)
		if err != nil {
			return nil, err
		}
		var val any
		if v == "" || strings.HasPrefix(v, "#") {
			var used int
			if val, used, err = yamlBlockList(lines[i+1:], k); err != nil {
				return nil, err
			}
			i += used
		} else if val, err = yamlInline(v); err != nil {
			return nil, err
		}
		out = append(out, KV{k, val})
	}
	return out, nil
}

// yamlKeyLine splits a top-level "key: value" line (the value trimmed),
// refusing indentation, list items and duplicate keys.
func yamlKeyLine(l string, seen map[string]bool) (k, v string, err error) {
	if l[0] == ' ' || l[0] == '\t' || l[0] == '-' {
		return "", "", fmt.Errorf("%w: line %q: unexpected indentation", ErrYAML, l)
	}
	k, v, ok := strings.Cut(l, ":")
	if !ok || strings.TrimSpace(k) == "" {
		return "", "", fmt.Errorf("%w: line %q: expected key: value", ErrYAML, l)
	}
	k = strings.TrimSpace(k)
	if seen[k] {
		return "", "", fmt.Errorf("%w: duplicated mapping key %q", ErrYAML, k)
	}
	seen[k] = true
	if v != "" && v[0] != ' ' {
		return "", "", fmt.Errorf("%w: line %q", ErrYAML, l)
	}
	return k, strings.TrimSpace(v), nil
}

// yamlBlockList reads the "- item" lines that follow key k's empty value:
// a list when there are any, nil otherwise. It returns how many lines it
// read.
func yamlBlockList(lines []string, k string) (val any, used int, err error) {
	var items []any
	isList := false
	for ; used < len(lines); used++ {
		n := strings.TrimLeft(lines[used], " ")
		if strings.TrimSpace(lines[used]) == "" {
			continue
		}
		if !strings.HasPrefix(n, "- ") && n != "-" {
			if n != lines[used] {
				return nil, 0, fmt.Errorf("%w: nested mapping under %q", ErrYAML, k)
			}
			break
		}
		item, err := scalar(strings.TrimSpace(strings.TrimPrefix(n, "-")))
		if err != nil {
			return nil, 0, err
		}
		items = append(items, item)
		isList = true
	}
	if isList {
		return items, used, nil
	}
	return nil, used, nil
}

// yamlInline reads a value on its key's line: a flow sequence or a scalar.
func yamlInline(v string) (any, error) {
	if strings.HasPrefix(v, "[") {
		list, err := flow(v)
		if err != nil {
			return nil, err
		}
		return list, nil
	}
	return scalar(v)
}

func flow(v string) ([]any, error) {
	if !strings.HasSuffix(v, "]") {
		return nil, fmt.Errorf("%w: unterminated flow sequence %q", ErrYAML, v)
	}
	inner := strings.TrimSpace(v[1 : len(v)-1])
	list := []any{}
	if inner == "" {
		return list, nil
	}
	// Split on commas outside quotes.
	var parts []string
	start, q := 0, byte(0)
	for i := 0; i < len(inner); i++ {
		c := inner[i]
		switch {
		case q != 0 && c == q:
			if q == '\'' && i+1 < len(inner) && inner[i+1] == '\'' {
				i++
				continue
			}
			q = 0
		case q == 0 && (c == '"' || c == '\''):
			q = c
		case q == '"' && c == '\\':
			i++
		case q == 0 && c == ',':
			parts = append(parts, inner[start:i])
			start = i + 1
		case q == 0 && (c == '[' || c == '{'):
			return nil, fmt.Errorf("%w: nested flow collection", ErrYAML)
		}
	}
	parts = append(parts, inner[start:])
	for _, p := range parts {
		s, err := scalar(strings.TrimSpace(p))
		if err != nil {
			return nil, err
		}
		list = append(list, s)
	}
	return list, nil
}

// scalar types a YAML scalar the way js-yaml's core schema does.
func scalar(s string) (any, error) {
	if s == "" {
		return nil, nil
	}
	switch s[0] {
	case '\'':
		if len(s) < 2 || !strings.HasSuffix(s, "'") {
			return nil, fmt.Errorf("%w: unterminated quoted scalar %s", ErrYAML, s)
		}
		return strings.ReplaceAll(s[1:len(s)-1], "''", "'"), nil
	case '"':
		var out string
		if err := json.Unmarshal([]byte(s), &out); err != nil {
			return nil, fmt.Errorf("%w: bad double-quoted scalar %s", ErrYAML, s)
		}
		return out, nil
	case '{', '&', '*', '!', '|', '>', '%', '@', '`':
		return nil, fmt.Errorf("%w: unsupported construct %q", ErrYAML, s)
	}
	if i := strings.Index(s, " #"); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	if strings.Contains(s, ": ") {
		return nil, fmt.Errorf("%w: mapping values are not allowed here: %q", ErrYAML, s)
	}
	switch s {
	case "~", "null", "Null", "NULL":
		return nil, nil
	case "true", "True", "TRUE":
		return true, nil
	case "false", "False", "FALSE":
		return false, nil
	}
	if intRE.MatchString(s) || floatRE.MatchString(s) {
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f, nil
		}
	}
	if dateRE.MatchString(s) {
		// A YAML date becomes a JavaScript Date, stored as its JSON string.
		return s + "T00:00:00.000Z", nil
	}
	return s, nil
}

// jsonbLess is Postgres JSONB key order: shorter first, then bytewise.
func jsonbLess(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

// Render writes a stored page back as GBrain does.
func Render(p *Page) string {
	var b strings.Builder
	b.WriteString("---\n")
	b.WriteString("type: " + renderScalar(p.Type) + "\n")
	b.WriteString("title: " + renderScalar(p.Title) + "\n")
	fm := append([]KV(nil), p.Frontmatter...)
	sort.SliceStable(fm, func(i, j int) bool { return jsonbLess(fm[i].K, fm[j].K) })
	for _, kv := range fm {
		renderKV(&b, kv.K, kv.V)
	}
	if len(p.Tags) > 0 {
		tags := make([]any, len(p.Tags))
		for i, t := range p.Tags {
			tags[i] = t
		}
		renderKV(&b, "tags", tags)
	}
	b.WriteString("---\n")
	if p.Body != "" {
		b.WriteString("\n" + p.Body + "\n")
	}
	return b.String()
}

func renderKV(b *strings.Builder, k string, v any) {
	if list, ok := v.([]any); ok {
		if len(list) == 0 {
			b.WriteString(k + ": []\n")
			return
		}
		b.WriteString(k + ":\n")
		for _, it := range list {
			b.WriteString("  - " + renderScalar(it) + "\n")
		}
		return
	}
	b.WriteString(k + ": " + renderScalar(v) + "\n")
}

func renderScalar(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(x)
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e21 {
			return strconv.FormatFloat(x, 'f', -1, 64)
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	case string:
		return renderString(x)
	default:
		b, _ := json.Marshal(x)
		return renderString(string(b))
	}
}

func renderString(s string) string {
	for _, r := range s {
		if !unicode.IsPrint(r) && r != ' ' {
			b, _ := json.Marshal(s)
			return string(b)
		}
	}
	if needsQuotes(s) {
		return "'" + strings.ReplaceAll(s, "'", "''") + "'"
	}
	return s
}

func needsQuotes(s string) bool {
	if s == "" || s != strings.TrimSpace(s) {
		return true
	}
	if strings.ContainsAny(s[:1], "-?:,[]{}#&*!|>'\"%@`") {
		return true
	}
	if strings.Contains(s, ": ") || strings.Contains(s, " #") || strings.HasSuffix(s, ":") {
		return true
	}
	v, err := scalar(s)
	if err != nil {
		return true
	}
	if str, ok := v.(string); !ok || str != s {
		return true // it would read back as another type, or widened
	}
	return stampRE.MatchString(s)
}
