package fakebrain

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
	"time"
)

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
	slug, content, allowEmpty, te := putPageArgs(args)
	if te != nil {
		return nil, te
	}
	if !b.sourceRegistered(st) {
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
	f := readPageFrontmatter(fm)
	body = strings.TrimSpace(body)
	if !f.hasType {
		f.typ = "note"
		if old != nil {
			f.typ = old.Type
		}
	}
	if f.title == "" {
		f.title = path.Base(slug)
	}

	// Frontmatter id de-duplicates across slugs: the first slug keeps it.
	if q := b.holderOfID(st, slug, f.id); q != nil {
		return map[string]any{"slug": q.Slug, "status": "skipped", "chunks": 0,
			"reason": "duplicate frontmatter id"}, nil
	}

	hash := hashFields(f.typ, f.title, body, f.rest, f.tags)
	if old != nil && old.DeletedAt == "" && old.ContentHash == hash {
		return map[string]any{"slug": slug, "status": "skipped", "chunks": 0}, nil
	}
	b.writePage(st, old, slug, f, body, hash)
	return map[string]any{"slug": slug, "status": "created_or_updated", "chunks": chunkCount(body)}, nil
}

// putPageArgs reads put_page's arguments; the slug comes back checked and
// lowercased.
func putPageArgs(args map[string]any) (slug, content string, allowEmpty bool, te *ToolError) {
	slug, ok, te := str(args, "slug")
	if te != nil {
		return "", "", false, te
	}
	if !ok {
		return "", "", false, invalid("slug is required")
	}
	content, ok, te = str(args, "content")
	if te != nil {
		return "", "", false, te
	}
	if !ok {
		return "", "", false, invalid("content is required")
	}
	allowEmpty, te = boolean(args, "allow_empty")
	if te != nil {
		return "", "", false, te
	}
	if te := checkSlug(slug); te != nil {
		return "", "", false, te
	}
	return strings.ToLower(slug), content, allowEmpty, nil
}

// sourceRegistered says whether the server's source is one GBrain knows
// (writing into another breaks a foreign key, as in GBrain).
func (b *Brain) sourceRegistered(st *State) bool {
	registered := false
	for _, s := range b.registered(st) {
		registered = registered || s == b.Source
	}
	return registered
}

// pageFields are what put_page keeps from a page's frontmatter: type and
// title become columns, tags are added to the page's tags, slug is
// dropped, and everything else (id included) stays frontmatter.
type pageFields struct {
	typ, title string
	hasType    bool
	tags       []string
	rest       []KV
	id         any
}

func readPageFrontmatter(fm []KV) pageFields {
	var f pageFields
	for _, kv := range fm {
		switch kv.K {
		case "type":
			f.typ, f.hasType = fmt.Sprint(kv.V), kv.V != nil
		case "title":
			if kv.V != nil {
				f.title = fmt.Sprint(kv.V)
			}
		case "tags":
			f.tags = append(f.tags, frontmatterTags(kv.V)...)
		case "slug":
			// dropped
		default:
			if kv.K == "id" {
				f.id = kv.V
			}
			f.rest = append(f.rest, kv)
		}
	}
	return f
}

// frontmatterTags reads tags written as a list or as a comma-separated
// string.
func frontmatterTags(v any) []string {
	var tags []string
	switch t := v.(type) {
	case []any:
		for _, x := range t {
			tags = append(tags, fmt.Sprint(x))
		}
	case string:
		for _, x := range strings.Split(t, ",") {
			if x = strings.TrimSpace(x); x != "" {
				tags = append(tags, x)
			}
		}
	}
	return tags
}

// holderOfID is another live page of the source whose frontmatter carries
// the same id, or nil (also for no id).
func (b *Brain) holderOfID(st *State, slug string, id any) *Page {
	if id == nil {
		return nil
	}
	for _, q := range st.Pages {
		if q.Source != b.Source || q.Slug == slug || q.DeletedAt != "" {
			continue
		}
		for _, kv := range q.Frontmatter {
			if kv.K == "id" && fmt.Sprint(kv.V) == fmt.Sprint(id) {
				return q
			}
		}
	}
	return nil
}

