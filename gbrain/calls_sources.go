package gbrain

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

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
		ws.How = fmt.Sprintf("the write source of OAuth client %q (whoami)", cmp.Or(id.ClientName, id.ClientID))
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
			ws.Source, cmp.Or(id.ClientName, id.ClientID), exp, exp, exp, cmp.Or(id.ClientID, "CLIENT_ID"), exp)
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
