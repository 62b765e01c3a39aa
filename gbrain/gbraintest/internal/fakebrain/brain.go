package fakebrain

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"regexp"
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

func (b *Brain) now(st *State) (string, int64) {
	st.Seq++
	t := time.Now
	if b.Now != nil {
		t = b.Now
	}
	return t().UTC().Format("2006-01-02T15:04:05.000Z"), st.Seq
}

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
		if b.Caller != nil && b.Caller.Federated != nil && !contains(b.Caller.Federated, s) {
			return "", &ToolError{Code: "permission_denied", Message: fmt.Sprintf("source '%s' is outside your granted sources", s),
				Suggestion: "Request access to this source, or omit source_id to search within your grant."}
		}
		return s, nil
	}
	return b.Source, nil
}

// GetPage: exact slug (no lowercasing on read), optional fuzzy match.
func (b *Brain) GetPage(st *State, args map[string]any) (any, error) {
	slug, ok, te := str(args, "slug")
	if te != nil {
		return nil, te
	}
	if !ok {
		return nil, invalid("slug is required")
	}
	src, te := b.readSource(args)
	if te != nil {
		return nil, te
	}
	content, te := boolean(args, "include_content")
	if te != nil {
		return nil, te
	}
	withDeleted, te := boolean(args, "include_deleted")
	if te != nil {
		return nil, te
	}
	fuzzy, te := boolean(args, "fuzzy")
	if te != nil {
		return nil, te
	}
	p := st.Find(src, slug)
	if p != nil && (p.DeletedAt == "" || withDeleted) {
		return pageJSON(p, content), nil
	}
	if fuzzy {
		var hits []*Page
		for _, q := range st.Pages {
			if q.Source == src && q.DeletedAt == "" && strings.Contains(strings.ToLower(q.Slug), strings.ToLower(slug)) {
				hits = append(hits, q)
			}
		}
		switch len(hits) {
		case 1:
			return pageJSON(hits[0], content), nil
		case 0:
		default:
			var c []string
			for _, h := range hits {
				c = append(c, h.Slug)
			}
			sort.Strings(c)
			return map[string]any{"error": "ambiguous_slug", "message": "Several pages match " + slug, "candidates": c}, nil
		}
	}
	return nil, notFound(slug)
}

// PutPage: whole-page upsert into the server's source.
func (b *Brain) PutPage(st *State, args map[string]any) (any, error) {
	slug, ok, te := str(args, "slug")
	if te != nil {
		return nil, te
	}
	if !ok {
		return nil, invalid("slug is required")
	}
	content, ok, te := str(args, "content")
	if te != nil {
		return nil, te
	}
	if !ok {
		return nil, invalid("content is required")
	}
	allowEmpty, te := boolean(args, "allow_empty")
	if te != nil {
		return nil, te
	}
	if te := checkSlug(slug); te != nil {
		return nil, te
	}
	slug = strings.ToLower(slug)
	registered := false
	for _, s := range b.registered(st) {
		registered = registered || s == b.Source
	}
	if !registered {
		return nil, &ToolError{Code: "internal_error",
			Message: `insert or update on table "pages" violates foreign key constraint "pages_source_id_fkey"`}
	}
	old := st.Find(b.Source, slug)
	if strings.TrimSpace(content) == "" && old != nil && old.DeletedAt == "" && !allowEmpty {
		return nil, invalid("Refusing to overwrite an existing page with empty content; pass allow_empty: true")
	}

	yamlSrc, body, _ := SplitPage(content)
	fm, err := ParseYAML(yamlSrc)
	if err != nil {
		return map[string]any{"slug": slug, "status": "error", "chunks": 0, "error": err.Error()}, nil
	}
	var typ, title string
	var hasType bool
	var written []string
	var rest []KV
	var fmID any
	for _, kv := range fm {
		switch kv.K {
		case "type":
			typ, hasType = fmt.Sprint(kv.V), kv.V != nil
		case "title":
			if kv.V != nil {
				title = fmt.Sprint(kv.V)
			}
		case "tags":
			switch t := kv.V.(type) {
			case []any:
				for _, x := range t {
					written = append(written, fmt.Sprint(x))
				}
			case string:
				for _, x := range strings.Split(t, ",") {
					if x = strings.TrimSpace(x); x != "" {
						written = append(written, x)
					}
				}
			}
		case "slug":
			// dropped
		default:
			if kv.K == "id" {
				fmID = kv.V
			}
			rest = append(rest, kv)
		}
	}
	body = strings.TrimSpace(body)
	if !hasType {
		typ = "note"
		if old != nil {
			typ = old.Type
		}
	}
	if title == "" {
		title = path.Base(slug)
	}

	// Frontmatter id de-duplicates across slugs: the first slug keeps it.
	if fmID != nil {
		for _, q := range st.Pages {
			if q.Source != b.Source || q.Slug == slug || q.DeletedAt != "" {
				continue
			}
			for _, kv := range q.Frontmatter {
				if kv.K == "id" && fmt.Sprint(kv.V) == fmt.Sprint(fmID) {
					return map[string]any{"slug": q.Slug, "status": "skipped", "chunks": 0,
						"reason": "duplicate frontmatter id"}, nil
				}
			}
		}
	}

	hash := hashFields(typ, title, body, rest, written)
	if old != nil && old.DeletedAt == "" && old.ContentHash == hash {
		return map[string]any{"slug": slug, "status": "skipped", "chunks": 0}, nil
	}
	now, seq := b.now(st)
	p := old
	if p == nil {
		st.NextID++
		p = &Page{ID: st.NextID, Source: b.Source, Slug: slug, CreatedAt: now, CreatedSeq: seq}
		st.Pages = append(st.Pages, p)
	} else if p.DeletedAt == "" {
		p.Versions++
	}
	p.DeletedAt = ""
	p.Type, p.Title, p.Body, p.Frontmatter = typ, title, body, rest
	p.ContentHash = hash
	p.UpdatedAt, p.UpdatedSeq = now, seq
	p.Tags = mergeTags(p.Tags, written)
	return map[string]any{"slug": slug, "status": "created_or_updated", "chunks": chunkCount(body)}, nil
}