// writePage creates the page or updates old in place (a new version unless
// it was deleted, which it no longer is).
func (b *Brain) writePage(st *State, old *Page, slug string, f pageFields, body, hash string) {
	now, seq, us := b.now(st)
	p := old
	if p == nil {
		st.NextID++
		p = &Page{ID: st.NextID, Source: b.Source, Slug: slug, CreatedAt: now, CreatedSeq: seq}
		st.add(p)
	} else if p.DeletedAt == "" {
		p.Versions++
	}
	p.DeletedAt = ""
	p.Type, p.Title, p.Body, p.Frontmatter = f.typ, f.title, body, f.rest
	p.ContentHash = hash
	p.UpdatedAt, p.UpdatedSeq, p.UpdatedMicro = now, seq, us
	p.Tags = mergeTags(p.Tags, f.tags)
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
	// GBrain's soft delete sets deleted_at only: updated_at stays, so
	// list_pages' updated_after never shows a deletion.
	now, _, _ := b.now(st)
	p.DeletedAt = now
	return map[string]any{"status": "soft_deleted", "slug": slug, "recoverable_until": "now + 72h via restore_page"}, nil
}

// ListPages: filter, sort, offset paging, limit capped at 100. As GBrain
// 0.46.28.0: updated_after keeps pages whose updated_at is strictly later
// (compared at µs, as Postgres does, while answers show ms); a soft delete
// does not move updated_at.
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
	after, hasAfter, te := str(args, "updated_after")
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
	var afterMicro int64
	if hasAfter {
		t, ok := parseTimestamptz(after)
		if !ok {
			return nil, &ToolError{Code: "internal_error", Message: fmt.Sprintf("invalid input syntax for type timestamp with time zone: %q", after)}
		}
		afterMicro = t.UnixMicro()
	}
	rows, te := st.listing(src, tag, sortBy)
	if te != nil {
		return nil, te
	}
	out := []map[string]any{}
	skip := offset
	for _, p := range rows {
		if len(out) == limit {
			break
		}
		if (p.DeletedAt != "" && !withDeleted) || (typ != "" && p.Type != typ) || (hasAfter && p.updatedMicro() <= afterMicro) {
			continue
		}
		if skip > 0 {
			skip--
			continue
		}
		out = append(out, map[string]any{"slug": p.Slug, "source_id": p.Source, "type": p.Type, "title": p.Title, "updated_at": p.UpdatedAt})
	}
	return out, nil
}

// listing is the pages of a source with a tag (any tag when ""), deleted
// ones included, in a list_pages sort order; kept until the next change.
func (st *State) listing(src, tag, sortBy string) ([]*Page, *ToolError) {
	var less func(a, b *Page) bool
	switch sortBy {
	case "slug":
		less = func(a, b *Page) bool { return a.Slug < b.Slug }
	case "updated_asc":
		less = func(a, b *Page) bool { return a.UpdatedSeq < b.UpdatedSeq }
	case "created_desc":
		less = func(a, b *Page) bool { return a.CreatedSeq > b.CreatedSeq }
	case "", "updated_desc":
		less = func(a, b *Page) bool { return a.UpdatedSeq > b.UpdatedSeq }
	default:
		return nil, invalid("sort must be one of updated_desc, updated_asc, created_desc, slug")
	}
	key := src + "\x00" + tag + "\x00" + sortBy
	if rows, ok := st.listings[key]; ok {
		return rows, nil
	}
	var rows []*Page
	for _, p := range st.Pages {
		if p.Source == src && (tag == "" || slices.Contains(p.Tags, tag)) {
			rows = append(rows, p)
		}
	}
	sort.Slice(rows, func(i, j int) bool { return less(rows[i], rows[j]) })
	if st.listings == nil {
		st.listings = map[string][]*Page{}
	}
	st.listings[key] = rows
	return rows, nil
}

// updatedMicro is updated_at in µs (parsed from the ms text for a state
// written before the µs were kept).
func (p *Page) updatedMicro() int64 {
	if p.UpdatedMicro != 0 {
		return p.UpdatedMicro
	}
	t, _ := time.Parse(time.RFC3339Nano, p.UpdatedAt)
	return t.UnixMicro()
}

// parseTimestamptz reads what Postgres' ::timestamptz cast of an ISO date
// or date-time accepts in practice (a date alone is midnight UTC here).
func parseTimestamptz(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
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
