package gbrain_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/cgcat/cgcat/gbrain"
	"github.com/cgcat/cgcat/gbrain/gbraintest"
)

// An HTTP GBrain (`gbrain serve --http`): the bearer token comes from the
// environment variable named in the connection, at dial time.
func TestHTTPStaticTokenHandshake(t *testing.T) {
	s := server.NewMCPServer("gbrain", "0.46.28.0")
	s.AddTool(mcp.NewTool("whoami"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(`{"transport": "legacy", "token_name": "cgcat", "scopes": ["read", "write"]}`), nil
	})
	var sawToken atomic.Value
	h := server.NewStreamableHTTPServer(s)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		sawToken.Store(auth)
		if auth != "Bearer s3cret" {
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", error_description="Invalid token"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	conn := gbrain.Connection{URL: srv.URL + "/mcp", TokenEnv: "CGCAT_TEST_GBRAIN_TOKEN"}

	t.Setenv("CGCAT_TEST_GBRAIN_TOKEN", "s3cret")
	c, err := gbrain.Dial(ctx, conn, gbrain.Options{HandshakeTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	who, err := c.Whoami(ctx)
	if err != nil || who.Transport != "legacy" || len(who.Scopes) != 2 {
		t.Fatalf("whoami %+v %v", who, err)
	}
	if c.StderrTail() != "" {
		t.Error("an HTTP connection has no stderr")
	}
	if a := c.Auth(); a.Mode != gbrain.AuthStaticToken || len(a.Env) != 1 || a.Env[0] != "CGCAT_TEST_GBRAIN_TOKEN" || a.Fetches != 0 {
		t.Errorf("auth %+v", a)
	}

	t.Setenv("CGCAT_TEST_GBRAIN_TOKEN", "wrong")
	_, err = gbrain.Dial(ctx, conn, gbrain.Options{HandshakeTimeout: 5 * time.Second})
	wantClass(t, err, gbrain.Definite, gbrain.ErrUnauthorized)
	if msg := err.Error(); !strings.Contains(msg, "CGCAT_TEST_GBRAIN_TOKEN") || !strings.Contains(msg, "Invalid token") || strings.Contains(msg, "wrong") {
		t.Errorf("message %q (must name the variable and GBrain's reason, never the token)", msg)
	}
	if got, _ := sawToken.Load().(string); got != "Bearer wrong" {
		t.Errorf("server saw %q", got)
	}

	// Nobody listening: transient.
	srv.Close()
	_, err = gbrain.Dial(ctx, conn, gbrain.Options{HandshakeTimeout: 2 * time.Second})
	wantClass(t, err, gbrain.Transient)
}

// httpFake is the fake GBrain served over HTTP with one OAuth client bound
// to src.
type httpFake struct {
	*gbraintest.Fake
	srv        *gbraintest.HTTPServer
	id, secret string
}

func newHTTPFake(t *testing.T, o gbraintest.HTTPOptions) *httpFake {
	t.Helper()
	f := gbraintest.New(t, src, "other")
	hf := &httpFake{Fake: f, srv: f.ServeHTTP(t, o)}
	hf.id, hf.secret = f.RegisterClient(t, "cgcat", src, nil, 0)
	return hf
}

func (h *httpFake) dial(t *testing.T, conn gbrain.Connection) *gbrain.Client {
	t.Helper()
	c, err := gbrain.Dial(ctx, conn, gbrain.Options{ExpectedSource: src, HandshakeTimeout: 10 * time.Second, CallTimeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// OAuth client credentials end to end: discovery (which names localhost
// while the url says 127.0.0.1), one token for many calls, writes landing
// in the client's source.
func TestHTTPClientCredentials(t *testing.T) {
	h := newHTTPFake(t, gbraintest.HTTPOptions{})
	conn := h.srv.Connection(t, h.id, h.secret)
	if !strings.HasPrefix(conn.URL, "http://127.0.0.1:") {
		t.Fatalf("url %s", conn.URL)
	}
	c := h.dial(t, conn)
	if info := c.ServerInfo(); info.Name != "gbrain" || info.Version != "0.46.28.0" || info.ProtocolVersion != "2025-06-18" {
		t.Errorf("server info %+v", info)
	}

	// The discovery document names localhost; the token endpoint used is
	// the same path on the configured host.
	resp, err := http.Get(h.srv.Base + "/.well-known/oauth-authorization-server")
	if err != nil {
		t.Fatal(err)
	}
	var md struct {
		TokenEndpoint string `json:"token_endpoint"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&md)
	resp.Body.Close()
	if !strings.HasPrefix(md.TokenEndpoint, "http://localhost:") {
		t.Fatalf("discovery names %q", md.TokenEndpoint)
	}
	ws, err := c.CheckWriteSource(ctx)
	if err != nil || !ws.OK() || ws.Transport != "oauth" || ws.Source != src {
		t.Fatalf("write source %+v %v", ws, err)
	}

	slug := slugOf(t, "cg_http1")
	content := encode(t, card("cg_http1", 1))
	if r, err := c.PutPage(ctx, slug, content); err != nil || r.Status != gbrain.StatusWritten {
		t.Fatalf("put %+v %v", r, err)
	}
	p, err := c.GetPage(ctx, slug, true)
	if err != nil || p.SourceID != src {
		t.Fatalf("get %+v %v", p, err)
	}
	if h.Page(t, src, slug) == nil || h.Page(t, "default", slug) != nil {
		t.Error("the page must land in the client's source only")
	}
	for range 10 {
		if _, err := c.ListPages(ctx, gbrain.ListOptions{Limit: 10}); err != nil {
			t.Fatal(err)
		}
	}
	a := c.Auth()
	if a.Mode != gbrain.AuthClientCredentials || a.Fetches != 1 || a.Rejections != 0 ||
		a.TokenEndpoint != h.srv.Base+"/token" || strings.Join(a.Scopes, " ") != "read write" || time.Until(a.ExpiresAt) < 50*time.Minute {
		t.Errorf("auth %+v (want one token from %s/token for every call)", a, h.srv.Base)
	}
	if st := h.HTTP(t); st.TokensIssued != 1 || st.Unauthorized != 0 {
		t.Errorf("fake saw %+v", st)
	}
}

// A token that expires mid-session: a read is refused with 401, a new
// token is fetched and the same read sent again; a write refused with 401
// was not applied and says so (Transient), and is never re-sent by the
// client itself.
func TestHTTPExpiredToken(t *testing.T) {
	h := newHTTPFake(t, gbraintest.HTTPOptions{})
	c := h.dial(t, h.srv.Connection(t, h.id, h.secret))
	slug := slugOf(t, "cg_exp1")
	if _, err := c.PutPage(ctx, slug, encode(t, card("cg_exp1", 1))); err != nil {
		t.Fatal(err)
	}

	h.ExpireTokens(t)
	h.ResetCalls(t)
	p, err := c.GetPage(ctx, slug, false)
	if err != nil || p.Slug != slug {
		t.Fatalf("read after expiry: %+v %v", p, err)
	}
	if n := h.Calls(t)["get_page"]; n != 1 {
		t.Errorf("get_page ran %d times (the 401 is not a run)", n)
	}
	if a := c.Auth(); a.Fetches != 2 || a.Rejections != 1 || a.LastRejection != "Token expired" {
		t.Errorf("auth %+v", a)
	}

	// A write with the renewed token (its source checked once), then the
	// token expires again and the next write is refused.
	if _, err := c.PutPage(ctx, slug, encode(t, card("cg_exp1", 2))); err != nil {
		t.Fatal(err)
	}
	h.ExpireTokens(t)
	h.ResetCalls(t)
	before := h.Content(t, src, slug)
	_, err = c.PutPage(ctx, slug, encode(t, card("cg_exp1", 3)))
	wantClass(t, err, gbrain.Transient, gbrain.ErrUnauthorized)
	if !strings.Contains(err.Error(), "nothing was written") {
		t.Errorf("message %q", err)
	}
	if n := h.Calls(t)["put_page"]; n != 0 || h.Content(t, src, slug) != before {
		t.Errorf("a refused put ran %d times", n)
	}
	// The caller's next attempt carries a new token (and the write source
	// is checked again for it).
	if _, err := c.PutPage(ctx, slug, encode(t, card("cg_exp1", 3))); err != nil {
		t.Fatal(err)
	}
	calls := h.Calls(t)
	if calls["put_page"] != 1 || calls["whoami"] != 1 {
		t.Errorf("calls %v", calls)
	}
	if a := c.Auth(); a.Fetches != 3 {
		t.Errorf("auth %+v", a)
	}
}

// A token renewed before it expires: over more than a lifetime of a 4 s
// token, no call is refused and tokens are fetched per lifetime, not per
// call.
func TestHTTPTokenRenewedBeforeExpiry(t *testing.T) {
	h := newHTTPFake(t, gbraintest.HTTPOptions{TokenTTL: 4})
	c := h.dial(t, h.srv.Connection(t, h.id, h.secret))
	start := time.Now()
	calls := 0
	for time.Since(start) < 5*time.Second {
		if _, err := c.ListPages(ctx, gbrain.ListOptions{Limit: 1}); err != nil {
			t.Fatal(err)
		}
		calls++
		time.Sleep(50 * time.Millisecond)
	}
	st := h.HTTP(t)
	// Renewed 2.2 s into each 4 s token (a fifth of its life plus a second
	// before it ends: GBrain's whole-second expiry leaves it at least 3 s),
	// so at most one token per 2.2 s of the time the calls really took (a
	// loaded machine stretches the last call): 3 tokens in 5 s.
	took := time.Since(start)
	most := 1 + int(took/(2200*time.Millisecond))
	if st.TokensIssued < 2 || st.TokensIssued > most || st.Unauthorized != 0 {
		t.Errorf("%d calls in %s: %+v (want 2-%d tokens and no 401)", calls, took.Round(time.Millisecond), st, most)
	}
}

// A token bound to another source, and a static token (which writes to
// "default"): the check says so, and nothing is written anywhere.
func TestHTTPWrongWriteSource(t *testing.T) {
	h := newHTTPFake(t, gbraintest.HTTPOptions{})
	otherID, otherSecret := h.RegisterClient(t, "cgcat-other", "other", nil, 0)
	static := h.CreateToken(t, "cgcat-static")
	slug := slugOf(t, "cg_wrong1")
	for _, tc := range []struct {
		name   string
		conn   gbrain.Connection
		source string
		want   []string
	}{
		{"oauth other source", h.srv.Connection(t, otherID, otherSecret), "other", []string{`land in source "other"`, `not in "` + src + `"`, "register-client", "--source " + src}},
		{"static token", h.srv.TokenConnection(t, static), "default", []string{"static token", "default source", "clientIdEnv"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := h.dial(t, tc.conn)
			ws, err := c.CheckWriteSource(ctx)
			wantClass(t, err, gbrain.Definite, gbrain.ErrWrongWriteSource)
			if ws == nil || ws.OK() || ws.Source != tc.source || ws.Expected != src {
				t.Errorf("write source %+v", ws)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("message %q lacks %q", err, w)
				}
			}
			h.ResetCalls(t)
			_, err = c.PutPage(ctx, slug, encode(t, card("cg_wrong1", 1)))
			wantClass(t, err, gbrain.Definite, gbrain.ErrWrongWriteSource)
			if n := h.Calls(t)["put_page"]; n != 0 {
				t.Errorf("put_page sent %d times", n)
			}
			for _, s := range []string{src, "other", "default"} {
				if h.Page(t, s, slug) != nil {
					t.Errorf("a page landed in %s", s)
				}
			}
		})
	}
	// A read-only client cannot write cards: said before any write.
	roID, roSecret := h.RegisterClient(t, "cgcat-ro", src, []string{"read"}, 0)
	c := h.dial(t, h.srv.Connection(t, roID, roSecret))
	_, err := c.CheckWriteSource(ctx)
	wantClass(t, err, gbrain.Definite, gbrain.ErrInsufficientScope)
	// GBrain itself refuses the write with insufficient_scope too.
	raw, err := gbrain.Dial(ctx, h.srv.Connection(t, roID, roSecret), gbrain.Options{HandshakeTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.SourcesList(ctx); err != nil {
		t.Fatalf("a read-only token reads: %v", err)
	}
}

// Credentials GBrain refuses, credentials missing from the environment, a
// discovery document naming another host, a token endpoint that is down:
// each a clear error of the right class that never shows a secret.
func TestHTTPAuthFailures(t *testing.T) {
	h := newHTTPFake(t, gbraintest.HTTPOptions{})
	opts := gbrain.Options{ExpectedSource: src, HandshakeTimeout: 10 * time.Second}

	_, err := gbrain.Dial(ctx, h.srv.Connection(t, h.id, "gbrain_cs_wrong"), opts)
	wantClass(t, err, gbrain.Definite, gbrain.ErrCredentialsRefused)
	if msg := err.Error(); !strings.Contains(msg, "Invalid client secret") || !strings.Contains(msg, "CGCAT_FAKE_GBRAIN_CLIENT_SECRET_") || strings.Contains(msg, "gbrain_cs_wrong") {
		t.Errorf("message %q (must name the variables and GBrain's reason, never the secret)", msg)
	}
	_, err = gbrain.Dial(ctx, h.srv.Connection(t, "gbrain_cl_nobody", h.secret), opts)
	wantClass(t, err, gbrain.Definite, gbrain.ErrCredentialsRefused)
	if strings.Contains(err.Error(), h.secret) {
		t.Errorf("message shows the secret: %q", err)
	}

	conn := h.srv.Connection(t, h.id, h.secret)
	t.Setenv(conn.ClientSecretEnv, "")
	_, err = gbrain.Dial(ctx, conn, opts)
	wantClass(t, err, gbrain.Definite)
	if !strings.Contains(err.Error(), conn.ClientSecretEnv+" (clientSecretEnv) is empty") {
		t.Errorf("message %q", err)
	}

	// The token endpoint is down or rate-limits: transient, nothing sent.
	for _, status := range []int{http.StatusServiceUnavailable, http.StatusTooManyRequests} {
		h.SetControl(t, gbraintest.Control{TokenStatus: status})
		_, err = gbrain.Dial(ctx, h.srv.Connection(t, h.id, h.secret), opts)
		wantClass(t, err, gbrain.Transient)
	}
	h.SetControl(t, gbraintest.Control{})
	if st := h.HTTP(t); st.Requests != 0 {
		t.Errorf("%d MCP requests passed without a token", st.Requests)
	}

	// A server announcing another host: the secret is not sent there.
	other := h.ServeHTTP(t, gbraintest.HTTPOptions{PublicURL: "https://brain.example.com"})
	before := h.HTTP(t)
	_, err = gbrain.Dial(ctx, other.Connection(t, h.id, h.secret), opts)
	wantClass(t, err, gbrain.Definite)
	if msg := err.Error(); !strings.Contains(msg, "https://brain.example.com/token") || !strings.Contains(msg, "--public-url") {
		t.Errorf("message %q", msg)
	}
	if after := h.HTTP(t); after.TokensIssued != before.TokensIssued || after.TokenDenied != before.TokenDenied {
		t.Errorf("a token request went out: %+v -> %+v", before, after)
	}

	// A url that is not the MCP endpoint.
	conn = h.srv.Connection(t, h.id, h.secret)
	conn.URL = h.srv.Base + "/nope"
	_, err = gbrain.Dial(ctx, conn, opts)
	wantClass(t, err, gbrain.Definite)
	if !strings.Contains(err.Error(), "/mcp") {
		t.Errorf("message %q", err)
	}
}

// Over HTTP, the write classes hold: a write whose connection dropped is
// Ambiguous, a write that could not reach the server is Transient.
func TestHTTPWriteClasses(t *testing.T) {
	h := newHTTPFake(t, gbraintest.HTTPOptions{})
	c := h.dial(t, h.srv.Connection(t, h.id, h.secret))
	slug := slugOf(t, "cg_drop1")
	if _, err := c.CheckWriteSource(ctx); err != nil {
		t.Fatal(err)
	}
	h.SetControl(t, gbraintest.Control{DropAfterApply: []string{"put_page"}})
	_, err := c.PutPage(ctx, slug, encode(t, card("cg_drop1", 1)))
	wantClass(t, err, gbrain.Ambiguous)
	if h.Page(t, src, slug) == nil {
		t.Error("the fault applies the write before dropping the connection")
	}
	h.SetControl(t, gbraintest.Control{})
	if _, err := c.GetPage(ctx, slug, true); err != nil {
		t.Fatalf("the client goes on after a dropped request: %v", err)
	}

	h.srv.Stop()
	// The first request may go out on the kept-alive connection of the
	// dead server (a read: Transient either way); the write then finds
	// nobody listening: nothing was sent.
	_, err = c.GetPage(ctx, slug, false)
	wantClass(t, err, gbrain.Transient)
	_, err = c.PutPage(ctx, slug, encode(t, card("cg_drop1", 2)))
	wantClass(t, err, gbrain.Transient, gbrain.ErrNotConnected)
	var op *net.OpError
	if !errors.As(err, &op) {
		t.Errorf("%v: not a dial error", err)
	}
}
