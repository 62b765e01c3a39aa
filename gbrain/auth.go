package gbrain

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
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
	origin := &url.URL{Scheme: u.Scheme, Host: u.Host}
	s := &tokenSource{mode: AuthNone, origin: origin, hc: withRedirects(hc, sameOriginRedirects(origin)), now: time.Now, log: log}
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
	if tok != "" && sameOrigin(a.src.origin, req.URL) {
		// Never to another origin, whatever led there (auth_redirect.go).
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
