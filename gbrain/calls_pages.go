package gbrain

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Page is a get_page answer. Content is GBrain's re-serialised markdown, not
// the bytes written: hash what you read back.
type Page struct {
	Slug          string         `json:"slug"`
	SourceID      string         `json:"source_id"`
	Type          string         `json:"type"`
	Title         string         `json:"title"`
	CompiledTruth string         `json:"compiled_truth"`
	Frontmatter   map[string]any `json:"frontmatter"`
	Tags          []string       `json:"tags"`
	ContentHash   string         `json:"content_hash"` // GBrain's sha256 of the parsed fields last written
	CreatedAt     Timestamp      `json:"created_at"`
	UpdatedAt     Timestamp      `json:"updated_at"`
	DeletedAt     Timestamp      `json:"deleted_at"`
	// Content is set only when asked for (HasContent tells an empty page
	// from an absent field).
	Content    string `json:"-"`
	HasContent bool   `json:"-"`
}

// Timestamp is a date-time as GBrain spells it (an ISO string); null and
// absent are "". Other JSON scalars are kept as their text.
type Timestamp string

func (t *Timestamp) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("null")):
		*t = ""
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*t = Timestamp(s)
	case len(b) > 0 && (b[0] == '{' || b[0] == '['):
		return fmt.Errorf("timestamp is not a scalar")
	default:
		*t = Timestamp(b)
	}
	return nil
}

// PutResult is a successful put_page answer.
type PutResult struct {
	Slug   string `json:"slug"`
	Status string `json:"status"` // StatusWritten or StatusSkipped
	Chunks int    `json:"chunks"`
}

// put_page statuses.
const (
	StatusWritten = "created_or_updated"
	StatusSkipped = "skipped" // identical content: nothing written
)

// PageRef is one list_pages row.
type PageRef struct {
	Slug      string    `json:"slug"`
	SourceID  string    `json:"source_id"`
	Type      string    `json:"type"`
	Title     string    `json:"title"`
	UpdatedAt Timestamp `json:"updated_at"`
}

// ListOptions select list_pages rows. Zero fields are not sent.
type ListOptions struct {
	Tag    string // one tag; GBrain filters by a single tag
	Type   string
	Sort   string // SortSlug, SortUpdatedDesc, SortUpdatedAsc, SortCreatedDesc
	Limit  int    // 1..MaxListLimit; 0 = GBrain's default (50)
	Offset int
	// UpdatedAfter keeps pages whose updated_at is strictly later (an ISO
	// date-time as GBrain answers it; GBrain compares at µs, its answers
	// show ms). A soft delete does not move updated_at.
	UpdatedAfter Timestamp
}

// list_pages sort orders and page size bound.
const (
	SortSlug        = "slug"
	SortUpdatedDesc = "updated_desc"
	SortUpdatedAsc  = "updated_asc"
	SortCreatedDesc = "created_desc"
	MaxListLimit    = 100
)

// GetPage reads one page. includeContent asks for the re-serialised
// markdown (Page.Content).
//
// Errors (all *CallError): ErrInvalidSlug before sending (Definite);
// ErrPageNotFound when absent or soft-deleted (Definite); ErrAmbiguousSlug
// (Definite); ErrForeignSource when the page's source_id is not the expected
// source — such a page is never ours (Definite); ErrSlugMismatch; ErrGarbage
// (Definite); connection failures and timeouts (Transient: a read changes
// nothing).
func (c *Client) GetPage(ctx context.Context, slug string, includeContent bool) (*Page, error) {
	const tool = "get_page"
	if err := ValidateSlug(slug); err != nil {
		return nil, &CallError{Tool: tool, Class: Definite, Err: err}
	}
	args := map[string]any{"slug": slug}
	if includeContent {
		args["include_content"] = true
	}
	var raw struct {
		Page
		Content    *string  `json:"content"`
		Error      string   `json:"error"`
		Message    string   `json:"message"`
		Candidates []string `json:"candidates"`
	}
	if err := c.call(ctx, tool, args, false, &raw); err != nil {
		return nil, err
	}
	if raw.Error != "" {
		return nil, &CallError{Tool: tool, Class: Definite, Err: &ToolError{Code: raw.Error, Message: raw.Message, Candidates: raw.Candidates}}
	}
	p := raw.Page
	if p.Slug == "" {
		return nil, &CallError{Tool: tool, Class: Definite, Err: garbage("page without slug", "")}
	}
	if p.Slug != slug {
		return nil, &CallError{Tool: tool, Class: Definite, Err: &SlugMismatchError{Want: slug, Got: p.Slug}}
	}
	if err := c.checkSource(p.Slug, p.SourceID); err != nil {
		return nil, &CallError{Tool: tool, Class: Definite, Err: err}
	}
	if p.DeletedAt != "" {
		// Not asked for (include_deleted is never sent): treat as absent.
		return nil, &CallError{Tool: tool, Class: Definite, Err: &ToolError{Code: "page_not_found", Message: "page is soft-deleted: " + slug}}
	}
	if raw.Content != nil {
		p.Content, p.HasContent = *raw.Content, true
	} else if includeContent {
		return nil, &CallError{Tool: tool, Class: Definite, Err: garbage("content asked for but absent", "")}
	}
	return &p, nil
}

