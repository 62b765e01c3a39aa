package projection

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cgcat/cgcat/gbrain"
)

// Tests against a real GBrain on Postgres, served over HTTP
// (`gbrain serve --http`) and over stdio. They run only when these point at
// an install (see shared/GBRAIN.md, last two sections, for how to make one;
// it never belongs in this repository):
//
//	CGCAT_REAL_GBRAIN_DIR           GBrain's source tree (holds src/cli.ts), run with bun
//	CGCAT_REAL_GBRAIN_DATABASE_URL  postgresql://… of a brain made with `gbrain init --url … --no-embedding`
//	CGCAT_REAL_GBRAIN_BUN           the bun executable (default: bun on PATH)
//	CGCAT_REAL_GBRAIN_HOME          GBRAIN_HOME for the gbrain commands (default: a temp dir)
//	CGCAT_REAL_GBRAIN_CARDS         cards per sync (default 50)
//	CGCAT_REAL_GBRAIN_IDLE_SECONDS  run the token-renewal measurement this long (default: skipped)
//
// Each run registers its own source (cgcat-t-<random>) and OAuth clients,
// and starts its own `serve --http` on a free port.

type realGBrain struct {
	t        testing.TB
	dir, bun string
	env      []string
	source   string
}

func newRealGBrain(t *testing.T) *realGBrain {
	t.Helper()
	dir, db := os.Getenv("CGCAT_REAL_GBRAIN_DIR"), os.Getenv("CGCAT_REAL_GBRAIN_DATABASE_URL")
	if dir == "" || db == "" {
		t.Skip("no real GBrain: set CGCAT_REAL_GBRAIN_DIR (GBrain's source tree) and CGCAT_REAL_GBRAIN_DATABASE_URL (a Postgres brain) to run")
	}
	if _, err := os.Stat(filepath.Join(dir, "src", "cli.ts")); err != nil {
		t.Fatalf("CGCAT_REAL_GBRAIN_DIR=%s does not hold src/cli.ts: %v", dir, err)
	}
	bun := os.Getenv("CGCAT_REAL_GBRAIN_BUN")
	if bun == "" {
		var err error
		if bun, err = exec.LookPath("bun"); err != nil {
			t.Fatal("bun is not on PATH; set CGCAT_REAL_GBRAIN_BUN")
		}
	}
	home := os.Getenv("CGCAT_REAL_GBRAIN_HOME")
	if home == "" {
		home = t.TempDir()
	}
	g := &realGBrain{t: t, dir: dir, bun: bun, env: []string{
		"GBRAIN_HOME=" + home, "HOME=" + home, "GBRAIN_DATABASE_URL=" + db, "GBRAIN_SKIP_STARTUP_HOOKS=1",
		"PATH=" + filepath.Dir(bun) + string(os.PathListSeparator) + os.Getenv("PATH"),
	}}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	g.source = "cgcat-t-" + hex.EncodeToString(b)
	g.cli("sources", "add", g.source, "--no-federated")
	return g
}

// cli runs a gbrain command and returns its output.
func (g *realGBrain) cli(args ...string) string {
	g.t.Helper()
	cmd := exec.Command(g.bun, append([]string{"run", "src/cli.ts"}, args...)...)
	cmd.Dir, cmd.Env = g.dir, append(os.Environ(), g.env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		g.t.Fatalf("gbrain %s: %v\n%s", args[0], err, out)
	}
	return string(out)
}

var (
	clientIDRE     = regexp.MustCompile(`Client ID:\s+(gbrain_cl_[0-9a-f]+)`)
	clientSecretRE = regexp.MustCompile(`Client Secret:\s+(gbrain_cs_[0-9a-f]+)`)
	staticTokenRE  = regexp.MustCompile(`\b(gbrain_[0-9a-f]{40,})\b`)
)

// register is `gbrain auth register-client`; it returns id and secret.
func (g *realGBrain) register(name, source string, ttl int) (string, string) {
	g.t.Helper()
	args := []string{"auth", "register-client", name, "--grant-types", "client_credentials", "--scopes", "read write", "--source", source}
	if ttl > 0 {
		args = append(args, "--token-ttl", strconv.Itoa(ttl))
	}
	out := g.cli(args...)
	id, secret := clientIDRE.FindStringSubmatch(out), clientSecretRE.FindStringSubmatch(out)
	if id == nil || secret == nil {
		g.t.Fatalf("no client id/secret in the output of register-client (%d bytes)", len(out))
	}
	return id[1], secret[1]
}

