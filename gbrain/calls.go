package gbrain

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// maxAnswerBytes bounds the JSON text we parse from one answer.
const maxAnswerBytes = 16 << 20

// Page is a get_page answer. Content is GBrain's re-serialised markdown, not
// the bytes written (see shared/GBRAIN.md): hash what you read back.
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
}

// list_pages sort orders and page size bound.
const (
	SortSlug        = "slug"
	SortUpdatedDesc = "updated_desc"
	SortUpdatedAsc  = "updated_asc"
	SortCreatedDesc = "created_desc"
	MaxListLimit    = 100
)

// Chunk is one search / query hit.
type Chunk struct {
	Slug      string  `json:"slug"`
	PageID    any     `json:"page_id"`
	Title     string  `json:"title"`
	Type      string  `json:"type"`
	ChunkText string  `json:"chunk_text"`
	Score     float64 `json:"score"`
	SourceID  string  `json:"source_id"`
}

// QueryOptions for the semantic query tool. Expand (query expansion) may use
// the network on the GBrain side; it is sent as false unless asked for.
type QueryOptions struct {
	Query  string
	Limit  int // 0 = GBrain's default
	Expand bool
}

// Source is one sources_list row.
type Source struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	LocalPath string `json:"local_path"`
	PageCount int    `json:"page_count"`
}

// Identity is a whoami answer. Over stdio GBrain says only {transport:
// "stdio", scopes: []}; over HTTP an OAuth client's token shows its client,
// scopes and write source (source_id), a static token its name.
type Identity struct {
	Transport     string    `json:"transport"` // "stdio", "oauth", "legacy" (static token), "local"
	Scopes        []string  `json:"scopes"`
	SourceID      string    `json:"source_id"` // oauth: where its writes land (null: "default")
	ClientID      string    `json:"client_id"`
	ClientName    string    `json:"client_name"`
	TokenName     string    `json:"token_name"` // legacy
	FederatedRead []string  `json:"federated_read"`
	ExpiresAt     Timestamp `json:"expires_at"` // Unix seconds as text; "" for none
}

// WriteSource is where put_page lands through a connection, as GBrain
// tells it.
type WriteSource struct {
	Transport string   `json:"transport"`        // whoami's transport
	Source    string   `json:"source,omitempty"` // where writes land ("" when GBrain does not say)
	Expected  string   `json:"expected"`
	Scopes    []string `json:"scopes,omitempty"` // the token's scopes (HTTP)
	How       string   `json:"how"`              // how Source was established, for people
}

// OK reports whether writes land in the expected source.
func (w *WriteSource) OK() bool { return w != nil && w.Source != "" && w.Source == w.Expected }

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

// Search is GBrain's keyword search: a page matches when any query word is
// in its title or body (tags and slugs are not indexed). Zero hits is an
// empty slice. With an expected source, hits of other sources are dropped
// (search has no source parameter). Errors as for ListPages.
func (c *Client) Search(ctx context.Context, query string, limit int) ([]Chunk, error) {
	const tool = "search"
	if strings.TrimSpace(query) == "" || limit < 0 {
		return nil, &CallError{Tool: tool, Class: Definite, Err: fmt.Errorf("%w: empty query or negative limit", ErrInvalidArgument)}
	}
	args := map[string]any{"query": query}
	if limit > 0 {
		args["limit"] = limit
	}
	return c.chunks(ctx, tool, args)
}

// Query is GBrain's semantic query, pinned to the expected source when there
// is one, with query expansion off unless o.Expand. Errors as for Search.
func (c *Client) Query(ctx context.Context, o QueryOptions) ([]Chunk, error) {
	const tool = "query"
	if strings.TrimSpace(o.Query) == "" || o.Limit < 0 {
		return nil, &CallError{Tool: tool, Class: Definite, Err: fmt.Errorf("%w: empty query or negative limit", ErrInvalidArgument)}
	}
	args := map[string]any{"query": o.Query, "expand": o.Expand}
	if o.Limit > 0 {
		args["limit"] = o.Limit
	}
	if c.opts.ExpectedSource != "" {
		args["source_id"] = c.opts.ExpectedSource
	}
	return c.chunks(ctx, tool, args)
}

