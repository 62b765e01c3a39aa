package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cgcat/cgcat/local/config"
)

// TestConfigInitRefusesWhatTheLoaderWould: config init checks the values as
// typed, by the rules the file is read with, and writes nothing it would
// refuse to read.
func TestConfigInitRefusesWhatTheLoaderWould(t *testing.T) {
	base := canonTemp(t)
	home := filepath.Join(base, "home")
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(base, "xdg"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(base, "share"))
	t.Setenv("CGCAT_CONFIG", "")
	t.Setenv("CODE_DIR", filepath.Join(home, "code"))
	if err := os.MkdirAll(filepath.Join(home, "code"), 0o755); err != nil {
		t.Fatal(err)
	}
	cwd := filepath.Join(base, "cwd")
	if err := os.MkdirAll(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(cwd)
	cfgPath := filepath.Join(base, "xdg", "cgcat", "config.json")
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"--root=~/code"}, []string{`--root: "~/code" starts with ~`, "did you mean --root " + filepath.Join(home, "code") + "?"}},
		{[]string{"--root", "~"}, []string{`--root: "~" starts with ~`, "did you mean --root " + home + "?"}},
		{[]string{"--root", "code"}, []string{`--root: "code" is relative`, "did you mean --root " + filepath.Join(cwd, "code") + "?"}},
		{[]string{"--root", "$CODE_DIR"}, []string{`--root: "$CODE_DIR" contains a variable`, "did you mean --root " + filepath.Join(home, "code") + "?"}},
		{[]string{"--root", "file:///srv/code"}, []string{`--root: "file:///srv/code" is a URI`}},
		{[]string{"--root", filepath.Join(home, "code"), "--data-dir", "data"}, []string{`--data-dir: "data" is relative`, "did you mean --data-dir " + filepath.Join(cwd, "data") + "?"}},
		{[]string{"--root", filepath.Join(home, "nope")}, []string{"--root " + filepath.Join(home, "nope") + " does not exist", "--allow-missing"}},
		{[]string{"--root", filepath.Join(home, "code"), "--root", filepath.Join(home, "nope")}, []string{"--root " + filepath.Join(home, "nope") + " does not exist"}},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out, errOut, rc := cliRun(t, append([]string{"config", "init"}, tt.args...)...)
			if rc != exitUsage {
				t.Fatalf("exit %d, want 2\n%s\n%s", rc, out, errOut)
			}
			mustContain(t, errOut, tt.want...)
			if _, err := os.Stat(cfgPath); !os.IsNotExist(err) {
				t.Fatalf("a refused config was written (%v)", err)
			}
			if _, err := os.Stat(filepath.Join(cwd, "~")); !os.IsNotExist(err) {
				t.Fatalf("a ~ directory appeared in the working directory")
			}
		})
	}
	// --allow-missing writes a root that does not exist yet; the file loads.
	out, errOut, rc := cliRun(t, "config", "init", "--root", filepath.Join(home, "code"), "--root", filepath.Join(home, "later"), "--allow-missing", "--json")
	if rc != 0 {
		t.Fatalf("--allow-missing: exit %d %s", rc, errOut)
	}
	var w configWritten
	if err := json.Unmarshal([]byte(out), &w); err != nil || w.Path != cfgPath || len(w.Roots) != 2 || w.Roots[1] != filepath.Join(home, "later") || len(w.Warnings) != 1 {
		t.Fatalf("config init --json: %v %+v\n%s", err, w, out)
	}
	cfg, err := config.Load(cfgPath)
	if err != nil || len(cfg.Discovery.Roots) != 2 {
		t.Fatalf("the written file does not load: %v %+v", err, cfg)
	}
	// An existing file is kept unless --force, whatever else is wrong.
	if _, errOut, rc := cliRun(t, "config", "init", "--root", filepath.Join(home, "code")); rc != exitUsage || !strings.Contains(errOut, "already exists; pass --force") {
		t.Fatalf("over an existing file: exit %d %s", rc, errOut)
	}
}

