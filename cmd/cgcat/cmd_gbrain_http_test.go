package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cgcat/cgcat/cmd/cgcat/doctor"

	"github.com/cgcat/cgcat/gbrain"
	"github.com/cgcat/cgcat/gbrain/gbraintest"
	"github.com/cgcat/cgcat/local/config"
)

// useHTTP rewrites the env's config to reach the fake over HTTP with conn.
func (e *gbEnv) useHTTP(conn gbrain.Connection) {
	e.t.Helper()
	cfg, err := config.Load(e.cfgPath)
	if err != nil {
		e.t.Fatal(err)
	}
	cfg.Connections = map[string]config.Connection{"fake-gbrain": {URL: conn.URL, TokenEnv: conn.TokenEnv, ClientIDEnv: conn.ClientIDEnv, ClientSecretEnv: conn.ClientSecretEnv}}
	b, err := config.Marshal(cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	writeTestFile(e.t, e.cfgPath, string(b))
}

func doctorChecks(t *testing.T, path string) (warns []string, fails int) {
	t.Helper()
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range gbrainDoctorChecks(context.Background(), cfg) {
		switch c.Status {
		case doctor.Warn:
			warns = append(warns, c.What)
		case doctor.Fail:
			fails++
		}
	}
	return warns, fails
}

// `cgcat gbrain sync` and `status` against `gbrain serve --http` with OAuth
// client credentials; status and doctor warn about a token that writes
// elsewhere, and sync then writes nothing.
func TestGBrainOverHTTP(t *testing.T) {
	e := newGBEnv(t, 3)
	srv := e.fake.ServeHTTP(t, gbraintest.HTTPOptions{})

	// A static token writes to "default": status and doctor warn, sync
	// refuses and loses nothing.
	static := e.fake.CreateToken(t, "cgcat-static")
	e.useHTTP(srv.TokenConnection(t, static))
	text, _, _ := runCmd(func(out, errOut *bytes.Buffer) error {
		return runGBrainStatus(context.Background(), e.globals(), &gbrainStatusOptions{}, out, errOut)
	})
	// Over HTTP GBrain does not tell which brain a token serves: said
	// plainly, with what it does tell.
	mustContain(t, text, `brain: expected "host", NOT CHECKED: GBrain over HTTP does not tell which brain a token serves`,
		"brain identity: GBrain 0.46.28.0 on pglite")
	mustContain(t, text, "(static token from $CGCAT_FAKE_GBRAIN_TOKEN_", "connection: ok (gbrain 0.46.28.0)",
		"writes: WARNING: gbrain whoami: wrong gbrain write source: a static token (`gbrain auth create`) writes to GBrain's default source, not to \"codegraph-catalog\"")
	mustNotContain(t, text, static)
	warns, fails := doctorChecks(t, e.cfgPath)
	if fails != 0 || len(warns) != 1 || !strings.Contains(warns[0], "GBrain write source") {
		t.Fatalf("doctor: %d fails, warnings %v", fails, warns)
	}
	_, errOut, code := e.sync(gbrainSyncOptions{})
	if code == 0 || !strings.Contains(errOut, "default source") || !strings.Contains(errOut, "3 cards wait in the outbox") {
		t.Fatalf("sync with a static token: %d %s", code, errOut)
	}
	if n := e.fake.Calls(t)["put_page"]; n != 0 {
		t.Errorf("%d puts with a token that writes to default", n)
	}

	// OAuth client credentials bound to the expected source.
	id, secret := e.fake.RegisterClient(t, "cgcat-laptop", gbSource, nil, 0)
	e.useHTTP(srv.Connection(t, id, secret))
	out, errOut, code := e.sync(gbrainSyncOptions{})
	if code != 0 {
		t.Fatalf("sync over HTTP: %d %s %s", code, out, errOut)
	}
	mustContain(t, out, "gbrain sync: 3 written")
	if n := len(e.cards()); n != 3 {
		t.Fatalf("%d cards", n)
	}
	text, _, _ = runCmd(func(out, errOut *bytes.Buffer) error {
		return runGBrainStatus(context.Background(), e.globals(), &gbrainStatusOptions{}, out, errOut)
	})
	mustContain(t, text, "http: "+srv.MCP+" (OAuth client credentials from $CGCAT_FAKE_GBRAIN_CLIENT_ID_", "connection: ok (gbrain 0.46.28.0)",
		"token: from "+srv.Base+"/token, scopes \"read write\", valid until ",
		`writes land in: codegraph-catalog (the write source of OAuth client "cgcat-laptop" (whoami))`)
	mustNotContain(t, text, secret, "WARNING")
	s := e.status()
	if !s.WriteSourceOK || s.Auth == nil || s.Auth.Mode != gbrain.AuthClientCredentials || s.Auth.Fetches != 1 {
		t.Fatalf("status %+v auth %+v", s, s.Auth)
	}
	raw, _ := json.Marshal(s)
	mustNotContain(t, string(raw), secret)
	if warns, fails := doctorChecks(t, e.cfgPath); fails != 0 || len(warns) != 0 {
		t.Fatalf("doctor: %d fails, warnings %v", fails, warns)
	}
}
