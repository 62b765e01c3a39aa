package gbrain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Authentication of an HTTP connection (`gbrain serve --http`).
//
// GBrain speaks OAuth 2.1. The tokens that write to a chosen source come
// from a client registered with `gbrain auth register-client NAME
// --grant-types client_credentials --scopes "read write" --source SOURCE`;
// they expire (`expires_in`, 3600 s by default). A static token from `gbrain
// auth create` never expires but writes to the `default` source. The token
// endpoint is found in the discovery document
// (/.well-known/oauth-authorization-server), takes the credentials in the
// form body only (client_secret_post: GBrain refuses HTTP Basic there), and
// allows 50 token requests per 15 minutes per address by default — so a
// token is fetched once and reused until shortly before it expires, never
// per call.

// TokenScope is what cgcat asks the token endpoint for: it reads and writes
// cards. GBrain grants the part of it the client was registered for.
const TokenScope = "read write"

// Auth modes of a connection.
const (
	AuthNone              = "none"               // no Authorization header
	AuthStaticToken       = "static-token"       // tokenEnv: a bearer token as it is
	AuthClientCredentials = "client-credentials" // clientIdEnv + clientSecretEnv: OAuth tokens
)

// getenv reads the credentials (tests may replace it).
var getenv = os.Getenv

// refreshMargin is how long before its expiry a token is replaced: a fifth
// of its lifetime plus one second (GBrain counts a token's life from the
// whole second it was issued in, so it may end up to a second before
// expires_in says), at most five minutes and at most half the lifetime. A
// 3600 s token is used for 55 minutes, a 60 s one for 47 s, a 3 s one for
// 1.5 s.
func refreshMargin(lifetime time.Duration) time.Duration {
	m := lifetime/5 + time.Second
	if m > 5*time.Minute {
		m = 5 * time.Minute
	}
	if m > lifetime/2 {
		m = lifetime / 2
	}
	return m
}

// retryFetchAfter spaces token requests that failed while the current token
// was still usable (GBrain rate-limits its token endpoint).
const retryFetchAfter = 10 * time.Second

// AuthError: no token could be had, so the request was not sent. Class is
// Definite when GBrain refused the credentials (or the configuration is
// wrong) and Transient when the token endpoint could not be reached or
// rate-limited us.
type AuthError struct {
	Class Class
	Err   error
}

func (e *AuthError) Error() string { return e.Err.Error() }
func (e *AuthError) Unwrap() error { return e.Err }

// AuthInfo describes an HTTP connection's authentication for status output.
// It never carries a secret or a token.
type AuthInfo struct {
	Mode string `json:"mode"` // AuthNone, AuthStaticToken or AuthClientCredentials
	// Env names the environment variables the credentials come from.
	Env []string `json:"env,omitempty"`
	// TokenEndpoint is where tokens are fetched (client credentials, once
	// discovered).
	TokenEndpoint string `json:"tokenEndpoint,omitempty"`
	// Fetches counts tokens fetched by this client so far.
	Fetches int `json:"fetches"`
	// Rejections counts HTTP 401 answers so far.
	Rejections int `json:"rejections"`
	// LastRejection is GBrain's reason for the last 401 (e.g. "Token expired").
	LastRejection string `json:"lastRejection,omitempty"`
	// ExpiresAt is when the current token expires (zero: none held, or it
	// does not expire).
	ExpiresAt time.Time `json:"expiresAt,omitzero"`
	// Scopes the current token was granted (client credentials).
	Scopes []string `json:"scopes,omitempty"`
}

