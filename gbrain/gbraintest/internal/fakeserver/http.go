package fakeserver

// `gbrain serve --http` as GBrain 0.46.28.0 does it (src/commands/serve-http.ts,
// the MCP SDK's bearerAuth and StreamableHTTPServerTransport in stateless
// mode), as far as cgcat can meet it:
//
//   - POST /mcp needs `Authorization: Bearer TOKEN` (401 with a
//     WWW-Authenticate: Bearer challenge naming error_description and
//     resource_metadata otherwise), `Accept` naming both application/json
//     and text/event-stream (406), Content-Type application/json (415).
//     Each POST stands alone (no Mcp-Session-Id); answers to requests come
//     as server-sent events (`event: message` + `data: JSON`), a POST of
//     notifications only is 202. GET /mcp is 405.
//   - POST /token: the client_credentials grant, credentials in the form
//     body only (client_secret_post): HTTP Basic answers "client_id and
//     client_secret required". 50 requests per 15 minutes per address
//     (GBRAIN_OAUTH_TOKEN_RATE_LIMIT_MAX / _WINDOW_MS), then 429.
//   - /.well-known/oauth-authorization-server and
//     /.well-known/oauth-protected-resource name http://localhost:PORT/
//     unless --public-url is given.
//   - The token decides the source: an OAuth client's registered source,
//     "default" for a static token.
//   - /health answers {status, version, engine}.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/cgcat/cgcat/gbrain/gbraintest/internal/fakebrain"
)

// HTTPOptions are the flags of `serve --http` that shape answers.
type HTTPOptions struct {
	// TokenTTL is --token-ttl in seconds (0: 3600).
	TokenTTL int
	// Issuer is --public-url with a trailing slash, or http://localhost:PORT/.
	Issuer string
	// LimitMax and LimitWindow rate-limit /token per address (0: 50 per
	// 15 minutes; GBRAIN_OAUTH_TOKEN_RATE_LIMIT_MAX / _WINDOW_MS).
	LimitMax    int
	LimitWindow time.Duration
}

type httpServer struct {
	s        *Server
	mcp      *server.MCPServer
	tokenTTL int
	issuer   string // with a trailing slash, as the MCP SDK spells it

	limitMax    int
	limitWindow time.Duration
	mu          sync.Mutex
	hits        map[string][]time.Time // token requests per remote address
}

// HTTPHandler is `gbrain serve --http`'s handler: /mcp, /token, discovery
// and /health.
func (s *Server) HTTPHandler(o HTTPOptions) http.Handler {
	if o.TokenTTL <= 0 {
		o.TokenTTL = 3600
	}
	if o.LimitMax <= 0 {
		o.LimitMax = 50
	}
	if o.LimitWindow <= 0 {
		o.LimitWindow = 15 * time.Minute
	}
	return &httpServer{s: s, mcp: s.MCP(), tokenTTL: o.TokenTTL, issuer: o.Issuer,
		limitMax: o.LimitMax, limitWindow: o.LimitWindow, hits: map[string][]time.Time{}}
}

func (h *httpServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/health" && r.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "version": ServerVersion, "engine": "fake"})
	case r.URL.Path == "/.well-known/oauth-authorization-server" && r.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, map[string]any{
			"issuer":                                h.issuer,
			"authorization_endpoint":                h.issuer + "authorize",
			"response_types_supported":              []string{"code"},
			"code_challenge_methods_supported":      []string{"S256"},
			"token_endpoint":                        h.issuer + "token",
			"token_endpoint_auth_methods_supported": []string{"client_secret_post", "none", "client_secret_basic"},
			"grant_types_supported":                 []string{"authorization_code", "refresh_token", "client_credentials"},
			"scopes_supported":                      []string{"admin", "agent", "read", "sources_admin", "users_admin", "write"},
			"revocation_endpoint":                   h.issuer + "revoke",
		})
	case r.URL.Path == "/.well-known/oauth-protected-resource" && r.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, map[string]any{"resource": h.issuer, "authorization_servers": []string{h.issuer},
			"scopes_supported": []string{"admin", "agent", "read", "sources_admin", "users_admin", "write"}, "resource_name": "GBrain MCP Server"})
	case r.URL.Path == "/token" && r.Method == http.MethodPost:
		h.token(w, r)
	case r.URL.Path == "/mcp" && r.Method == http.MethodGet:
		w.Header().Set("Allow", "POST, DELETE")
		writeJSON(w, http.StatusMethodNotAllowed, rpcError(-32000, "Method not allowed"))
	case r.URL.Path == "/mcp" && r.Method == http.MethodPost:
		h.mcpPost(w, r)
	default:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>Error</title>\n</head>\n<body>\n<pre>Cannot %s %s</pre>\n</body>\n</html>\n", r.Method, r.URL.Path)
	}
}

// writeJSON answers as Express's res.json does (JSON.stringify: no HTML
// escaping, no trailing newline).
func writeJSON(w http.ResponseWriter, status int, v any) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, strings.TrimSuffix(b.String(), "\n"))
}

func rpcError(code int, msg string) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "error": map[string]any{"code": code, "message": msg}, "id": nil}
}