// serveHTTP starts `gbrain serve --http` on a free port and waits for /health.
func (g *realGBrain) serveHTTP(ttl int) string {
	g.t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		g.t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(g.bun, "run", "src/cli.ts", "serve", "--http", "--port", strconv.Itoa(port), "--token-ttl", strconv.Itoa(ttl))
	cmd.Dir, cmd.Env = g.dir, append(os.Environ(), g.env...)
	var logBuf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logBuf, &logBuf
	if err := cmd.Start(); err != nil {
		g.t.Fatal(err)
	}
	g.t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(base + "/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return base + "/mcp"
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	g.t.Fatalf("gbrain serve --http did not answer /health within 60 s:\n%s", logBuf.String())
	return ""
}

func (g *realGBrain) stdio() gbrain.Connection {
	env := map[string]string{}
	for _, kv := range g.env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	return gbrain.Connection{Command: g.bun, Args: []string{"run", "src/cli.ts", "serve"}, Cwd: g.dir, Env: env}
}

func credentialsConn(t *testing.T, url, id, secret string) gbrain.Connection {
	t.Setenv("CGCAT_REAL_T_ID_"+id[len(id)-6:], id)
	t.Setenv("CGCAT_REAL_T_SECRET_"+id[len(id)-6:], secret)
	return gbrain.Connection{URL: url, ClientIDEnv: "CGCAT_REAL_T_ID_" + id[len(id)-6:], ClientSecretEnv: "CGCAT_REAL_T_SECRET_" + id[len(id)-6:]}
}

func realCards() int {
	if n, err := strconv.Atoi(os.Getenv("CGCAT_REAL_GBRAIN_CARDS")); err == nil && n > 0 {
		return n
	}
	return 50
}

// syncWith runs a first sync of a fresh catalog of n projects through conn
// and a second one, and reports cards/s and calls per card.
func syncWith(t *testing.T, g *realGBrain, conn gbrain.Connection, n int) (first Report, perSec, callsPerCard float64, second map[string]int) {
	t.Helper()
	e := newEnv(t, n)
	e.conn.Close()
	e.conn = NewConnWith(conn, gbrain.Options{ExpectedSource: g.source, HandshakeTimeout: 60 * time.Second, CallTimeout: 30 * time.Second})
	t.Cleanup(func() { e.conn.Close() })
	c, err := e.conn.Client(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	p := e.projector()
	p.RetryBudget = 10 * time.Second
	before := clientOf(c).CallCounts()
	start := time.Now()
	first = e.drain(p)
	took := time.Since(start)
	if first.Written != n {
		t.Fatalf("first sync %+v", first)
	}
	after := clientOf(c).CallCounts()
	total := 0
	for k, v := range after {
		total += v - before[k]
	}
	e.enqueue(recordIDs(e)...)
	second = clientOf(c).CallCounts()
	rep := e.drain(p)
	if rep.Unchanged != n {
		t.Errorf("second sync %+v", rep)
	}
	for k, v := range clientOf(c).CallCounts() {
		second[k] = v - second[k]
	}
	return first, float64(n) / took.Seconds(), float64(total) / float64(n), second
}

func recordIDs(e *env) []string {
	var out []string
	for _, r := range e.records() {
		out = append(out, r.ID)
	}
	return out
}

// The same brain over HTTP (OAuth client credentials) and over stdio:
// every card lands in the client's source; a client of another source and a
// static token write nothing; figures for both transports.
func TestRealGBrainOverHTTP(t *testing.T) {
	g := newRealGBrain(t)
	url := g.serveHTTP(3600)
	id, secret := g.register("cgcat-t-"+g.source, g.source, 0)
	conn := credentialsConn(t, url, id, secret)
	ctx := context.Background()

	c, err := gbrain.Dial(ctx, conn, gbrain.Options{ExpectedSource: g.source, HandshakeTimeout: 30 * time.Second, CallTimeout: 30 * time.Second})
	if err != nil {
		t.Fatalf("dial %s (the discovery document names localhost, the url 127.0.0.1): %v", url, err)
	}
	defer c.Close()
	if ws, err := c.CheckWriteSource(ctx); err != nil || ws.Source != g.source {
		t.Fatalf("write source %+v %v", ws, err)
	}
	if err := c.CheckSource(ctx); err != nil {
		t.Fatal(err)
	}

	// A client of another source, and a static token: refused before any write.
	otherID, otherSecret := g.register("cgcat-t-other-"+g.source, "default", 0)
	oc, err := gbrain.Dial(ctx, credentialsConn(t, url, otherID, otherSecret), gbrain.Options{ExpectedSource: g.source, HandshakeTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer oc.Close()
	if _, err := oc.PutPage(ctx, "catalog/codegraph/cg_realwrong", "---\ntitle: wrong\n---\nwrong"); !errors.Is(err, gbrain.ErrWrongWriteSource) {
		t.Errorf("put with a default-source client: %v", err)
	}
	tokOut := g.cli("auth", "create", "cgcat-t-static-"+g.source)
	tm := staticTokenRE.FindStringSubmatch(tokOut)
	if tm == nil {
		t.Fatal("no token in the output of auth create")
	}
	t.Setenv("CGCAT_REAL_T_STATIC", tm[1])
	sc, err := gbrain.Dial(ctx, gbrain.Connection{URL: url, TokenEnv: "CGCAT_REAL_T_STATIC"}, gbrain.Options{ExpectedSource: g.source, HandshakeTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	if ws, err := sc.CheckWriteSource(ctx); !errors.Is(err, gbrain.ErrWrongWriteSource) || ws.Transport != "legacy" {
		t.Errorf("static token: %+v %v", ws, err)
	}
	g.cli("auth", "revoke", "cgcat-t-static-"+g.source)

	n := realCards()
	rep, perSec, perCard, second := syncWith(t, g, conn, n)
	t.Logf("HTTP:  first sync of %d cards %.1f cards/s, %.2f calls per card (%+v); second sync calls %v", n, perSec, perCard, rep, second)
	srep, sPerSec, sPerCard, ssecond := syncWith(t, g, g.stdio(), n)
	t.Logf("stdio: first sync of %d cards %.1f cards/s, %.2f calls per card (%+v); second sync calls %v", n, sPerSec, sPerCard, srep, ssecond)

	// Warm per-call latency, p50 of 20, on one page.
	slug := "catalog/codegraph/cg_reallatency"
	if _, err := c.PutPage(ctx, slug, "---\ntitle: latency probe\n---\nlatency probe"); err != nil {
		t.Fatal(err)
	}
	sc2, err := gbrain.Dial(ctx, g.stdio(), gbrain.Options{ExpectedSource: g.source, HandshakeTimeout: 60 * time.Second, CallTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer sc2.Close()
	for _, tc := range []struct {
		name string
		c    *gbrain.Client
	}{{"HTTP", c}, {"stdio", sc2}} {
		get := p50(t, func() error { _, err := tc.c.GetPage(ctx, slug, true); return err })
		put := p50(t, func() error {
			_, err := tc.c.PutPage(ctx, slug, fmt.Sprintf("---\ntitle: latency probe\n---\nlatency probe %d", time.Now().UnixNano()))
			return err
		})
		list := p50(t, func() error { _, err := tc.c.ListPages(ctx, gbrain.ListOptions{Limit: 10}); return err })
		t.Logf("%s warm p50 of 20: get_page %s, put_page %s, list_pages %s", tc.name, get, put, list)
	}
}

func p50(t *testing.T, fn func() error) time.Duration {
	t.Helper()
	var ds []time.Duration
	for range 20 {
		start := time.Now()
		if err := fn(); err != nil {
			t.Fatal(err)
		}
		ds = append(ds, time.Since(start))
	}
	slices.Sort(ds)
	return ds[len(ds)/2].Round(100 * time.Microsecond)
}

// Token renewals of a connection that lives for CGCAT_REAL_GBRAIN_IDLE_SECONDS
// with 60 s tokens: one that is asked something every 10 s (a serve's
// periodic work) and one that is asked nothing.
func TestRealGBrainTokenRenewals(t *testing.T) {
	secs, _ := strconv.Atoi(os.Getenv("CGCAT_REAL_GBRAIN_IDLE_SECONDS"))
	if secs <= 0 {
		t.Skip("set CGCAT_REAL_GBRAIN_IDLE_SECONDS (e.g. 300) to measure token renewals against a real GBrain")
	}
	g := newRealGBrain(t)
	const ttl = 60 // GBrain's minimum per-client token ttl
	url := g.serveHTTP(3600)
	id, secret := g.register("cgcat-t-ttl-"+g.source, g.source, ttl)
	ctx := context.Background()
	opts := gbrain.Options{ExpectedSource: g.source, HandshakeTimeout: 30 * time.Second, CallTimeout: 30 * time.Second}
	busy, err := gbrain.Dial(ctx, credentialsConn(t, url, id, secret), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	idle, err := gbrain.Dial(ctx, credentialsConn(t, url, id, secret), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	start := time.Now()
	calls := 0
	for time.Since(start) < time.Duration(secs)*time.Second {
		if _, err := busy.ListPages(ctx, gbrain.ListOptions{Limit: 1}); err != nil {
			t.Fatalf("call %d after %s: %v", calls, time.Since(start).Round(time.Second), err)
		}
		calls++
		time.Sleep(10 * time.Second)
	}
	took := time.Since(start)
	b, i := busy.Auth(), idle.Auth()
	perHour := float64(b.Fetches) * float64(time.Hour) / float64(took)
	t.Logf("%s with %d s tokens: a connection asked every 10 s (%d calls) fetched %d tokens (%.0f/hour, %.2f per token lifetime) and got %d 401s; an idle one fetched %d (its first) and got %d 401s",
		took.Round(time.Second), ttl, calls, b.Fetches, perHour, float64(b.Fetches)*ttl/took.Seconds(), b.Rejections, i.Fetches, i.Rejections)
	if b.Rejections != 0 {
		t.Errorf("%d calls were refused: the token was not renewed in time", b.Rejections)
	}
	if want := int(took.Seconds()/ttl) + 2; b.Fetches > want || i.Fetches != 1 {
		t.Errorf("fetched %d tokens in %s (at most %d expected); idle %d", b.Fetches, took.Round(time.Second), want, i.Fetches)
	}
}

// Tokens that stop working mid-sync on a real GBrain (their expiry moved
// to the past in its database, as a revocation or a clock jump would):
// the refused calls were not applied, a new token is fetched, every card
// lands once. Needs psql on PATH.
func TestRealGBrainRefusedMidSync(t *testing.T) {
	g := newRealGBrain(t)
	psql, err := exec.LookPath("psql")
	if err != nil {
		t.Skip("psql is not on PATH (needed to expire tokens in GBrain's database)")
	}
	url := g.serveHTTP(3600)
	id, secret := g.register("cgcat-t-401-"+g.source, g.source, 0)
	expire := func() {
		out, err := exec.Command(psql, os.Getenv("CGCAT_REAL_GBRAIN_DATABASE_URL"), "-v", "ON_ERROR_STOP=1", "-qc",
			"UPDATE oauth_tokens SET expires_at = 1 WHERE client_id = '"+id+"'").CombinedOutput()
		if err != nil {
			t.Fatalf("psql: %v %s", err, out)
		}
	}
	const n = 20
	e := newEnv(t, n)
	e.conn.Close()
	e.conn = NewConnWith(credentialsConn(t, url, id, secret), gbrain.Options{ExpectedSource: g.source, HandshakeTimeout: 60 * time.Second, CallTimeout: 30 * time.Second})
	t.Cleanup(func() { e.conn.Close() })
	p := e.projector()
	p.RetryBudget = 10 * time.Second
	p.Progress = func(pr Progress) {
		if pr.Done == 5 || pr.Done == 12 {
			expire()
		}
	}
	rep := e.drain(p)
	if rep.Written != n || rep.Adopted != 0 || rep.Conflicts != 0 {
		t.Fatalf("report %+v", rep)
	}
	a := clientOf(e.conn.Current()).Auth()
	if a.Rejections != 2 || a.Fetches != 3 || a.LastRejection != "Token expired" {
		t.Errorf("auth %+v (want two 401s, three tokens)", a)
	}
	calls := clientOf(e.conn.Current()).CallCounts()
	t.Logf("%d cards through two expiries: %+v calls, %d tokens, %d refusals", n, calls, a.Fetches, a.Rejections)
	if calls["put_page"] != n {
		t.Errorf("%d puts for %d cards", calls["put_page"], n)
	}
}
