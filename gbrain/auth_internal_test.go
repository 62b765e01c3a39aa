package gbrain

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// tokenServer is an OAuth token endpoint with a discovery document naming
// localhost (as GBrain without --public-url does).
type tokenServer struct {
	*httptest.Server
	requests atomic.Int32
	status   atomic.Int32 // answer this instead of a token when not 0
	ttl      int
	lastForm url.Values
	mu       sync.Mutex
}

func newTokenServer(t *testing.T, ttl int) *tokenServer {
	ts := &tokenServer{ttl: ttl}
	ts.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		port := strings.TrimPrefix(ts.URL, "http://127.0.0.1:")
		switch r.URL.Path {
		case "/.well-known/oauth-authorization-server":
			_ = json.NewEncoder(w).Encode(map[string]any{"issuer": "http://localhost:" + port + "/", "token_endpoint": "http://localhost:" + port + "/token",
				"grant_types_supported": []string{"client_credentials"}, "token_endpoint_auth_methods_supported": []string{"client_secret_post"}})
		case "/token":
			n := ts.requests.Add(1)
			_ = r.ParseForm()
			ts.mu.Lock()
			ts.lastForm = r.PostForm
			ts.mu.Unlock()
			if s := ts.status.Load(); s != 0 {
				w.WriteHeader(int(s))
				_, _ = io.WriteString(w, `{"error":"temporarily_unavailable"}`)
				return
			}
			time.Sleep(20 * time.Millisecond) // let concurrent callers pile up
			_ = json.NewEncoder(w).Encode(map[string]any{"access_token": "tok" + string(rune('0'+n)), "token_type": "bearer", "expires_in": ts.ttl, "scope": "read write"})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(ts.Close)
	return ts
}

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func ccSource(t *testing.T, ts *tokenServer, clk *clock) *tokenSource {
	t.Helper()
	t.Setenv("CGCAT_T_ID", "gbrain_cl_test")
	t.Setenv("CGCAT_T_SECRET", "gbrain_cs_test")
	s, err := newTokenSource(Connection{URL: ts.URL + "/mcp", ClientIDEnv: "CGCAT_T_ID", ClientSecretEnv: "CGCAT_T_SECRET"},
		&http.Client{Timeout: 5 * time.Second}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	s.now = clk.now
	return s
}

// One token per lifetime, renewed 5 minutes before a 3600 s token expires,
// one request for many concurrent callers, never per call.
func TestTokenRenewal(t *testing.T) {
	ts := newTokenServer(t, 3600)
	clk := &clock{t: time.Unix(1_800_000_000, 0)}
	s := ccSource(t, ts, clk)
	ctx := context.Background()

	tok, gen, err := s.token(ctx)
	if err != nil || tok != "tok1" || gen != 1 {
		t.Fatalf("first token %q %d %v", tok, gen, err)
	}
	ts.mu.Lock()
	f := ts.lastForm
	ts.mu.Unlock()
	if f.Get("grant_type") != "client_credentials" || f.Get("client_id") != "gbrain_cl_test" || f.Get("client_secret") != "gbrain_cs_test" || f.Get("scope") != "read write" {
		t.Errorf("form %v (credentials go in the form body)", f)
	}
	if ep := s.info().TokenEndpoint; ep != ts.URL+"/token" {
		t.Errorf("endpoint %q: the discovery document's localhost is the configured 127.0.0.1", ep)
	}
	for range 1000 {
		if tok, _, _ := s.token(ctx); tok != "tok1" {
			t.Fatal("renewed early")
		}
	}
	clk.add(54*time.Minute + 59*time.Second)
	if tok, _, _ := s.token(ctx); tok != "tok1" || ts.requests.Load() != 1 {
		t.Fatalf("renewed before the margin: %q, %d requests", tok, ts.requests.Load())
	}
	clk.add(2 * time.Second) // 55:01: inside the last 5 minutes
	var wg sync.WaitGroup
	got := make([]string, 20)
	for i := range got {
		wg.Add(1)
		go func() { defer wg.Done(); got[i], _, _ = s.token(ctx) }()
	}
	wg.Wait()
	for _, g := range got {
		if g != "tok2" {
			t.Fatalf("concurrent callers got %v", got)
		}
	}
	if n := ts.requests.Load(); n != 2 {
		t.Errorf("%d token requests for 20 concurrent callers (want one renewal)", n)
	}
	if a := s.info(); a.Fetches != 2 || !a.ExpiresAt.Equal(clk.now().Add(time.Hour)) {
		t.Errorf("info %+v", a)
	}

	// The endpoint fails while the token is still valid: keep it, and do
	// not ask again before retryFetchAfter.
	clk.add(56 * time.Minute)
	ts.status.Store(http.StatusServiceUnavailable)
	if tok, _, err := s.token(ctx); err != nil || tok != "tok2" {
		t.Fatalf("valid token dropped on a failed renewal: %q %v", tok, err)
	}
	before := ts.requests.Load()
	clk.add(5 * time.Second)
	if tok, _, _ := s.token(ctx); tok != "tok2" || ts.requests.Load() != before {
		t.Errorf("asked again after 5 s (%d requests)", ts.requests.Load()-before)
	}
	// Expired and still no endpoint: a Transient AuthError, nothing to send.
	clk.add(5 * time.Minute)
	_, _, err = s.token(ctx)
	var ae *AuthError
	if !errors.As(err, &ae) || ae.Class != Transient {
		t.Fatalf("expired, endpoint down: %v", err)
	}
	// Refused credentials are Definite.
	ts.status.Store(http.StatusBadRequest)
	_, _, err = s.token(ctx)
	if !errors.As(err, &ae) || ae.Class != Definite || !errors.Is(err, ErrCredentialsRefused) || strings.Contains(err.Error(), "gbrain_cs_test") {
		t.Fatalf("refused: %v", err)
	}
	ts.status.Store(0)
	tok, gen, err = s.token(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// A 401 drops that token only if it is still the current one.
	resp := &http.Response{Header: http.Header{"Www-Authenticate": {`Bearer error="invalid_token", error_description="Token expired"`}}}
	s.rejected(gen-1, resp)
	if again, _, _ := s.token(ctx); again != tok {
		t.Error("a 401 for an older token dropped the current one")
	}
	s.rejected(gen, resp)
	if again, _, _ := s.token(ctx); again == tok {
		t.Error("a 401 for the current token kept it")
	}
	if a := s.info(); a.Rejections != 2 || a.LastRejection != "Token expired" {
		t.Errorf("info %+v", a)
	}
	// Requests in flight with one token that expired all come back 401:
	// one refused token, not a run of them.
	n := s.inARow()
	s.rejected(gen, resp)
	if s.inARow() != n {
		t.Errorf("a second 401 for the same token counted as another in a row: %d → %d", n, s.inARow())
	}
}

func TestRefreshMargin(t *testing.T) {
	for _, tc := range []struct{ life, want time.Duration }{
		{time.Hour, 5 * time.Minute},
		{60 * time.Second, 13 * time.Second},
		{3 * time.Second, 1500 * time.Millisecond},
		{time.Second, 500 * time.Millisecond},
	} {
		if got := refreshMargin(tc.life); got != tc.want {
			t.Errorf("refreshMargin(%s) = %s, want %s", tc.life, got, tc.want)
		}
	}
}

func TestSameServer(t *testing.T) {
	origin := &url.URL{Scheme: "http", Host: "127.0.0.1:3131"}
	for _, tc := range []struct{ endpoint, want, err string }{
		{"http://127.0.0.1:3131/token", "http://127.0.0.1:3131/token", ""},
		{"http://localhost:3131/token", "http://127.0.0.1:3131/token", ""},
		{"http://[::1]:3131/token", "http://127.0.0.1:3131/token", ""},
		{"/token", "http://127.0.0.1:3131/token", ""},
		{"http://localhost:3132/token", "", "another server"},
		{"https://localhost:3131/token", "", "another server"},
		{"https://brain.example.com/token", "", "--public-url http://127.0.0.1:3131"},
		{"ftp://x/token", "", "not an http(s) URL"},
	} {
		got, err := sameServer(origin, tc.endpoint)
		if tc.err == "" && (err != nil || got != tc.want) {
			t.Errorf("%s: %q %v, want %q", tc.endpoint, got, err, tc.want)
		}
		if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s: %q %v, want an error with %q", tc.endpoint, got, err, tc.err)
		}
	}
	// A public origin is kept as is when the document names it.
	pub := &url.URL{Scheme: "https", Host: "brain.example.com"}
	if got, err := sameServer(pub, "https://brain.example.com/token"); err != nil || got != "https://brain.example.com/token" {
		t.Errorf("public: %q %v", got, err)
	}
}
