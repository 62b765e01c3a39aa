package gbraintest

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// A real GBrain for tests that look for one (never part of cgcat): its
// source tree run with bun against a Postgres brain, set up outside this
// repository. The environment says where:
//
//	CGCAT_REAL_GBRAIN_DIR           GBrain's source tree (holds src/cli.ts)
//	CGCAT_REAL_GBRAIN_DATABASE_URL  postgresql://… of a brain made with `gbrain init --url … --no-embedding`
//	CGCAT_REAL_GBRAIN_BUN           the bun executable (default: bun on PATH)
//	CGCAT_REAL_GBRAIN_HOME          GBRAIN_HOME for the gbrain commands (default: a temp dir)
//
// Each Real registers its own source (cgcat-t-<random>), so runs never see
// each other's cards.
type Real struct {
	t        testing.TB
	Dir, Bun string
	Env      []string
	Source   string
}

// NewReal skips the test (saying why) when no real GBrain is configured.
func NewReal(t testing.TB) *Real {
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
	g := &Real{t: t, Dir: dir, Bun: bun, Env: []string{
		"GBRAIN_HOME=" + home, "HOME=" + home, "GBRAIN_DATABASE_URL=" + db, "GBRAIN_SKIP_STARTUP_HOOKS=1",
		"PATH=" + filepath.Dir(bun) + string(os.PathListSeparator) + os.Getenv("PATH"),
	}}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	g.Source = "cgcat-t-" + hex.EncodeToString(b)
	g.CLI("sources", "add", g.Source, "--no-federated")
	return g
}

// CLI runs a gbrain command and returns its output.
func (g *Real) CLI(args ...string) string {
	g.t.Helper()
	cmd := exec.Command(g.Bun, append([]string{"run", "src/cli.ts"}, args...)...)
	cmd.Dir, cmd.Env = g.Dir, append(os.Environ(), g.Env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		g.t.Fatalf("gbrain %s: %v\n%s", args[0], err, out)
	}
	return string(out)
}

var (
	realClientIDRE     = regexp.MustCompile(`Client ID:\s+(gbrain_cl_[0-9a-f]+)`)
	realClientSecretRE = regexp.MustCompile(`Client Secret:\s+(gbrain_cs_[0-9a-f]+)`)
)

// RegisterClient is `gbrain auth register-client NAME --grant-types
// client_credentials --scopes "read write" --source SOURCE`.
func (g *Real) RegisterClient(name, source string) (id, secret string) {
	g.t.Helper()
	out := g.CLI("auth", "register-client", name, "--grant-types", "client_credentials", "--scopes", "read write", "--source", source)
	i, s := realClientIDRE.FindStringSubmatch(out), realClientSecretRE.FindStringSubmatch(out)
	if i == nil || s == nil {
		g.t.Fatalf("no client id/secret in the output of register-client (%d bytes)", len(out))
	}
	return i[1], s[1]
}

// ServeHTTP starts `gbrain serve --http` on a free port of 127.0.0.1 and
// returns its MCP endpoint once /health answers. It stops with the test.
func (g *Real) ServeHTTP() string {
	g.t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		g.t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(g.Bun, "run", "src/cli.ts", "serve", "--http", "--port", strconv.Itoa(port))
	cmd.Dir, cmd.Env = g.Dir, append(os.Environ(), g.Env...)
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