// limited is express-rate-limit in front of /token: every request counts.
func (h *httpServer) limited(r *http.Request) bool {
	host, _, _ := net.SplitHostPort(r.RemoteAddr)
	now := time.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	keep := h.hits[host][:0]
	for _, t := range h.hits[host] {
		if now.Sub(t) < h.limitWindow {
			keep = append(keep, t)
		}
	}
	keep = append(keep, now)
	h.hits[host] = keep
	return len(keep) > h.limitMax
}

func (h *httpServer) token(w http.ResponseWriter, r *http.Request) {
	oauthErr := func(status int, code, desc string) {
		_ = h.s.Store.Update(func(st *fakebrain.State) error { st.HTTP.TokenDenied++; return nil })
		writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
	}
	if h.limited(r) {
		oauthErr(http.StatusTooManyRequests, "too_many_requests", "Rate limit exceeded. Try again later.")
		return
	}
	if ctl, _ := h.s.Controls.Read(); ctl.TokenStatus != 0 {
		oauthErr(ctl.TokenStatus, "server_error", "fake fault: token endpoint answers "+strconv.Itoa(ctl.TokenStatus))
		return
	}
	ct := r.Header.Get("Content-Type")
	if !strings.HasPrefix(ct, "application/x-www-form-urlencoded") || r.ParseForm() != nil {
		oauthErr(http.StatusBadRequest, "invalid_request", "Invalid input: expected object, received undefined")
		return
	}
	f := r.PostForm
	if f.Get("grant_type") != "client_credentials" {
		// The MCP SDK's handler: client authentication first.
		oauthErr(http.StatusBadRequest, "invalid_client", "Invalid client_id")
		return
	}
	id, secret := f.Get("client_id"), f.Get("client_secret")
	if id == "" || secret == "" {
		// GBrain reads the credentials from the form body only.
		oauthErr(http.StatusBadRequest, "invalid_request", "client_id and client_secret required")
		return
	}
	var ans *fakebrain.TokenAnswer
	var xerr error
	if err := h.s.Store.Update(func(st *fakebrain.State) error {
		ans, xerr = fakebrain.ExchangeClientCredentials(st, id, secret, f.Get("scope"), h.tokenTTL, time.Now())
		return nil
	}); err != nil {
		oauthErr(http.StatusInternalServerError, "server_error", err.Error())
		return
	}
	if xerr != nil {
		oauthErr(http.StatusBadRequest, "invalid_grant", xerr.Error())
		return
	}
	writeJSON(w, http.StatusOK, ans)
}

func (h *httpServer) unauthorized(w http.ResponseWriter, desc string) {
	_ = h.s.Store.Update(func(st *fakebrain.State) error { st.HTTP.Unauthorized++; return nil })
	w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="invalid_token", error_description="%s", resource_metadata="%s.well-known/oauth-protected-resource"`, desc, h.issuer))
	writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_token", "error_description": desc})
}

func (h *httpServer) mcpPost(w http.ResponseWriter, r *http.Request) {
	tok, ok := h.bearerToken(w, r)
	if !ok {
		return
	}
	// The body is read before authenticating only for the fault switch
	// ExpireTokensBefore (GBrain authenticates first and never looks).
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 4<<20))
	if err != nil {
		writeJSON(w, http.StatusRequestEntityTooLarge, rpcError(-32700, "Parse error: body too large"))
		return
	}
	caller, ok := h.authenticate(w, tok, h.expireRequested(raw))
	if !ok || !checkMediaTypes(w, r) {
		return
	}
	requests, ok := splitRequests(w, raw)
	if !ok {
		return
	}
	if len(requests) == 0 {
		w.WriteHeader(http.StatusAccepted) // notifications (and responses) only
		return
	}
	h.answer(w, r, caller, requests)
}

// bearerToken is the request's bearer token; without one the request is
// answered 401.
func (h *httpServer) bearerToken(w http.ResponseWriter, r *http.Request) (string, bool) {
	auth := r.Header.Get("Authorization")
	if auth == "" {
		h.unauthorized(w, "Missing Authorization header")
		return "", false
	}
	kind, tok, _ := strings.Cut(auth, " ")
	if !strings.EqualFold(kind, "bearer") || tok == "" {
		h.unauthorized(w, "Invalid Authorization header format, expected 'Bearer TOKEN'")
		return "", false
	}
	return tok, true
}

// expireRequested says whether the fault switch ExpireTokensBefore names
// the tool this body calls; it fires once per name.
func (h *httpServer) expireRequested(raw []byte) bool {
	ctl, _ := h.s.Controls.Read()
	if len(ctl.ExpireTokensBefore) == 0 {
		return false
	}
	var peek struct {
		Method string `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	_ = json.Unmarshal(raw, &peek)
	expire := peek.Method == "tools/call" && slices.Contains(ctl.ExpireTokensBefore, peek.Params.Name)
	if expire {
		// One shot: the retry with a new token goes through.
		ctl.ExpireTokensBefore = slices.DeleteFunc(ctl.ExpireTokensBefore, func(s string) bool { return s == peek.Params.Name })
		_ = h.s.Controls.Write(ctl)
	}
	return expire
}