func (c *Client) chunks(ctx context.Context, tool string, args map[string]any) ([]Chunk, error) {
	var hits []Chunk
	if err := c.call(ctx, tool, args, false, &hits); err != nil {
		return nil, err
	}
	out := hits[:0]
	for _, h := range hits {
		if h.Slug == "" {
			return nil, &CallError{Tool: tool, Class: Definite, Err: garbage("hit without slug", "")}
		}
		if c.opts.ExpectedSource != "" && h.SourceID != c.opts.ExpectedSource {
			continue
		}
		out = append(out, h)
	}
	return out, nil
}

// Whoami returns GBrain's idea of this connection (transport, scopes, and
// over HTTP the client and its write source).
func (c *Client) Whoami(ctx context.Context) (*Identity, error) {
	var id Identity
	if err := c.call(ctx, "whoami", map[string]any{}, false, &id); err != nil {
		return nil, err
	}
	return &id, nil
}

// CheckWriteSource asks GBrain where pages written through this connection
// land and compares that with the expected source. Over stdio it is the
// GBRAIN_SOURCE cgcat pins for the child; over HTTP it is the token's: an
// OAuth client's registered source (whoami shows it), and `default` for a
// static token from `gbrain auth create`.
//
// It returns what it found and nil when writes land in the expected
// source. Errors: ErrNoSource; ErrWrongWriteSource when they land
// elsewhere or GBrain does not say; ErrInsufficientScope when the token
// cannot write (all Definite, with the WriteSource filled in); whoami's call
// errors (WriteSource nil).
func (c *Client) CheckWriteSource(ctx context.Context) (*WriteSource, error) {
	const tool = "whoami"
	if c.opts.ExpectedSource == "" {
		return nil, &CallError{Tool: tool, Class: Definite, Err: ErrNoSource}
	}
	id, err := c.Whoami(ctx)
	if err != nil {
		return nil, err
	}
	exp := c.opts.ExpectedSource
	ws := &WriteSource{Transport: id.Transport, Expected: exp, Scopes: id.Scopes}
	fail := func(sentinel error, format string, a ...any) (*WriteSource, error) {
		return ws, &CallError{Tool: tool, Class: Definite, Err: fmt.Errorf("%w: "+format, append([]any{sentinel}, a...)...)}
	}
	switch {
	case c.conn.Command != "" && (id.Transport == "stdio" || id.Transport == "local"):
		ws.Source, ws.How = exp, "GBRAIN_SOURCE, which cgcat sets for the gbrain child it starts"
	case id.Transport == "oauth":
		ws.Source = id.SourceID
		if ws.Source == "" {
			ws.Source = "default" // GBrain: authInfo.sourceId ?? 'default'
		}
		ws.How = fmt.Sprintf("the write source of OAuth client %q (whoami)", firstNonEmpty(id.ClientName, id.ClientID))
	case id.Transport == "legacy":
		ws.Source = "default"
		ws.How = fmt.Sprintf("static token %q (`gbrain auth create`): GBrain writes a static token's pages to its default source", id.TokenName)
	default:
		ws.How = fmt.Sprintf("GBrain's whoami does not say (transport %q)", id.Transport)
	}
	if c.auth != nil && !hasScope(id.Scopes, "write") {
		return fail(ErrInsufficientScope, "the token has scopes [%s] and cannot write cards; register the client with --scopes \"read write\"", strings.Join(id.Scopes, " "))
	}
	switch {
	case ws.Source == exp:
		return ws, nil
	case id.Transport == "oauth":
		return fail(ErrWrongWriteSource, "pages written with this token land in source %q (OAuth client %q was registered with it), not in %q. Register a client for %q (`gbrain auth register-client NAME --grant-types client_credentials --scopes \"read write\" --source %s`) and put its id and secret in the environment, or move this one (`gbrain auth rescope-client %s --source %s`)",
			ws.Source, firstNonEmpty(id.ClientName, id.ClientID), exp, exp, exp, firstNonEmpty(id.ClientID, "CLIENT_ID"), exp)
	case id.Transport == "legacy":
		return fail(ErrWrongWriteSource, "a static token (`gbrain auth create`) writes to GBrain's default source, not to %q. Use OAuth client credentials instead: `gbrain auth register-client NAME --grant-types client_credentials --scopes \"read write\" --source %s`, then clientIdEnv and clientSecretEnv in the connection",
			exp, exp)
	}
	return fail(ErrWrongWriteSource, "cannot tell where pages written through this connection land (whoami says transport %q); refusing to write to %q blindly", id.Transport, exp)
}