// tokenSource hands out the bearer token for every HTTP request of one
// Client: a static token, or OAuth client-credentials tokens fetched on
// demand, cached, and replaced shortly before they expire or after GBrain
// refused one. Safe for concurrent use; one fetch at a time.
type tokenSource struct {
	mode             string
	static           string
	clientID, secret string
	idEnv, secretEnv string
	tokenEnv         string
	origin           *url.URL // scheme://host[:port] of the configured url
	hc               *http.Client
	now              func() time.Time
	log              *slog.Logger

	fetchMu sync.Mutex // one token request at a time

	mu            sync.Mutex
	endpoint      string
	tok           string
	gen           uint64 // increments with every token fetched
	expires       time.Time
	lifetime      time.Duration
	scopes        []string
	fetches       int
	rejections    int
	consecutive   int    // 401s since the last accepted request, one per token generation
	lastRejected  uint64 // the generation of the last token refused (0: none)
	lastRejection string
	nextTry       time.Time
}

func newTokenSource(conn Connection, hc *http.Client, log *slog.Logger) (*tokenSource, error) {
	u, err := url.Parse(conn.URL)
	if err != nil {
		return nil, err
	}
	s := &tokenSource{mode: AuthNone, origin: &url.URL{Scheme: u.Scheme, Host: u.Host}, hc: hc, now: time.Now, log: log}
	switch {
	case conn.ClientIDEnv != "":
		s.mode, s.idEnv, s.secretEnv = AuthClientCredentials, conn.ClientIDEnv, conn.ClientSecretEnv
		s.clientID, s.secret = strings.TrimSpace(getenv(conn.ClientIDEnv)), strings.TrimSpace(getenv(conn.ClientSecretEnv))
		switch {
		case s.clientID == "":
			return nil, fmt.Errorf("gbrain connection: environment variable %s (clientIdEnv) is empty; set it to the client id `gbrain auth register-client` printed", conn.ClientIDEnv)
		case s.secret == "":
			return nil, fmt.Errorf("gbrain connection: environment variable %s (clientSecretEnv) is empty; set it to the client secret `gbrain auth register-client` printed", conn.ClientSecretEnv)
		}
	case conn.TokenEnv != "":
		s.mode, s.tokenEnv = AuthStaticToken, conn.TokenEnv
		s.static = strings.TrimSpace(getenv(conn.TokenEnv))
		if s.static == "" {
			return nil, fmt.Errorf("gbrain connection: environment variable %s (tokenEnv) is empty", conn.TokenEnv)
		}
	}
	return s, nil
}

// describe names where the credentials come from, for messages.
func (s *tokenSource) describe() string {
	switch s.mode {
	case AuthClientCredentials:
		return fmt.Sprintf("the client credentials in %s and %s", s.idEnv, s.secretEnv)
	case AuthStaticToken:
		return "the token in " + s.tokenEnv
	}
	return "a request without credentials (name the variables holding a client id and secret in clientIdEnv and clientSecretEnv)"
}

func (s *tokenSource) info() AuthInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	ai := AuthInfo{Mode: s.mode, TokenEndpoint: s.endpoint, Fetches: s.fetches, Rejections: s.rejections,
		LastRejection: s.lastRejection, Scopes: append([]string(nil), s.scopes...)}
	switch s.mode {
	case AuthClientCredentials:
		ai.Env = []string{s.idEnv, s.secretEnv}
		if s.tok != "" {
			ai.ExpiresAt = s.expires
		}
	case AuthStaticToken:
		ai.Env = []string{s.tokenEnv}
	}
	return ai
}

// token returns the bearer token to send ("" for none) and its generation.
func (s *tokenSource) token(ctx context.Context) (string, uint64, error) {
	switch s.mode {
	case AuthNone:
		return "", 0, nil
	case AuthStaticToken:
		return s.static, 0, nil
	}
	if tok, gen, ok := s.cached(false); ok {
		return tok, gen, nil
	}
	s.fetchMu.Lock()
	defer s.fetchMu.Unlock()
	if tok, gen, ok := s.cached(false); ok {
		return tok, gen, nil // fetched by another caller meanwhile
	}
	err := s.fetch(ctx)
	if err == nil {
		tok, gen, _ := s.cached(true)
		return tok, gen, nil
	}
	// A token that is due for renewal but not expired yet is still good:
	// keep using it and try again later (GBrain restarting, rate limits).
	if tok, gen, ok := s.cached(true); ok {
		s.mu.Lock()
		s.nextTry = s.now().Add(retryFetchAfter)
		s.mu.Unlock()
		s.log.Warn("could not renew the GBrain token yet; the current one is still valid", "err", err)
		return tok, gen, nil
	}
	return "", 0, err
}

