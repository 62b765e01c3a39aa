package gbraintest_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cgcat/cgcat/gbrain/gbraintest"
)

// These tests hold the fake's `serve --http` to what the real GBrain
// 0.46.28.0 answered (shared/GBRAIN.md, last section, and answers recorded
// from a real `gbrain serve --http` on Postgres), with plain net/http.

type httpAnswer struct {
	status int
	header http.Header
	body   string
}

func do(t *testing.T, method, u string, header map[string]string, body string) httpAnswer {
	t.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return httpAnswer{resp.StatusCode, resp.Header, string(b)}
}

func form(kv ...string) string {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return v.Encode()
}

const formCT = "application/x-www-form-urlencoded"

func token(t *testing.T, srv *gbraintest.HTTPServer, id, secret string) (string, map[string]any) {
	t.Helper()
	a := do(t, "POST", srv.Base+"/token", map[string]string{"Content-Type": formCT},
		form("grant_type", "client_credentials", "client_id", id, "client_secret", secret, "scope", "read write"))
	var m map[string]any
	if err := json.Unmarshal([]byte(a.body), &m); err != nil || a.status != 200 {
		t.Fatalf("token: %d %s", a.status, a.body)
	}
	return m["access_token"].(string), m
}

var mcpHeaders = map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}

func withAuth(tok string) map[string]string {
	h := map[string]string{"Authorization": "Bearer " + tok}
	for k, v := range mcpHeaders {
		h[k] = v
	}
	return h
}

