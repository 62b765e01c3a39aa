package fakebrain

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"
)

// ToolError is an isError answer: {error, message, suggestion}.
type ToolError struct {
	Code       string `json:"error"`
	Message    string `json:"message"`
	Suggestion string `json:"suggestion,omitempty"`
}

func (e *ToolError) Error() string { return e.Code + ": " + e.Message }

// Result is what a tool answers: the JSON value of content[0] and any
// plain-text blocks after it.
type Result struct {
	Value any
	Extra []string
}

// Brain runs tools against a State for one server process.
type Brain struct {
	Source     string   // the source this server writes to and reads by default
	Registered []string // sources registered outside the state (env)
	Now        func() time.Time
	// Caller is the authenticated HTTP caller (nil over stdio): its token
	// decides Source, and an OAuth client may name only its granted
	// sources in source_id.
	Caller *Caller
}

var sourceRE = regexp.MustCompile(`^[a-z0-9-]{1,32}$`)

// ValidSource reports a well-formed source id.
func ValidSource(s string) bool { return sourceRE.MatchString(s) }

func (b *Brain) registered(st *State) []string {
	set := map[string]bool{"default": true}
	for _, s := range b.Registered {
		set[s] = true
	}
	for _, s := range st.Sources {
		set[s] = true
	}
	var out []string
	for s := range set {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// now is the time of a write: its updated_at as GBrain spells it (ms), its
// sequence number, and the time in µs, later than every earlier write's.
func (b *Brain) now(st *State) (string, int64, int64) {
	st.Seq++
	t := time.Now
	if b.Now != nil {
		t = b.Now
	}
	us := t().UnixMicro()
	if us <= st.LastMicro {
		us = st.LastMicro + 1
	}
	st.LastMicro = us
	st.touch()
	return time.UnixMicro(us).UTC().Format(timeLayout), st.Seq, us
}

// timeLayout is how GBrain's answers spell a time (JavaScript's
// Date.toISOString: milliseconds, Z).
const timeLayout = "2006-01-02T15:04:05.000Z"

func notFound(slug string) *ToolError {
	return &ToolError{Code: "page_not_found", Message: "Page not found: " + slug,
		Suggestion: "Check the slug with list_pages or search; slugs are case-sensitive on read."}
}

func invalid(msg string) *ToolError {
	return &ToolError{Code: "invalid_params", Message: msg}
}

// checkSlug mirrors GBrain's slug refusals.
func checkSlug(slug string) *ToolError {
	bad := func(why string) *ToolError {
		return &ToolError{Code: "internal_error", Message: fmt.Sprintf("Invalid slug %q: %s", slug, why)}
	}
	low := strings.ToLower(slug)
	switch {
	case strings.TrimSpace(slug) == "":
		return bad("empty")
	case strings.HasPrefix(slug, "/"):
		return bad("leading slash")
	case strings.Contains(slug, `\`):
		return bad("backslash")
	case strings.Contains(low, "%2e") || strings.Contains(low, "%2f") || strings.Contains(low, "%5c"):
		return bad("percent-encoded path characters")
	}
	for _, seg := range strings.Split(slug, "/") {
		if seg == ".." || seg == "." {
			return bad("dot segment")
		}
	}
	for _, r := range slug {
		if unicode.IsControl(r) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
			return bad("control or bidi character")
		}
	}
	return nil
}

// hashFields is GBrain's content_hash: sha256 over the parsed fields as
// written (frontmatter order and written tags included).
func hashFields(typ, title, body string, fm []KV, tags []string) string {
	b, _ := json.Marshal(struct {
		Type, Title, Body string
		FM                []KV
		Tags              []string
	}{typ, title, body, fm, tags})
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func pageJSON(p *Page, content bool) map[string]any {
	fm := map[string]any{}
	for _, kv := range p.Frontmatter {
		fm[kv.K] = kv.V
	}
	var deleted any
	if p.DeletedAt != "" {
		deleted = p.DeletedAt
	}
	tags := p.Tags
	if tags == nil {
		tags = []string{}
	}
	m := map[string]any{
		"id": p.ID, "slug": p.Slug, "type": p.Type, "title": p.Title,
		"compiled_truth": p.Body, "timeline": "", "frontmatter": fm,
		"content_hash": p.ContentHash, "created_at": p.CreatedAt, "updated_at": p.UpdatedAt,
		"deleted_at": deleted, "source_id": p.Source, "tags": tags,
	}
	if content {
		m["content"] = Render(p)
	}
	return m
}

func str(args map[string]any, k string) (string, bool, *ToolError) {
	v, ok := args[k]
	if !ok || v == nil {
		return "", false, nil
	}
	s, isStr := v.(string)
	if !isStr {
		return "", false, invalid(fmt.Sprintf("%s must be a string", k))
	}
	return s, true, nil
}

func boolean(args map[string]any, k string) (bool, *ToolError) {
	v, ok := args[k]
	if !ok || v == nil {
		return false, nil
	}
	b, isBool := v.(bool)
	if !isBool {
		return false, invalid(fmt.Sprintf("%s must be a boolean", k))
	}
	return b, nil
}

func integer(args map[string]any, k string, def int) (int, *ToolError) {
	v, ok := args[k]
	if !ok || v == nil {
		return def, nil
	}
	f, isNum := v.(float64)
	if !isNum || f != float64(int(f)) || f < 0 {
		return 0, invalid(fmt.Sprintf("%s must be a non-negative integer", k))
	}
	return int(f), nil
}

func (b *Brain) readSource(args map[string]any) (string, *ToolError) {
	s, ok, te := str(args, "source_id")
	if te != nil {
		return "", te
	}
	if ok {
		if b.Caller != nil && b.Caller.Federated != nil && !slices.Contains(b.Caller.Federated, s) {
			return "", &ToolError{Code: "permission_denied", Message: fmt.Sprintf("source '%s' is outside your granted sources", s),
				Suggestion: "Request access to this source, or omit source_id to search within your grant."}
		}
		return s, nil
	}
	return b.Source, nil
}
