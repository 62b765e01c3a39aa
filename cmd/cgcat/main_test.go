package main

// Shared helpers for the command tests: a cgcat binary built once per test
// run (host entries must name a real executable, and doctor really starts
// it), isolated HOME / CODEX_HOME / XDG dirs, fixture projects and configs.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/cgcat/cgcat/local/config"
	testfixture "github.com/cgcat/cgcat/local/fixture"
)

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
	buildDir  string
	// origEnv is the environment before any test changed HOME and the XDG
	// dirs: go build needs the real module and build caches.
	origEnv []string
)

func TestMain(m *testing.M) {
	origEnv = os.Environ()
	code := m.Run()
	cleanupE2E()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// moduleRoot is the directory holding go.mod.
func moduleRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(filepath.Dir(file)))
}

// cgcatBin builds ./cmd/cgcat once per test run into a directory any user
// may enter (the unprivileged doctor test runs it as nobody).
func cgcatBin(tb testing.TB) string {
	tb.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "cgcat-cmdtest-")
		if buildErr != nil {
			return
		}
		if buildErr = os.Chmod(buildDir, 0o755); buildErr != nil {
			return
		}
		builtBin = filepath.Join(buildDir, "cgcat")
		cmd := testfixture.BuildCommand(builtBin)
		cmd.Dir = moduleRoot()
		cmd.Env = origEnv
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		tb.Fatal(buildErr)
	}
	return builtBin
}

// canonTemp is a canonical temporary directory.
func canonTemp(tb testing.TB) string {
	tb.Helper()
	d, err := filepath.EvalSymlinks(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

func writeTestFile(tb testing.TB, path, body string) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		tb.Fatal(err)
	}
}

func readTestFile(tb testing.TB, path string) string {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// fakeProject makes dir look like a CodeGraph project (an index file with
// the SQLite header; no real CodeGraph needed) with a package.json.
func fakeProject(tb testing.TB, dir, pkg string) {
	tb.Helper()
	db := append([]byte("SQLite format 3\x00"), make([]byte, 112)...)
	writeTestFile(tb, filepath.Join(dir, ".codegraph", "codegraph.db"), string(db))
	if pkg != "" {
		writeTestFile(tb, filepath.Join(dir, "package.json"), fmt.Sprintf(`{"name": %q, "version": "1.0.0"}`, pkg))
	}
}

// testEnv is an isolated user: its own HOME, CODEX_HOME, XDG dirs, a code
// root and a cgcat config file (written by writeConfig).
type testEnv struct {
	base      string
	home      string
	codexHome string
	xdgConfig string
	root      string
	dataDir   string
	cfgPath   string
}

// newTestEnv points every host and cgcat location at fresh directories.
func newTestEnv(t *testing.T) *testEnv {
	t.Helper()
	base := canonTemp(t)
	e := &testEnv{
		base:      base,
		home:      filepath.Join(base, "home"),
		codexHome: filepath.Join(base, "home", ".codex"),
		xdgConfig: filepath.Join(base, "home", ".config"),
		root:      filepath.Join(base, "code"),
		dataDir:   filepath.Join(base, "data"),
		cfgPath:   filepath.Join(base, "home", ".config", "cgcat", "config.json"),
	}
	for _, d := range []string{e.home, e.root} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HOME", e.home)
	t.Setenv("CODEX_HOME", e.codexHome)
	t.Setenv("XDG_CONFIG_HOME", e.xdgConfig)
	t.Setenv("XDG_DATA_HOME", filepath.Join(e.home, ".local", "share"))
	t.Setenv("CGCAT_CONFIG", "")
	t.Setenv("OPENCODE_CONFIG", "")
	return e
}

// writeConfig writes the cgcat config file with the env's root and data dir.
func (e *testEnv) writeConfig(t *testing.T) {
	t.Helper()
	cfg, err := config.AdHoc([]string{e.root}, e.dataDir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := config.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, e.cfgPath, string(b))
}

// globals are the flags as a host-installing user would pass them.
func (e *testEnv) globals() *globalOptions {
	return &globalOptions{configPath: e.cfgPath}
}

// runCmd runs one of the runX functions and returns stdout, stderr and the
// exit code main would give.
func runCmd(fn func(out, errOut *bytes.Buffer) error) (stdout, stderr string, code int) {
	var out, errOut bytes.Buffer
	err := fn(&out, &errOut)
	if err != nil {
		code = 1
		if ee, ok := err.(*exitError); ok {
			code = ee.code
			if ee.err != nil {
				fmt.Fprintln(&errOut, "cgcat:", ee.err)
			}
		} else {
			fmt.Fprintln(&errOut, "cgcat:", err)
		}
	}
	return out.String(), errOut.String(), code
}

// install runs `cgcat install host` with the built binary as the command.
func (e *testEnv) install(t *testing.T, host string, o installOptions) (string, string, int) {
	t.Helper()
	if o.name == "" {
		o.name = "codegraph-catalog"
	}
	if o.executable == "" {
		o.executable = cgcatBin(t)
	}
	return runCmd(func(out, errOut *bytes.Buffer) error {
		return runInstall(context.Background(), e.globals(), &o, host, out, errOut)
	})
}

func (e *testEnv) uninstall(t *testing.T, host string, o installOptions) (string, string, int) {
	t.Helper()
	if o.name == "" {
		o.name = "codegraph-catalog"
	}
	return runCmd(func(out, errOut *bytes.Buffer) error {
		return runUninstall(context.Background(), e.globals(), &o, host, out, errOut)
	})
}

func (e *testEnv) doctor(t *testing.T, g *globalOptions) (string, string, int) {
	t.Helper()
	if g == nil {
		g = e.globals()
	}
	return runCmd(func(out, errOut *bytes.Buffer) error {
		return runDoctor(context.Background(), g, &doctorOptions{name: "codegraph-catalog"}, out, errOut)
	})
}

func (e *testEnv) codexFile() string { return filepath.Join(e.codexHome, "config.toml") }
func (e *testEnv) opencodeDir() string {
	return filepath.Join(e.xdgConfig, "opencode")
}

// backups lists the cgcat backups of path: in the host folders of the
// state directory (none may be left next to the file).
func backups(tb testing.TB, path string) []string {
	tb.Helper()
	if beside, _ := filepath.Glob(path + ".cgcat-backup-*"); len(beside) > 0 {
		tb.Fatalf("backups next to the file: %v", beside)
	}
	m, err := filepath.Glob(filepath.Join(stateDir(), "backups", "*", filepath.Base(path)+".*"))
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

func mustContain(tb testing.TB, s string, subs ...string) {
	tb.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			tb.Fatalf("output lacks %q:\n%s", sub, s)
		}
	}
}

func mustNotContain(tb testing.TB, s string, subs ...string) {
	tb.Helper()
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			tb.Fatalf("output has %q:\n%s", sub, s)
		}
	}
}