// PutPage writes a whole page (last writer wins; GBrain has no
// compare-and-swap) to the server's source, which for a stdio child is the
// expected source. It refuses to run without an expected source. Only slug
// and content are sent; content must not be empty.
//
// A nil error means GBrain answered StatusWritten or StatusSkipped for this
// very slug. Errors (all *CallError):
//   - Definite: ErrNoSource, ErrInvalidSlug, empty content (not sent);
//     GBrain's isError answers such as ErrInternal (an unregistered source
//     fails its foreign key) or ErrInvalidParams; ErrPutRejected (status
//     "error", e.g. bad frontmatter); ErrSlugMismatch (the answer names
//     another slug: GBrain's frontmatter-id de-duplication).
//   - Transient: the request was not sent (connection already down,
//     ErrRateLimited, ErrUnavailable).
//   - Ambiguous: sent, then timeout, lost connection or process, cancelled
//     context, a garbled answer, ErrDatabase or ErrEmbeddingFailed. Read the
//     page back and compare before any retry.
func (c *Client) PutPage(ctx context.Context, slug, content string) (*PutResult, error) {
	const tool = "put_page"
	if c.opts.ExpectedSource == "" {
		return nil, &CallError{Tool: tool, Class: Definite, Err: fmt.Errorf("%w: refusing to write (set the expected source)", ErrNoSource)}
	}
	if err := ValidateSlug(slug); err != nil {
		return nil, &CallError{Tool: tool, Class: Definite, Err: err}
	}
	if strings.TrimSpace(content) == "" {
		return nil, &CallError{Tool: tool, Class: Definite, Err: fmt.Errorf("%w: empty content", ErrInvalidArgument)}
	}
	if c.auth != nil {
		// Over HTTP the token decides the source: make sure it is ours
		// (once per token) before writing anything.
		if err := c.verifyWriteSource(ctx); err != nil {
			return nil, &CallError{Tool: tool, Class: Classify(err), Err: err}
		}
	}
	var raw struct {
		PutResult
		Error   string `json:"error"`
		Message string `json:"message"`
	}
	if err := c.call(ctx, tool, map[string]any{"slug": slug, "content": content}, true, &raw); err != nil {
		return nil, err
	}
	r := raw.PutResult
	switch r.Status {
	case StatusWritten, StatusSkipped:
	case "error":
		msg := raw.Error
		if raw.Message != "" {
			msg = strings.TrimSpace(msg + " " + raw.Message)
		}
		return nil, &CallError{Tool: tool, Class: Definite, Err: &ToolError{Code: "put_status_error", Message: msg}}
	default:
		return nil, &CallError{Tool: tool, Class: Ambiguous, Err: garbage("unknown put_page status", r.Status)}
	}
	if r.Slug != slug {
		return nil, &CallError{Tool: tool, Class: Definite, Err: &SlugMismatchError{Want: slug, Got: r.Slug, Status: r.Status}}
	}
	return &r, nil
}

// DeleteResult is a delete_page answer.
type DeleteResult struct {
	Slug   string `json:"slug"`
	Status string `json:"status"` // StatusSoftDeleted or StatusAlreadyDeleted
}

// delete_page statuses.
const (
	StatusSoftDeleted    = "soft_deleted"         // hidden now, restorable for 72 h
	StatusAlreadyDeleted = "already_soft_deleted" // it was hidden before
)