// cached returns the held token when it can be sent: before its renewal
// time, or (usable) before it expires. A token inside its renewal window
// is also returned while a failed renewal waits for nextTry.
func (s *tokenSource) cached(usable bool) (string, uint64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tok == "" {
		return "", 0, false
	}
	now := s.now()
	renewAt := s.expires.Add(-refreshMargin(s.lifetime))
	if now.Before(renewAt) || ((usable || now.Before(s.nextTry)) && now.Before(s.expires)) {
		return s.tok, s.gen, true
	}
	return "", 0, false
}

// accepted records that a request was not refused (resets the run of 401s).
func (s *tokenSource) accepted() {
	s.mu.Lock()
	s.consecutive = 0
	s.lastRejected = 0
	s.mu.Unlock()
}

// rejected records a 401 for a request sent with token generation gen and
// drops that token so the next request fetches a new one. It returns how
// many 401s came in a row.
func (s *tokenSource) rejected(gen uint64, resp *http.Response) int {
	why := bearerErrorDescription(resp.Header.Values("WWW-Authenticate"))
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rejections++
	// Several requests in flight with one token all come back 401 when it
	// expires: that is one refused token, not several in a row.
	if gen == 0 || gen != s.lastRejected {
		s.consecutive++
		s.lastRejected = gen
	}
	s.lastRejection = why
	if s.mode == AuthClientCredentials && gen == s.gen {
		s.tok = ""
		s.nextTry = time.Time{}
	}
	return s.consecutive
}

func (s *tokenSource) inARow() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.consecutive
}

func (s *tokenSource) lastReason() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastRejection
}

func (s *tokenSource) generation() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gen
}