// authenticate finds the caller the token belongs to (expiring every token
// first when asked to) and counts the request; a token that is not valid
// is answered 401.
func (h *httpServer) authenticate(w http.ResponseWriter, tok string, expire bool) (*fakebrain.Caller, bool) {
	var caller *fakebrain.Caller
	var why string
	if err := h.s.Store.Update(func(st *fakebrain.State) error {
		if expire {
			fakebrain.ExpireTokens(st, time.Now())
		}
		caller, why = fakebrain.VerifyToken(st, tok, time.Now())
		if caller != nil {
			st.HTTP.Requests++
		}
		return nil
	}); err != nil {
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "internal_error", "message": err.Error()})
		return nil, false
	}
	if caller == nil {
		h.unauthorized(w, why)
		return nil, false
	}
	return caller, true
}

// checkMediaTypes answers 406 or 415 as the MCP SDK does for a request that
// does not accept both answer forms or is not JSON.
func checkMediaTypes(w http.ResponseWriter, r *http.Request) bool {
	accept := r.Header.Get("Accept")
	if !strings.Contains(accept, "application/json") || !strings.Contains(accept, "text/event-stream") {
		writeJSON(w, http.StatusNotAcceptable, rpcError(-32000, "Not Acceptable: Client must accept both application/json and text/event-stream"))
		return false
	}
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		writeJSON(w, http.StatusUnsupportedMediaType, rpcError(-32000, "Unsupported Media Type: Content-Type must be application/json"))
		return false
	}
	return true
}

// rpcHead is what the server reads of a JSON-RPC message before handling it.
type rpcHead struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name string `json:"name"`
	} `json:"params"`
}

// splitRequests reads the body as one JSON-RPC message or a batch and keeps
// the requests (notifications and responses need no answer); a body that is
// not JSON-RPC is answered 400.
func splitRequests(w http.ResponseWriter, raw []byte) ([]json.RawMessage, bool) {
	var body json.RawMessage
	if err := json.Unmarshal(raw, &body); err != nil {
		writeJSON(w, http.StatusBadRequest, rpcError(-32700, "Parse error: Invalid JSON"))
		return nil, false
	}
	msgs := []json.RawMessage{body}
	if t := strings.TrimSpace(string(body)); strings.HasPrefix(t, "[") {
		if err := json.Unmarshal(body, &msgs); err != nil {
			writeJSON(w, http.StatusBadRequest, rpcError(-32700, "Parse error: Invalid JSON-RPC message"))
			return nil, false
		}
	}
	var requests []json.RawMessage
	for _, m := range msgs {
		var hd rpcHead
		if json.Unmarshal(m, &hd) != nil || (hd.Method == "" && len(hd.ID) == 0) {
			writeJSON(w, http.StatusBadRequest, rpcError(-32700, "Parse error: Invalid JSON-RPC message"))
			return nil, false
		}
		if len(hd.ID) > 0 && hd.Method != "" {
			requests = append(requests, m)
		}
	}
	return requests, true
}

// answer handles the requests with a fresh brain bound to the caller's
// token and sends the answers as server-sent events. A fault that drops
// the connection leaves nothing to send.
func (h *httpServer) answer(w http.ResponseWriter, r *http.Request, caller *fakebrain.Caller, requests []json.RawMessage) {
	b := &fakebrain.Brain{Source: caller.Source, Registered: h.s.Registered, Caller: caller}
	ctx := context.WithValue(r.Context(), brainKey, b)
	var dropOnce sync.Once
	dropped := false
	ctx = withDrop(ctx, func() {
		dropOnce.Do(func() {
			dropped = true
			if hj, ok := w.(http.Hijacker); ok {
				if conn, _, err := hj.Hijack(); err == nil {
					conn.Close()
				}
			}
		})
	})
	var answers [][]byte
	for _, m := range requests {
		out := h.handleRequest(ctx, m)
		if dropped || ctx.Err() != nil {
			return
		}
		a, err := json.Marshal(out)
		if err != nil {
			a, _ = json.Marshal(rpcError(-32603, err.Error()))
		}
		answers = append(answers, a)
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Connection", "keep-alive")
	w.WriteHeader(http.StatusOK)
	for _, a := range answers {
		fmt.Fprintf(w, "event: message\ndata: %s\n\n", a)
	}
}

// handleRequest answers one request: a call of a tool GBrain does not have
// as GBrain's unknown_operation (counted), anything else through mcp-go.
func (h *httpServer) handleRequest(ctx context.Context, m json.RawMessage) any {
	var hd rpcHead
	_ = json.Unmarshal(m, &hd)
	if _, known := Params[hd.Params.Name]; hd.Method == "tools/call" && !known {
		_ = h.s.Store.Update(func(st *fakebrain.State) error { st.Calls[hd.Params.Name]++; return nil })
		res := compactError(map[string]any{"error": "unknown_operation", "message": "Unknown: " + hd.Params.Name})
		return map[string]any{"jsonrpc": "2.0", "id": hd.ID, "result": res}
	}
	return h.mcp.HandleMessage(ctx, m)
}