// DeletePage soft-deletes a page of the server's source (GBrain hides it
// from get_page, list_pages and search; it can be restored for 72 h, and a
// later put_page brings it back). Only the slug is sent. A nil error means
// the page is deleted now (StatusSoftDeleted or StatusAlreadyDeleted).
//
// Errors (all *CallError): ErrInvalidSlug (not sent) and ErrPageNotFound
// (no such page) — Definite; GBrain's isError answers as for PutPage; a
// lost answer is Ambiguous (read the page back: absent means deleted).
func (c *Client) DeletePage(ctx context.Context, slug string) (*DeleteResult, error) {
	const tool = "delete_page"
	if c.opts.ExpectedSource == "" {
		return nil, &CallError{Tool: tool, Class: Definite, Err: fmt.Errorf("%w: refusing to delete (set the expected source)", ErrNoSource)}
	}
	if err := ValidateSlug(slug); err != nil {
		return nil, &CallError{Tool: tool, Class: Definite, Err: err}
	}
	if c.auth != nil {
		if err := c.verifyWriteSource(ctx); err != nil {
			return nil, &CallError{Tool: tool, Class: Classify(err), Err: err}
		}
	}
	var r DeleteResult
	if err := c.call(ctx, tool, map[string]any{"slug": slug}, true, &r); err != nil {
		return nil, err
	}
	switch r.Status {
	case StatusSoftDeleted, StatusAlreadyDeleted:
	default:
		return nil, &CallError{Tool: tool, Class: Ambiguous, Err: garbage("unknown delete_page status", r.Status)}
	}
	if r.Slug != slug {
		return nil, &CallError{Tool: tool, Class: Definite, Err: &SlugMismatchError{Want: slug, Got: r.Slug, Status: r.Status}}
	}
	return &r, nil
}

// ListPages returns one page of list_pages rows. There is no cursor and no
// prefix filter: enumerate by Tag with Sort SortSlug and a growing Offset,
// and expect rows to shift under concurrent writes (de-duplicate, re-scan).
//
// Errors: ErrInvalidArgument (bad sort or limit, not sent), ErrForeignSource
// when any row has another source_id (the server follows another source),
// ErrGarbage — all Definite; connection failures Transient.
func (c *Client) ListPages(ctx context.Context, o ListOptions) ([]PageRef, error) {
	const tool = "list_pages"
	args := map[string]any{}
	if o.Tag != "" {
		args["tag"] = o.Tag
	}
	if o.Type != "" {
		args["type"] = o.Type
	}
	switch o.Sort {
	case "":
	case SortSlug, SortUpdatedDesc, SortUpdatedAsc, SortCreatedDesc:
		args["sort"] = o.Sort
	default:
		return nil, &CallError{Tool: tool, Class: Definite, Err: fmt.Errorf("%w: sort %q", ErrInvalidArgument, o.Sort)}
	}
	if o.Limit < 0 || o.Limit > MaxListLimit || o.Offset < 0 {
		return nil, &CallError{Tool: tool, Class: Definite, Err: fmt.Errorf("%w: limit %d (1..%d) offset %d", ErrInvalidArgument, o.Limit, MaxListLimit, o.Offset)}
	}
	if o.Limit > 0 {
		args["limit"] = o.Limit
	}
	if o.Offset > 0 {
		args["offset"] = o.Offset
	}
	if o.UpdatedAfter != "" {
		if _, err := time.Parse(time.RFC3339Nano, string(o.UpdatedAfter)); err != nil {
			return nil, &CallError{Tool: tool, Class: Definite, Err: fmt.Errorf("%w: updated_after %q is not an ISO date-time", ErrInvalidArgument, o.UpdatedAfter)}
		}
		args["updated_after"] = string(o.UpdatedAfter)
	}
	var refs []PageRef
	if err := c.call(ctx, tool, args, false, &refs); err != nil {
		return nil, err
	}
	for _, r := range refs {
		if r.Slug == "" {
			return nil, &CallError{Tool: tool, Class: Definite, Err: garbage("row without slug", "")}
		}
		if err := c.checkSource(r.Slug, r.SourceID); err != nil {
			return nil, &CallError{Tool: tool, Class: Definite, Err: err}
		}
	}
	return refs, nil
}