// fetch asks the token endpoint for a new token (caller holds fetchMu).
func (s *tokenSource) fetch(ctx context.Context) error {
	s.mu.Lock()
	endpoint := s.endpoint
	s.mu.Unlock()
	if endpoint == "" {
		ep, err := s.discover(ctx)
		if err != nil {
			return err
		}
		endpoint = ep
		s.mu.Lock()
		s.endpoint = ep
		s.mu.Unlock()
	}
	form := url.Values{
		"grant_type":    {"client_credentials"},
		"client_id":     {s.clientID},
		"client_secret": {s.secret},
		"scope":         {TokenScope},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return &AuthError{Class: Definite, Err: fmt.Errorf("gbrain token endpoint %s: %w", endpoint, err)}
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	start := s.now()
	resp, err := s.hc.Do(req)
	if err != nil {
		s.forgetEndpoint()
		return &AuthError{Class: Transient, Err: fmt.Errorf("gbrain token endpoint %s: %w", endpoint, stripURLError(err))}
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var ans struct {
		AccessToken string      `json:"access_token"`
		TokenType   string      `json:"token_type"`
		ExpiresIn   json.Number `json:"expires_in"`
		Scope       string      `json:"scope"`
		Error       string      `json:"error"`
		Description string      `json:"error_description"`
	}
	jerr := json.Unmarshal(body, &ans)
	switch {
	case resp.StatusCode == http.StatusOK && jerr == nil && ans.AccessToken != "":
	case resp.StatusCode == http.StatusTooManyRequests:
		return &AuthError{Class: Transient, Err: fmt.Errorf("gbrain token endpoint %s: rate limited (HTTP 429: %s); GBrain allows 50 token requests per 15 minutes per address by default — is another process fetching tokens in a loop?", endpoint, oauthReason(ans.Error, ans.Description, body))}
	case resp.StatusCode >= 500:
		return &AuthError{Class: Transient, Err: fmt.Errorf("gbrain token endpoint %s: HTTP %d: %s", endpoint, resp.StatusCode, oauthReason(ans.Error, ans.Description, body))}
	case resp.StatusCode == http.StatusBadRequest || resp.StatusCode == http.StatusUnauthorized:
		return &AuthError{Class: Definite, Err: fmt.Errorf("%w: GBrain refused %s (%s). Check both values; the client must be registered with `gbrain auth register-client NAME --grant-types client_credentials --scopes \"read write\" --source SOURCE`",
			ErrCredentialsRefused, s.describe(), oauthReason(ans.Error, ans.Description, body))}
	default:
		s.forgetEndpoint()
		return &AuthError{Class: Definite, Err: fmt.Errorf("gbrain token endpoint %s: HTTP %d: %s", endpoint, resp.StatusCode, oauthReason(ans.Error, ans.Description, body))}
	}
	if !strings.EqualFold(ans.TokenType, "bearer") {
		return &AuthError{Class: Definite, Err: fmt.Errorf("gbrain token endpoint %s: token_type %q, want bearer", endpoint, ans.TokenType)}
	}
	lifetime := time.Hour // expires_in is only RECOMMENDED; a 401 renews it anyway
	if ans.ExpiresIn != "" {
		secs, err := strconv.ParseFloat(string(ans.ExpiresIn), 64)
		if err != nil || secs <= 0 {
			return &AuthError{Class: Definite, Err: fmt.Errorf("gbrain token endpoint %s: expires_in %q is not a positive number", endpoint, ans.ExpiresIn)}
		}
		lifetime = time.Duration(secs * float64(time.Second))
	}
	s.mu.Lock()
	s.tok = ans.AccessToken
	s.gen++
	s.fetches++
	// Counted from when the request left: the server's clock started no
	// earlier.
	s.expires = start.Add(lifetime)
	s.lifetime = lifetime
	s.scopes = strings.Fields(ans.Scope)
	s.nextTry = time.Time{}
	s.mu.Unlock()
	s.log.Debug("fetched a GBrain token", "expires_in", lifetime, "scopes", ans.Scope)
	return nil
}

func (s *tokenSource) forgetEndpoint() {
	s.mu.Lock()
	s.endpoint = ""
	s.mu.Unlock()
}

// discover reads GBrain's authorization-server metadata and returns the
// token endpoint to use: the one the document names, on the host of the
// configured url. A document naming `localhost` while the url says
// `127.0.0.1` (GBrain without --public-url) is the same server: only the
// path is taken. Another host is refused: client secrets go only to the
// host the config names.
func (s *tokenSource) discover(ctx context.Context) (string, error) {
	where := s.origin.String() + "/.well-known/oauth-authorization-server"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, where, nil)
	if err != nil {
		return "", &AuthError{Class: Definite, Err: err}
	}
	req.Header.Set("Accept", "application/json")
	resp, err := s.hc.Do(req)
	if err != nil {
		return "", &AuthError{Class: Transient, Err: fmt.Errorf("gbrain OAuth discovery %s: %w", where, stripURLError(err))}
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 256<<10))
	switch {
	case resp.StatusCode >= 500:
		return "", &AuthError{Class: Transient, Err: fmt.Errorf("gbrain OAuth discovery %s: HTTP %d", where, resp.StatusCode)}
	case resp.StatusCode != http.StatusOK:
		return "", &AuthError{Class: Definite, Err: fmt.Errorf("gbrain OAuth discovery %s: HTTP %d; is url the MCP endpoint of `gbrain serve --http` (e.g. http://127.0.0.1:3131/mcp)?", where, resp.StatusCode)}
	}
	var md struct {
		Issuer        string   `json:"issuer"`
		TokenEndpoint string   `json:"token_endpoint"`
		Grants        []string `json:"grant_types_supported"`
		AuthMethods   []string `json:"token_endpoint_auth_methods_supported"`
	}
	if err := json.Unmarshal(body, &md); err != nil || md.TokenEndpoint == "" {
		return "", &AuthError{Class: Definite, Err: fmt.Errorf("gbrain OAuth discovery %s: no token_endpoint in the answer: %w", where, garbage("not OAuth metadata", string(body)))}
	}
	if len(md.Grants) > 0 && !contains(md.Grants, "client_credentials") {
		return "", &AuthError{Class: Definite, Err: fmt.Errorf("gbrain OAuth discovery %s: the server does not offer the client_credentials grant (offers %s)", where, strings.Join(md.Grants, ", "))}
	}
	if len(md.AuthMethods) > 0 && !contains(md.AuthMethods, "client_secret_post") {
		return "", &AuthError{Class: Definite, Err: fmt.Errorf("gbrain OAuth discovery %s: the token endpoint does not take credentials in the form body (client_secret_post); it offers %s", where, strings.Join(md.AuthMethods, ", "))}
	}
	ep, err := sameServer(s.origin, md.TokenEndpoint)
	if err != nil {
		return "", &AuthError{Class: Definite, Err: fmt.Errorf("gbrain OAuth discovery %s: %w", where, err)}
	}
	return ep, nil
}

