package gbraintest

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cgcat/cgcat/gbrain"
	"github.com/cgcat/cgcat/gbrain/gbraintest/internal/fakebrain"
	"github.com/cgcat/cgcat/gbrain/gbraintest/internal/fakeserver"
)

// HTTPStats counts what the fake's HTTP side saw: tokens issued, token
// requests refused, 401 answers and authenticated MCP requests.
type HTTPStats = fakebrain.HTTPStats

// HTTPOptions start `fakegbrain serve --http`.
type HTTPOptions struct {
	// TokenTTL is the server's --token-ttl in seconds (0: 3600, GBrain's
	// default). A client registered with its own TTL keeps it.
	TokenTTL int
	// PublicURL is --public-url: the issuer the discovery document names
	// (default http://localhost:PORT/, whatever address was dialed).
	PublicURL string
	// Env is added to the server's environment (e.g.
	// GBRAIN_OAUTH_TOKEN_RATE_LIMIT_MAX).
	Env map[string]string
}

// HTTPServer is a running fake `gbrain serve --http`, stopped when the test
// ends.
type HTTPServer struct {
	// Base is http://127.0.0.1:PORT; MCP is its MCP endpoint (Base + "/mcp").
	Base, MCP string
	cmd       *exec.Cmd    // a process
	srv       *http.Server // in process
	waited    chan struct{}
}

// ServeHTTP starts the fake as `fakegbrain serve --http` on a free port of
// 127.0.0.1 and waits until it listens (an in-process fake serves on a
// listener of the test process).
func (f *Fake) ServeHTTP(t testing.TB, o HTTPOptions) *HTTPServer {
	t.Helper()
	if f.InProcess() {
		return f.serveHTTPInProcess(t, o)
	}
	ready := filepath.Join(f.Dir, fmt.Sprintf("http-ready-%d", time.Now().UnixNano()))
	args := []string{"serve", "--http", "--port", "0", "--bind", "127.0.0.1"}
	if o.TokenTTL > 0 {
		args = append(args, "--token-ttl", strconv.Itoa(o.TokenTTL))
	}
	if o.PublicURL != "" {
		args = append(args, "--public-url", o.PublicURL)
	}
	cmd := exec.Command(f.Bin, args...)
	env := os.Environ()
	for k, v := range f.Connection().Env {
		env = append(env, k+"="+v)
	}
	for k, v := range o.Env {
		env = append(env, k+"="+v)
	}
	cmd.Env = append(env, "GBRAIN_FAKE_READY="+ready)
	stderr := newTail()
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &HTTPServer{cmd: cmd, waited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(s.waited) }()
	t.Cleanup(s.Stop)
	deadline := time.Now().Add(15 * time.Second)
	for {
		if b, err := os.ReadFile(ready); err == nil && len(b) > 0 {
			s.Base = string(b)
			s.MCP = s.Base + "/mcp"
			return s
		}
		select {
		case <-s.waited:
			t.Fatalf("fake gbrain serve --http exited: %s", stderr)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("fake gbrain serve --http did not listen within 15 s: %s", stderr)
		}
	}
}

func (f *Fake) serveHTTPInProcess(t testing.TB, o HTTPOptions) *HTTPServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	issuer := fmt.Sprintf("http://localhost:%d/", port)
	if o.PublicURL != "" {
		issuer = strings.TrimSuffix(o.PublicURL, "/") + "/"
	}
	envInt := func(k string) int { n, _ := strconv.Atoi(o.Env[k]); return n }
	srv := f.server(&fakebrain.Brain{Source: "default", Registered: f.Sources})
	h := srv.HTTPHandler(fakeserver.HTTPOptions{TokenTTL: o.TokenTTL, Issuer: issuer,
		LimitMax: envInt("GBRAIN_OAUTH_TOKEN_RATE_LIMIT_MAX"), LimitWindow: time.Duration(envInt("GBRAIN_OAUTH_TOKEN_RATE_LIMIT_WINDOW_MS")) * time.Millisecond})
	s := &HTTPServer{Base: "http://" + ln.Addr().String(), srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}, waited: make(chan struct{})}
	s.MCP = s.Base + "/mcp"
	go func() { _ = s.srv.Serve(ln); close(s.waited) }()
	t.Cleanup(s.Stop)
	return s
}

// Stop ends the server (idempotent).
func (s *HTTPServer) Stop() {
	select {
	case <-s.waited:
		return
	default:
	}
	if s.srv != nil {
		_ = s.srv.Close()
	} else {
		_ = s.cmd.Process.Kill()
	}
	<-s.waited
}

var credSeq atomic.Int64

// Connection is an HTTP connection to this server with OAuth client
// credentials: id and secret go into two fresh environment variables that
// the connection names (unset when the test ends; the names are unique, so
// parallel tests may call it).
func (s *HTTPServer) Connection(t testing.TB, id, secret string) gbrain.Connection {
	t.Helper()
	n := credSeq.Add(1)
	idEnv, secretEnv := fmt.Sprintf("CGCAT_FAKE_GBRAIN_CLIENT_ID_%d", n), fmt.Sprintf("CGCAT_FAKE_GBRAIN_CLIENT_SECRET_%d", n)
	setenv(t, idEnv, id)
	setenv(t, secretEnv, secret)
	return gbrain.Connection{URL: s.MCP, ClientIDEnv: idEnv, ClientSecretEnv: secretEnv}
}

// TokenConnection is an HTTP connection with a static bearer token (in a
// fresh environment variable).
func (s *HTTPServer) TokenConnection(t testing.TB, token string) gbrain.Connection {
	t.Helper()
	env := fmt.Sprintf("CGCAT_FAKE_GBRAIN_TOKEN_%d", credSeq.Add(1))
	setenv(t, env, token)
	return gbrain.Connection{URL: s.MCP, TokenEnv: env}
}

// setenv sets a variable of a name no other test uses, until the test ends.
func setenv(t testing.TB, k, v string) {
	t.Helper()
	if err := os.Setenv(k, v); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Unsetenv(k) })
}

// RegisterClient is `gbrain auth register-client NAME --grant-types
// client_credentials --scopes SCOPES --source SOURCE [--token-ttl TTL]`:
// it returns the client id and secret. scopes nil means "read write".
func (f *Fake) RegisterClient(t testing.TB, name, source string, scopes []string, tokenTTL int) (id, secret string) {
	t.Helper()
	if scopes == nil {
		scopes = []string{"read", "write"}
	}
	f.update(t, func(st *fakebrain.State) error {
		b := &fakebrain.Brain{Registered: f.Sources}
		var err error
		id, secret, err = b.RegisterClient(st, name, []string{"client_credentials"}, scopes, source, tokenTTL)
		return err
	})
	return id, secret
}

// CreateToken is `gbrain auth create NAME`: a static token (writes to
// "default").
func (f *Fake) CreateToken(t testing.TB, name string) string {
	t.Helper()
	var tok string
	f.update(t, func(st *fakebrain.State) error { tok = fakebrain.CreateToken(st, name); return nil })
	return tok
}

// ExpireTokens makes every OAuth access token issued so far expired, as if
// their time had run out: the next request with one gets a 401.
func (f *Fake) ExpireTokens(t testing.TB) {
	t.Helper()
	f.update(t, func(st *fakebrain.State) error { fakebrain.ExpireTokens(st, time.Now()); return nil })
}

// HTTP returns the HTTP counts so far.
func (f *Fake) HTTP(t testing.TB) HTTPStats {
	t.Helper()
	var h HTTPStats
	f.view(t, func(st *fakebrain.State) { h = st.HTTP })
	return h
}