// verifyWriteSource runs CheckWriteSource once per token (HTTP): a
// client's source can be changed by an operator between tokens.
func (c *Client) verifyWriteSource(ctx context.Context) error {
	c.wsMu.Lock()
	defer c.wsMu.Unlock()
	// The token the write will carry (fetched now if the last one was
	// dropped or is due).
	_, gen, err := c.auth.token(ctx)
	if err != nil {
		return err
	}
	if c.ws != nil && c.wsGen == gen {
		return nil
	}
	ws, err := c.CheckWriteSource(ctx)
	if err != nil {
		return err
	}
	c.ws, c.wsGen = ws, c.auth.generation()
	return nil
}

// hasScope follows GBrain's hierarchy: admin implies every scope, write
// implies read.
func hasScope(scopes []string, want string) bool {
	for _, s := range scopes {
		if s == want || s == "admin" || (want == "read" && s == "write") {
			return true
		}
	}
	return false
}

func firstNonEmpty(xs ...string) string {
	for _, x := range xs {
		if x != "" {
			return x
		}
	}
	return ""
}

// BrainIdentity is GBrain's get_brain_identity answer: what it tells of
// the brain it serves (not its id: GBrain names no brain over MCP).
type BrainIdentity struct {
	Version    string `json:"version"`
	Engine     string `json:"engine"` // "pglite" or "postgres"
	PageCount  int    `json:"page_count"`
	ChunkCount int    `json:"chunk_count"`
}

// BrainIdentity asks GBrain about the brain it serves (version, engine,
// counts). Errors as for Whoami; an older GBrain answers unknown_tool.
func (c *Client) BrainIdentity(ctx context.Context) (*BrainIdentity, error) {
	var bi BrainIdentity
	if err := c.call(ctx, "get_brain_identity", map[string]any{}, false, &bi); err != nil {
		return nil, err
	}
	return &bi, nil
}