func mergeTags(stored, add []string) []string {
	set := map[string]bool{}
	for _, t := range stored {
		set[t] = true
	}
	for _, t := range add {
		set[t] = true
	}
	out := make([]string, 0, len(set))
	for t := range set {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

func chunkCount(body string) int {
	if body == "" {
		return 0
	}
	return 1 + len(body)/2000
}

// DeletePage soft-deletes.
func (b *Brain) DeletePage(st *State, args map[string]any) (any, error) {
	slug, ok, te := str(args, "slug")
	if te != nil {
		return nil, te
	}
	if !ok {
		return nil, invalid("slug is required")
	}
	if te := checkSlug(slug); te != nil {
		return nil, te
	}
	// As GBrain 0.46.28's delete_page: soft-deleted now, already
	// soft-deleted (with its deleted_at), or not found at all.
	p := st.Find(b.Source, slug)
	if p == nil {
		return nil, &ToolError{Code: "page_not_found", Message: "Page not found: " + slug,
			Suggestion: "Check the slug (and source_id on a multi-source brain)."}
	}
	if p.DeletedAt != "" {
		return map[string]any{"status": "already_soft_deleted", "slug": slug, "deleted_at": p.DeletedAt}, nil
	}
	now, _ := b.now(st)
	p.DeletedAt = now
	return map[string]any{"status": "soft_deleted", "slug": slug, "recoverable_until": "now + 72h via restore_page"}, nil
}

// ListPages: filter, sort, offset paging, limit capped at 100.
func (b *Brain) ListPages(st *State, args map[string]any) (any, error) {
	src, te := b.readSource(args)
	if te != nil {
		return nil, te
	}
	tag, _, te := str(args, "tag")
	if te != nil {
		return nil, te
	}
	typ, _, te := str(args, "type")
	if te != nil {
		return nil, te
	}
	sortBy, _, te := str(args, "sort")
	if te != nil {
		return nil, te
	}
	limit, te := integer(args, "limit", 50)
	if te != nil {
		return nil, te
	}
	offset, te := integer(args, "offset", 0)
	if te != nil {
		return nil, te
	}
	withDeleted, te := boolean(args, "include_deleted")
	if te != nil {
		return nil, te
	}
	if limit > 100 {
		limit = 100
	}
	var rows []*Page
	for _, p := range st.Pages {
		if p.Source != src || (p.DeletedAt != "" && !withDeleted) {
			continue
		}
		if typ != "" && p.Type != typ {
			continue
		}
		if tag != "" && !contains(p.Tags, tag) {
			continue
		}
		rows = append(rows, p)
	}
	switch sortBy {
	case "slug":
		sort.Slice(rows, func(i, j int) bool { return rows[i].Slug < rows[j].Slug })
	case "updated_asc":
		sort.Slice(rows, func(i, j int) bool { return rows[i].UpdatedSeq < rows[j].UpdatedSeq })
	case "created_desc":
		sort.Slice(rows, func(i, j int) bool { return rows[i].CreatedSeq > rows[j].CreatedSeq })
	case "", "updated_desc":
		sort.Slice(rows, func(i, j int) bool { return rows[i].UpdatedSeq > rows[j].UpdatedSeq })
	default:
		return nil, invalid("sort must be one of updated_desc, updated_asc, created_desc, slug")
	}
	out := []map[string]any{}
	for i := offset; i < len(rows) && len(out) < limit; i++ {
		p := rows[i]
		out = append(out, map[string]any{"slug": p.Slug, "source_id": p.Source, "type": p.Type, "title": p.Title, "updated_at": p.UpdatedAt})
	}
	return out, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

var wordRE = regexp.MustCompile(`[\p{L}\p{N}]+`)

func words(s string) []string { return wordRE.FindAllString(strings.ToLower(s), -1) }

// Search: keyword match of ANY query word in title or body, ranked.
func (b *Brain) Search(st *State, args map[string]any, sourceParam bool) (any, []string, error) {
	q, ok, te := str(args, "query")
	if te != nil {
		return nil, nil, te
	}
	if !ok || strings.TrimSpace(q) == "" {
		return nil, nil, invalid("query is required")
	}
	limit, te := integer(args, "limit", 20)
	if te != nil {
		return nil, nil, te
	}
	offset, te := integer(args, "offset", 0)
	if te != nil {
		return nil, nil, te
	}
	src := b.Source
	if sourceParam {
		if src, te = b.readSource(args); te != nil {
			return nil, nil, te
		}
	}
	qw := words(q)
	type hit struct {
		p     *Page
		score float64
	}
	var hits []hit
	for _, p := range st.Pages {
		if p.Source != src || p.DeletedAt != "" {
			continue
		}
		title := map[string]bool{}
		for _, w := range words(p.Title) {
			title[w] = true
		}
		body := map[string]int{}
		for _, w := range words(p.Body) {
			body[w]++
		}
		score := 0.0
		for _, w := range qw {
			if title[w] {
				score += 2
			}
			score += float64(body[w])
		}
		if score > 0 {
			hits = append(hits, hit{p, score})
		}
	}
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].score != hits[j].score {
			return hits[i].score > hits[j].score
		}
		return hits[i].p.Slug < hits[j].p.Slug
	})
	rows := []map[string]any{}
	for i := offset; i < len(hits) && len(rows) < limit; i++ {
		p := hits[i].p
		text := p.Body
		if len(text) > 300 {
			text = text[:300]
		}
		rows = append(rows, map[string]any{"slug": p.Slug, "page_id": p.ID, "title": p.Title, "type": p.Type,
			"chunk_text": text, "score": hits[i].score, "source_id": p.Source, "chunk_index": 0})
	}
	if len(rows) == 0 {
		return rows, []string{"0 results. retrieved 0 before trimming. degraded: keyword search only (no embedding provider)"}, nil
	}
	return rows, nil, nil
}