// sse returns the JSON of the single `event: message` of an SSE answer.
func sse(t *testing.T, a httpAnswer) map[string]any {
	t.Helper()
	if a.status != 200 || a.header.Get("Content-Type") != "text/event-stream" || a.header.Get("Cache-Control") != "no-cache" {
		t.Fatalf("answer %d %v %s", a.status, a.header, a.body)
	}
	if !strings.HasPrefix(a.body, "event: message\ndata: ") || !strings.HasSuffix(a.body, "\n\n") {
		t.Fatalf("not one SSE message: %q", a.body)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSuffix(strings.TrimPrefix(a.body, "event: message\ndata: "), "\n\n")), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func toolText(t *testing.T, m map[string]any) (string, bool) {
	t.Helper()
	res, _ := m["result"].(map[string]any)
	content, _ := res["content"].([]any)
	if len(content) == 0 {
		t.Fatalf("no content: %v", m)
	}
	isErr, _ := res["isError"].(bool)
	return content[0].(map[string]any)["text"].(string), isErr
}

func callTool(t *testing.T, srv *gbraintest.HTTPServer, tok, name string, args map[string]any) (string, bool) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": map[string]any{"name": name, "arguments": args}})
	return toolText(t, sse(t, do(t, "POST", srv.MCP, withAuth(tok), string(body))))
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

func TestFakeHTTPTransport(t *testing.T) {
	f := gbraintest.New(t, "cards")
	srv := f.ServeHTTP(t, gbraintest.HTTPOptions{})
	id, secret := f.RegisterClient(t, "cgcat", "cards", nil, 0)
	tok, _ := token(t, srv, id, secret)

	if a := do(t, "GET", srv.Base+"/health", nil, ""); a.status != 200 || !strings.Contains(a.body, `"version":"0.46.28.0"`) {
		t.Errorf("health %d %s", a.status, a.body)
	}
	// Authentication comes first, with a Bearer challenge.
	for hdr, desc := range map[string]string{"": "Missing Authorization header", "Bearer gbrain_at_nope": "Invalid token",
		"Basic eDp5": "Invalid Authorization header format, expected 'Bearer TOKEN'"} {
		h := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
		if hdr != "" {
			h["Authorization"] = hdr
		}
		a := do(t, "POST", srv.MCP, h, initBody)
		wantChallenge := `Bearer error="invalid_token", error_description="` + desc + `", resource_metadata="http://localhost:`
		if a.status != 401 || !strings.HasPrefix(a.header.Get("WWW-Authenticate"), wantChallenge) ||
			a.body != `{"error":"invalid_token","error_description":"`+desc+`"}` {
			t.Errorf("%q: %d %q %q", hdr, a.status, a.header.Get("WWW-Authenticate"), a.body)
		}
	}
	// Both media types or 406.
	h := withAuth(tok)
	h["Accept"] = "application/json"
	if a := do(t, "POST", srv.MCP, h, initBody); a.status != 406 || !strings.Contains(a.body, "Not Acceptable: Client must accept both application/json and text/event-stream") {
		t.Errorf("406: %d %s", a.status, a.body)
	}
	// Stateless: initialize answers as an SSE event, no session id.
	a := do(t, "POST", srv.MCP, withAuth(tok), initBody)
	init := sse(t, a)
	if a.header.Get("Mcp-Session-Id") != "" {
		t.Errorf("session id %q: GBrain's transport is stateless", a.header.Get("Mcp-Session-Id"))
	}
	res := init["result"].(map[string]any)
	if res["protocolVersion"] != "2025-06-18" || res["serverInfo"].(map[string]any)["name"] != "gbrain" {
		t.Errorf("initialize %v", init)
	}
	// A tool call with no initialize on this request (each POST stands alone).
	if text, isErr := callTool(t, srv, tok, "sources_list", map[string]any{}); isErr || !strings.Contains(text, `"cards"`) {
		t.Errorf("sources_list %v %s", isErr, text)
	}
	if a := do(t, "POST", srv.MCP, withAuth(tok), `{"jsonrpc":"2.0","method":"notifications/initialized"}`); a.status != 202 || a.body != "" {
		t.Errorf("notification: %d %q", a.status, a.body)
	}
	if a := do(t, "GET", srv.MCP, withAuth(tok), ""); a.status != 405 || a.header.Get("Allow") != "POST, DELETE" {
		t.Errorf("GET: %d %v", a.status, a.header)
	}
	if a := do(t, "DELETE", srv.MCP, withAuth(tok), ""); a.status != 404 {
		t.Errorf("DELETE: %d (there is no session to end)", a.status)
	}
	if text, isErr := callTool(t, srv, tok, "no_such_tool", map[string]any{}); !isErr || text != `{"error":"unknown_operation","message":"Unknown: no_such_tool"}` {
		t.Errorf("unknown tool: %v %s", isErr, text)
	}
}

func TestFakeHTTPOAuth(t *testing.T) {
	f := gbraintest.New(t, "cards", "other")
	srv := f.ServeHTTP(t, gbraintest.HTTPOptions{TokenTTL: 1800, Env: map[string]string{"GBRAIN_OAUTH_TOKEN_RATE_LIMIT_MAX": "8"}})
	id, secret := f.RegisterClient(t, "cgcat", "cards", nil, 0)

	// Discovery names localhost (no --public-url) and offers client credentials.
	a := do(t, "GET", srv.Base+"/.well-known/oauth-authorization-server", nil, "")
	var md map[string]any
	_ = json.Unmarshal([]byte(a.body), &md)
	if !strings.HasPrefix(md["token_endpoint"].(string), "http://localhost:") || !strings.Contains(a.body, `"client_credentials"`) || !strings.Contains(a.body, `"client_secret_post"`) {
		t.Errorf("discovery %s", a.body)
	}
	// The token: bearer, the server's ttl, the granted scopes.
	tok, ans := token(t, srv, id, secret)
	if !strings.HasPrefix(tok, "gbrain_at_") || ans["token_type"] != "bearer" || ans["expires_in"] != float64(1800) || ans["scope"] != "read write" {
		t.Errorf("token answer %v", ans)
	}
	// Credentials in the form body only; wrong ones are invalid_grant.
	for _, tc := range []struct {
		name, ct, body, basic, want string
	}{
		{"basic", formCT, form("grant_type", "client_credentials"), id + ":" + secret, `{"error":"invalid_request","error_description":"client_id and client_secret required"}`},
		{"wrong secret", formCT, form("grant_type", "client_credentials", "client_id", id, "client_secret", "nope"), "", `{"error":"invalid_grant","error_description":"Invalid client secret"}`},
		{"unknown client", formCT, form("grant_type", "client_credentials", "client_id", "gbrain_cl_x", "client_secret", "nope"), "", `{"error":"invalid_grant","error_description":"Client not found"}`},
		{"json body", "application/json", `{"grant_type":"client_credentials"}`, "", `"error":"invalid_request"`},
	} {
		req, _ := http.NewRequest("POST", srv.Base+"/token", strings.NewReader(tc.body))
		req.Header.Set("Content-Type", tc.ct)
		if tc.basic != "" {
			u, p, _ := strings.Cut(tc.basic, ":")
			req.SetBasicAuth(u, p)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 400 || !strings.Contains(string(b), tc.want) {
			t.Errorf("%s: %d %s", tc.name, resp.StatusCode, b)
		}
	}

	// The token's source decides where writes land; reads of other sources
	// are refused for an OAuth client.
	if text, isErr := callTool(t, srv, tok, "whoami", map[string]any{}); isErr || !strings.Contains(text, `"transport": "oauth"`) || !strings.Contains(text, `"source_id": "cards"`) {
		t.Errorf("whoami %s", text)
	}
	callTool(t, srv, tok, "put_page", map[string]any{"slug": "x/a", "content": "hello"})
	if f.Page(t, "cards", "x/a") == nil {
		t.Error("an OAuth client's write must land in its source")
	}
	if text, isErr := callTool(t, srv, tok, "get_page", map[string]any{"slug": "x/a", "source_id": "other"}); !isErr || !strings.Contains(text, `"permission_denied"`) || !strings.Contains(text, "outside your granted sources") {
		t.Errorf("foreign read %v %s", isErr, text)
	}
	static := f.CreateToken(t, "cgcat-static")
	if text, _ := callTool(t, srv, static, "whoami", map[string]any{}); !strings.Contains(text, `"transport": "legacy"`) || !strings.Contains(text, `"expires_at": null`) {
		t.Errorf("static whoami %s", text)
	}
	callTool(t, srv, static, "put_page", map[string]any{"slug": "x/s", "content": "static"})
	if f.Page(t, "default", "x/s") == nil || f.Page(t, "cards", "x/s") != nil {
		t.Error("a static token writes to default")
	}
	// Scopes gate tools.
	roID, roSecret := f.RegisterClient(t, "ro", "cards", []string{"read"}, 0)
	ro, roAns := token(t, srv, roID, roSecret)
	if roAns["scope"] != "read" {
		t.Errorf("read-only client granted %v", roAns["scope"])
	}
	if text, isErr := callTool(t, srv, ro, "put_page", map[string]any{"slug": "x/r", "content": "r"}); !isErr || !strings.Contains(text, `"error":"insufficient_scope"`) {
		t.Errorf("read-only put %v %s", isErr, text)
	}

	// Expired tokens are refused: the client's own TTL, and ExpireTokens.
	shortID, shortSecret := f.RegisterClient(t, "short", "cards", nil, 1)
	short, shortAns := token(t, srv, shortID, shortSecret)
	if shortAns["expires_in"] != float64(1) {
		t.Errorf("per-client ttl: %v", shortAns)
	}
	time.Sleep(1100 * time.Millisecond)
	if a := do(t, "POST", srv.MCP, withAuth(short), initBody); a.status != 401 || !strings.Contains(a.header.Get("WWW-Authenticate"), `error_description="Token expired"`) {
		t.Errorf("expired: %d %v", a.status, a.header)
	}
	f.ExpireTokens(t)
	if a := do(t, "POST", srv.MCP, withAuth(tok), initBody); a.status != 401 {
		t.Errorf("after ExpireTokens: %d", a.status)
	}
	if _, err := json.Marshal(f.HTTP(t)); err != nil || f.HTTP(t).Unauthorized != 2 {
		t.Errorf("stats %+v", f.HTTP(t))
	}

	// The token endpoint is rate-limited per address (here 8 requests).
	var last httpAnswer
	for range 8 {
		last = do(t, "POST", srv.Base+"/token", map[string]string{"Content-Type": formCT}, form("grant_type", "client_credentials", "client_id", id, "client_secret", secret))
	}
	if last.status != 429 || !strings.Contains(last.body, "too_many_requests") {
		t.Errorf("rate limit: %d %s", last.status, last.body)
	}
}