// SourcesList returns the registered sources GBrain shows this connection
// (it may confine the list to the caller's scope).
func (c *Client) SourcesList(ctx context.Context) ([]Source, error) {
	const tool = "sources_list"
	var raw json.RawMessage
	if err := c.call(ctx, tool, map[string]any{}, false, &raw); err != nil {
		return nil, err
	}
	var list []Source
	var wrapped struct {
		Sources *[]Source `json:"sources"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		if err := json.Unmarshal(raw, &wrapped); err != nil || wrapped.Sources == nil {
			return nil, &CallError{Tool: tool, Class: Definite, Err: garbage("not a source list", string(raw))}
		}
		list = *wrapped.Sources
	}
	return list, nil
}

// CheckSource confirms that the expected source is registered in GBrain.
// Errors: ErrNoSource (no expected source), ErrSourceMissing (not listed:
// every put_page would fail its foreign key, so stop here) — Definite; call
// failures as for SourcesList.
func (c *Client) CheckSource(ctx context.Context) error {
	const tool = "sources_list"
	if c.opts.ExpectedSource == "" {
		return &CallError{Tool: tool, Class: Definite, Err: ErrNoSource}
	}
	list, err := c.SourcesList(ctx)
	if err != nil {
		return err
	}
	for _, s := range list {
		if s.ID == c.opts.ExpectedSource {
			return nil
		}
	}
	return &CallError{Tool: tool, Class: Definite, Err: fmt.Errorf("%w: %q is not among the sources gbrain lists; create it with `gbrain sources add %s`",
		ErrSourceMissing, c.opts.ExpectedSource, c.opts.ExpectedSource)}
}

func (c *Client) checkSource(slug, source string) error {
	if c.opts.ExpectedSource == "" || source == c.opts.ExpectedSource {
		return nil
	}
	return &ForeignSourceError{Slug: slug, Source: source, Expected: c.opts.ExpectedSource}
}

// call runs one tool call and decodes the JSON text of content[0] into out.
// Every failure comes back as a *CallError with its class; mutating says
// whether a lost answer leaves the outcome unknown.
func (c *Client) call(ctx context.Context, tool string, args map[string]any, mutating bool, out any) error {
	fail := func(class Class, err error) error { return &CallError{Tool: tool, Class: class, Err: err} }
	lostClass := Transient
	if mutating {
		lostClass = Ambiguous
	}

	c.mu.Lock()
	closed, lost := c.closed, c.lost
	c.mu.Unlock()
	if closed {
		return fail(Transient, ErrClosed)
	}
	if lost != nil {
		return fail(Transient, fmt.Errorf("%w: %w", ErrNotConnected, lost))
	}

	cctx, cancel := context.WithTimeout(ctx, c.opts.CallTimeout)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	c.countCall(tool)
	res, err := c.mc.CallTool(cctx, req)
	if err != nil && c.auth != nil {
		// HTTP: a call refused before GBrain ran it (no token, a 401)
		// changed nothing. A refused read is sent once more with a new
		// token; a refused write is left to the caller, who may send it
		// again (it surely was not applied) — this package never
		// re-sends a write by itself.
		class, cause, retry := c.authFailure(err, mutating)
		if retry {
			c.countCall(tool)
			res, err = c.mc.CallTool(cctx, req)
			if err != nil {
				class, cause, _ = c.authFailure(err, true)
			}
		}
		if cause != nil {
			return fail(class, cause)
		}
	}
	if err != nil {
		switch {
		case connectionGone(err):
			cause := c.markLost(err)
			if notSent(err) {
				return fail(Transient, fmt.Errorf("%w: %w", ErrNotConnected, cause))
			}
			return fail(lostClass, fmt.Errorf("%w mid-call: %w", ErrConnectionLost, cause))
		case ctx.Err() != nil:
			return fail(lostClass, ctx.Err())
		case errors.Is(cctx.Err(), context.DeadlineExceeded):
			return fail(lostClass, fmt.Errorf("%w after %s", ErrCallTimeout, c.opts.CallTimeout))
		}
		if c.auth != nil && dialFailed(err) {
			// Nothing reached GBrain (connection refused, no route).
			return fail(Transient, fmt.Errorf("%w: %w", ErrNotConnected, err))
		}
		var te *transport.Error
		if errors.As(err, &te) {
			// HTTP transport failures and anything unforeseen on the wire:
			// the outcome is unknown.
			return fail(lostClass, err)
		}
		if isProtocolError(err) {
			// GBrain answered with a JSON-RPC error: nothing was done.
			return fail(Definite, err)
		}
		// An answer mcp-go could not read as a tool result.
		if mutating {
			return fail(Ambiguous, fmt.Errorf("%w: %w", ErrGarbage, err))
		}
		return fail(Definite, fmt.Errorf("%w: %w", ErrGarbage, err))
	}

	text, extra, ok := firstText(res)
	for _, w := range extra {
		if strings.Contains(w, "unknown parameter") {
			c.log.Warn("gbrain warned about a parameter cgcat sent", "tool", tool, "warning", w)
		}
	}
	if res.IsError {
		if !ok {
			return fail(Definite, garbage("error answer without text", ""))
		}
		var te struct {
			Error      string `json:"error"`
			Message    string `json:"message"`
			Suggestion string `json:"suggestion"`
		}
		if err := json.Unmarshal([]byte(text), &te); err != nil || te.Error == "" {
			return fail(Definite, fmt.Errorf("%w (isError): %w", ErrGarbage, garbage("error answer is not {error, message}", text)))
		}
		return fail(toolErrorClass(te.Error, mutating), &ToolError{Code: te.Error, Message: te.Message, Suggestion: te.Suggestion})
	}
	garbageClass := Definite
	if mutating {
		garbageClass = Ambiguous
	}
	if !ok {
		return fail(garbageClass, garbage("answer has no text content", ""))
	}
	if len(text) > maxAnswerBytes {
		return fail(garbageClass, garbage(fmt.Sprintf("answer larger than %d bytes", maxAnswerBytes), text))
	}
	if err := json.Unmarshal([]byte(text), out); err != nil {
		return fail(garbageClass, garbage("not the documented JSON ("+err.Error()+")", text))
	}
	return nil
}

// authFailure classifies an HTTP call that GBrain did not run: no token
// could be had (the AuthError's class), or GBrain answered 401. retry
// means: a read refused once with an OAuth token; send it again (the
// refused token was dropped, the next request fetches a new one). Two 401s
// in a row, or a 401 for a static token or no credentials, are Definite; a
// write's first 401 is Transient: it was not applied, and the next attempt
// carries a new token. cause is nil when err is not about authorization.
func (c *Client) authFailure(err error, mutating bool) (class Class, cause error, retry bool) {
	var ae *AuthError
	if errors.As(err, &ae) {
		return ae.Class, ae.Err, false
	}
	var ar *transport.AuthorizationRequiredError
	if !errors.As(err, &ar) {
		return 0, nil, false
	}
	why := c.auth.lastReason()
	if why == "" {
		why = "no reason given"
	}
	cause = fmt.Errorf("%w: GBrain refused %s (%s)", ErrUnauthorized, c.auth.describe(), why)
	switch {
	case c.auth.mode != AuthClientCredentials || c.auth.inARow() >= 2:
		return Definite, cause, false
	case !mutating:
		return 0, nil, true
	}
	return Transient, fmt.Errorf("%w; nothing was written, the next attempt fetches a new token", cause), false
}

// dialFailed reports an HTTP request that never reached the server.
func dialFailed(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// isProtocolError recognises the JSON-RPC error answers mcp-go names.
// (Codes it does not know arrive as a bare message, read as garbage.)
func isProtocolError(err error) bool {
	for _, s := range []error{mcp.ErrParseError, mcp.ErrInvalidRequest, mcp.ErrMethodNotFound,
		mcp.ErrInvalidParams, mcp.ErrInternalError, mcp.ErrRequestInterrupted, mcp.ErrResourceNotFound} {
		if errors.Is(err, s) {
			return true
		}
	}
	var uv mcp.UnsupportedProtocolVersionError
	return errors.As(err, &uv)
}

// markLost records that the connection is gone and returns the best
// description of why: for a stdio child, how it exited and its stderr tail.
func (c *Client) markLost(err error) error {
	cause := err
	if c.cmd != nil {
		cause = c.reap()
	}
	c.mu.Lock()
	if c.lost == nil {
		c.lost = cause
	}
	c.mu.Unlock()
	return cause
}

func firstText(res *mcp.CallToolResult) (first string, rest []string, ok bool) {
	for i, ct := range res.Content {
		tc, isText := mcp.AsTextContent(ct)
		if i == 0 {
			if !isText {
				return "", nil, false
			}
			first, ok = tc.Text, true
			continue
		}
		if isText {
			rest = append(rest, tc.Text)
		}
	}
	return first, rest, ok
}