// Tags.
func (b *Brain) AddTag(st *State, args map[string]any, add bool) (any, error) {
	slug, _, te := str(args, "slug")
	if te != nil {
		return nil, te
	}
	tag, _, te := str(args, "tag")
	if te != nil {
		return nil, te
	}
	if slug == "" || tag == "" {
		return nil, invalid("slug and tag are required")
	}
	p := st.Find(b.Source, slug)
	if p == nil || p.DeletedAt != "" {
		return nil, notFound(slug)
	}
	if add {
		p.Tags = mergeTags(p.Tags, []string{tag})
	} else {
		var keep []string
		for _, t := range p.Tags {
			if t != tag {
				keep = append(keep, t)
			}
		}
		p.Tags = keep
	}
	return map[string]any{"slug": slug, "tags": p.Tags}, nil
}

func (b *Brain) GetTags(st *State, args map[string]any) (any, error) {
	slug, _, te := str(args, "slug")
	if te != nil {
		return nil, te
	}
	p := st.Find(b.Source, slug)
	if p == nil || p.DeletedAt != "" {
		return nil, notFound(slug)
	}
	return p.Tags, nil
}

// SourcesList lists registered sources with page counts.
func (b *Brain) SourcesList(st *State) any {
	var rows []map[string]any
	for _, s := range b.registered(st) {
		n := 0
		for _, p := range st.Pages {
			if p.Source == s && p.DeletedAt == "" {
				n++
			}
		}
		rows = append(rows, map[string]any{"id": s, "name": s, "local_path": nil, "remote_url": nil, "page_count": n})
	}
	return map[string]any{"sources": rows}
}

func (b *Brain) SourcesAdd(st *State, args map[string]any) (any, error) {
	id, _, te := str(args, "id")
	if te != nil {
		return nil, te
	}
	if !ValidSource(id) {
		return nil, invalid("Source id must match [a-z0-9-]{1,32}")
	}
	if contains(b.registered(st), id) {
		return nil, &ToolError{Code: "invalid_params", Message: "Source " + id + " already exists"}
	}
	st.Sources = append(st.Sources, id)
	return map[string]any{"id": id, "name": id}, nil
}

// Put applies a put_page as another client would (tests: "edit behind our
// back"). It returns the status or the error GBrain would answer.
func (b *Brain) Put(st *State, slug, content string) (string, error) {
	v, err := b.PutPage(st, map[string]any{"slug": slug, "content": content})
	if err != nil {
		return "", err
	}
	m := v.(map[string]any)
	if m["status"] == "error" {
		return "error", errors.New(fmt.Sprint(m["error"]))
	}
	return fmt.Sprint(m["status"]), nil
}