// TestConfigCheck: without a file it fails and says how to make one; with
// one it says what it means, as text or JSON; an invalid file fails.
func TestConfigCheck(t *testing.T) {
	base := canonTemp(t)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(base, "xdg"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(base, "share"))
	t.Setenv("CGCAT_CONFIG", "")
	out, errOut, rc := cliRun(t, "config", "check")
	if rc != exitFailure || out != "" || !strings.Contains(errOut, "no config file at "+filepath.Join(base, "xdg", "cgcat", "config.json")) || !strings.Contains(errOut, "cgcat config init --root DIR") {
		t.Fatalf("no file: exit %d\n%s\n%s", rc, out, errOut)
	}
	named := filepath.Join(base, "named.json")
	if _, errOut, rc := cliRun(t, "config", "check", "--config", named); rc != exitFailure || !strings.Contains(errOut, "cgcat config init --config "+named+" --root DIR") {
		t.Fatalf("no file at --config: exit %d %s", rc, errOut)
	}
	t.Setenv("CGCAT_CONFIG", named)
	if _, errOut, rc := cliRun(t, "config", "check"); rc != exitFailure || !strings.Contains(errOut, "no config file at "+named) {
		t.Fatalf("no file at $CGCAT_CONFIG: exit %d %s", rc, errOut)
	}
	writeTestFile(t, named, `{"version": 1, "dataDir": "/data", "discovery": {"rots": []}}`)
	if _, errOut, rc := cliRun(t, "config", "check"); rc != exitFailure || !strings.Contains(errOut, `discovery.rots: unknown field (did you mean "roots"?)`) {
		t.Fatalf("invalid file: exit %d %s", rc, errOut)
	}
	code := filepath.Join(base, "code")
	if err := os.MkdirAll(filepath.Join(code, "private"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, named, fmt.Sprintf(`{"version": 1, "dataDir": %q, "discovery": {"roots": [%q]}, "sharing": {"denyRoots": [%q]}}`,
		filepath.Join(base, "data"), code, filepath.Join(code, "private")))
	out, errOut, rc = cliRun(t, "config", "check", "--json")
	var rep configReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rc != 0 {
		t.Fatalf("check --json: exit %d %v\n%s\n%s", rc, err, out, errOut)
	}
	if rep.Config != named || !rep.Valid || len(rep.DiscoveryRoots) != 1 || rep.DiscoveryRoots[0] != code || len(rep.DenyRoots) != 1 ||
		rep.Hints.Checked || !strings.Contains(rep.Hints.Note, "cgcat scan") {
		t.Fatalf("check --json: %+v", rep)
	}
	out, _, rc = cliRun(t, "config", "check")
	mustContain(t, out, "config: "+named+" — valid", "discovery root: "+code, "deny root: "+filepath.Join(code, "private"), "hint files: not checked (no catalog yet")
	if rc != 0 {
		t.Fatalf("check: exit %d", rc)
	}
}

// TestHintProblemsReported: a typo'd key in a project's hint file shows up,
// with its did-you-mean, in config check (text and JSON) and in doctor —
// and never for a project this configuration hides.
func TestHintProblemsReported(t *testing.T) {
	e := newTestEnv(t)
	cliProject(t, filepath.Join(e.root, "app"), `{"name":"app"}`)
	writeTestFile(t, filepath.Join(e.root, "app", "codegraph", "project.json"), `{"alias": ["the-app"], "tags": ["web"]}`)
	cliProject(t, filepath.Join(e.root, "private", "secret"), `{"name":"secret"}`)
	writeTestFile(t, filepath.Join(e.root, "private", "secret", "codegraph", "project.json"), `{"relatd": ["x"]}`)
	cliProject(t, filepath.Join(e.root, "clean"), `{"name":"clean"}`)
	writeTestFile(t, filepath.Join(e.root, "clean", "codegraph", "project.json"), `{"aliases": ["tidy"]}`)
	e.writeConfig(t)
	if _, errOut, rc := cliRun(t, "scan"); rc != 0 {
		t.Fatal(errOut)
	}
	appProblem := `codegraph/project.json: unknown key "alias" (did you mean "aliases"?)`
	out, _, rc := cliRun(t, "config", "check")
	if rc != 0 {
		t.Fatalf("check: exit %d", rc)
	}
	mustContain(t, out, "hint files: 2 problem(s) in 3 catalogued project(s)", filepath.Join(e.root, "app")+": "+appProblem,
		`codegraph/project.json: unknown key "relatd" (did you mean "related"?)`)

	// Deny the private folder: its problem is no longer shown or counted.
	cfg, err := config.AdHoc([]string{e.root}, e.dataDir)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Sharing.DenyRoots = []string{filepath.Join(e.root, "private")}
	b, _ := config.Marshal(cfg)
	writeTestFile(t, e.cfgPath, string(b))
	out, _, _ = cliRun(t, "config", "check", "--json")
	var rep configReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if !rep.Hints.Checked || rep.Hints.Projects != 2 || len(rep.Hints.Problems) != 1 || rep.Hints.Problems[0].Problem != appProblem ||
		rep.Hints.Problems[0].Root != filepath.Join(e.root, "app") || strings.Contains(out, "secret") {
		t.Fatalf("check --json with a deny root: %+v\n%s", rep.Hints, out)
	}
	// The known keys of the app's file still count: its tag finds it.
	env, _ := cliJSON(t, "projects", "web")
	if len(env.Projects) != 1 || env.Projects[0].Name != "app" {
		t.Fatalf("the tag of a file with an unknown key: %+v", env)
	}
	var dout, derr bytes.Buffer
	_ = runDoctor(context.Background(), e.globals(), &doctorOptions{name: "codegraph-catalog"}, &dout, &derr)
	mustContain(t, dout.String(), "problem(s) in project hint files", appProblem)
}