// sameServer resolves the token endpoint a discovery document names
// against the configured origin: same origin as is; a loopback alias
// (localhost, 127.0.0.1, ::1) with the same scheme and port becomes the
// configured host; anything else is an error.
func sameServer(origin *url.URL, endpoint string) (string, error) {
	ep, err := origin.Parse(endpoint)
	if err != nil || (ep.Scheme != "http" && ep.Scheme != "https") {
		return "", fmt.Errorf("token_endpoint %q is not an http(s) URL", endpoint)
	}
	if ep.Scheme == origin.Scheme && strings.EqualFold(ep.Host, origin.Host) {
		return ep.String(), nil
	}
	if ep.Scheme == origin.Scheme && portOf(ep) == portOf(origin) && loopback(ep.Hostname()) && loopback(origin.Hostname()) {
		ep.Host = origin.Host
		return ep.String(), nil
	}
	return "", fmt.Errorf("the token endpoint %s is on another server than the configured url (%s); cgcat sends client secrets only to the configured server. "+
		"Set url to GBrain's public address (its --public-url), or start `gbrain serve --http --public-url %s`", endpoint, origin, origin)
}

func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "https" {
		return "443"
	}
	return "80"
}

func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// oauthReason is an OAuth error answer in a few words, never echoing a
// request.
func oauthReason(code, desc string, body []byte) string {
	switch {
	case code != "" && desc != "":
		return code + ": " + desc
	case code != "":
		return code
	}
	const max = 200
	s := strings.TrimSpace(string(body))
	if len(s) > max {
		s = s[:max] + "…"
	}
	if s == "" {
		s = "(empty answer)"
	}
	return strings.ToValidUTF8(s, "")
}

// bearerErrorDescription returns error_description (else error) from a
// WWW-Authenticate: Bearer challenge.
func bearerErrorDescription(values []string) string {
	for _, v := range values {
		for _, key := range []string{"error_description", "error"} {
			i := strings.Index(v, key+`="`)
			if i < 0 {
				continue
			}
			rest := v[i+len(key)+2:]
			if j := strings.IndexByte(rest, '"'); j >= 0 {
				return rest[:j]
			}
		}
	}
	return ""
}

// stripURLError drops the *url.Error wrapper (method and URL) that net/http
// adds; the callers name the URL themselves.
func stripURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// authTransport adds the bearer token to every request and tells the token
// source about refusals. An error getting a token is returned before
// anything is sent.
type authTransport struct {
	base http.RoundTripper
	src  *tokenSource
}

func (a *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	tok, gen, err := a.src.token(req.Context())
	if err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	if tok != "" {
		req = req.Clone(req.Context())
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := a.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusUnauthorized {
		a.src.rejected(gen, resp)
	} else {
		a.src.accepted()
	}
	return resp, nil
}
