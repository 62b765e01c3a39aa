package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// liveFixture writes a config over code (one discovery root shared, one
// not) with its own data dir, and returns the config path.
func liveFixture(t *testing.T) (base, code, cfgPath string) {
	t.Helper()
	base = t.TempDir()
	code = filepath.Join(base, "code")
	other := filepath.Join(base, "other")
	cliProject(t, filepath.Join(code, "alpha"), `{"name":"alpha-svc"}`)
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	cfgPath = filepath.Join(base, "config.json")
	cfg := map[string]any{"version": 1, "dataDir": filepath.Join(base, "data"),
		"discovery": map[string]any{"roots": []string{code, other}},
		"sharing":   map[string]any{"roots": []string{code}}}
	b, _ := json.Marshal(cfg)
	if err := os.WriteFile(cfgPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return base, code, cfgPath
}

// Nothing skipped in silence: an index file that is no index (under 100
// bytes, not SQLite) is named with the reason by scan, config check and
// doctor, and so is a discovery root no sharing root covers.
func TestRejectedIndexesAndUnsharedRootsAreNamed(t *testing.T) {
	_, code, cfgPath := liveFixture(t)
	small := filepath.Join(code, "tiny", ".codegraph", "codegraph.db")
	notSQL := filepath.Join(code, "junk", ".codegraph", "codegraph.db")
	for path, body := range map[string]string{small: "SQLite format 3\x00", notSQL: strings.Repeat("x", 300)} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	other := filepath.Join(filepath.Dir(code), "other")
	out, errOut, rc := cliRun(t, "scan", "--config", cfgPath)
	if rc != 0 {
		t.Fatalf("scan: rc=%d %s", rc, errOut)
	}
	for _, want := range []string{"not an index: " + small, "too small to be an index", "not an index: " + notSQL, "not an SQLite file", "discovery root " + other + " is under no sharing root"} {
		if !strings.Contains(out, want) {
			t.Errorf("scan does not say %q:\n%s", want, out)
		}
	}
	out, _, rc = cliRun(t, "config", "check", "--config", cfgPath)
	for _, want := range []string{"not an index: " + small, "not an index: " + notSQL, "discovery root " + other + " is under no sharing root"} {
		if rc != 0 || !strings.Contains(out, want) {
			t.Errorf("config check does not say %q (rc %d):\n%s", want, rc, out)
		}
	}
	out, _, _ = cliRun(t, "doctor", "--config", cfgPath)
	for _, want := range []string{"2 index file(s) are not CodeGraph indexes", small, "under no sharing root"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor does not say %q:\n%s", want, out)
		}
	}
}

// With no serve alive, a CLI run looks again before answering a miss, and
// --refresh looks again before any answer: a project made a moment ago is
// found either way, and the answer says why coverage is what it is.
func TestCLIRefreshesBeforeAMiss(t *testing.T) {
	_, code, cfgPath := liveFixture(t)
	if _, errOut, rc := cliRun(t, "scan", "--config", cfgPath); rc != 0 {
		t.Fatalf("scan: %s", errOut)
	}
	decode := func(out string) (status, coverage, message string, paths []string) {
		var env struct {
			Status, Coverage, Message string
			Projects                  []struct{ ProjectPath *string }
		}
		if err := json.Unmarshal([]byte(out), &env); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		for _, p := range env.Projects {
			if p.ProjectPath != nil {
				paths = append(paths, *p.ProjectPath)
			}
		}
		return env.Status, env.Coverage, env.Message, paths
	}
	// A hit with no process following the disk: partial (a person's run
	// is not told so on every hit; an agent's answer says why, below).
	out, _, _ := cliRun(t, "projects", "alpha-svc", "--json", "--config", cfgPath)
	if st, cov, _, _ := decode(out); st != "ok" || cov != "partial" {
		t.Errorf("a hit with nothing following the disk: %s %s", st, cov)
	}
	// A miss: the new project is looked for before the answer.
	beta := filepath.Join(code, "new", "beta")
	cliProject(t, beta, `{"name":"zephyrine"}`)
	out, _, _ = cliRun(t, "projects", "zephyrine", "--json", "--config", cfgPath)
	if st, cov, _, paths := decode(out); st != "ok" || len(paths) != 1 || paths[0] != beta || cov != "complete" {
		t.Errorf("a miss was answered without looking again: %s %s %v\n%s", st, cov, paths, out)
	}
	// --refresh: a hit answer also looks again first (a second project
	// matching the same word appears).
	gamma := filepath.Join(code, "new", "gamma")
	cliProject(t, gamma, `{"name":"zephyrine-two"}`)
	out, _, _ = cliRun(t, "projects", "zephyrine", "--refresh", "--json", "--config", cfgPath)
	if _, cov, _, paths := decode(out); len(paths) != 2 || cov != "complete" {
		t.Errorf("--refresh did not walk before answering: %s %v\n%s", cov, paths, out)
	}
}

// A record whose index moved to a project that is present comes after it
// (and after every other match), whatever its old words match: the issue's
// tern-mover case, where the old record came first.
func TestMovedRecordRanksLast(t *testing.T) {
	_, code, cfgPath := liveFixture(t)
	old := filepath.Join(code, "apps", "tern-mover")
	cliProject(t, old, `{"name":"tern-mover","description":"moves terns"}`)
	cliProject(t, filepath.Join(code, "apps", "tern-keeper"), `{"name":"tern-keeper","description":"keeps terns"}`)
	if _, errOut, rc := cliRun(t, "scan", "--config", cfgPath); rc != 0 {
		t.Fatalf("scan: %s", errOut)
	}
	moved := filepath.Join(code, "zz-moved", "tern-mover")
	if err := os.MkdirAll(filepath.Dir(moved), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(old, moved); err != nil {
		t.Fatal(err)
	}
	if _, errOut, rc := cliRun(t, "scan", "--config", cfgPath); rc != 0 {
		t.Fatalf("scan: %s", errOut)
	}
	for _, q := range []string{"tern-mover", "tern", ""} {
		out, _, _ := cliRun(t, "projects", q, "--json", "--limit", "50", "--config", cfgPath)
		var env struct {
			Projects []struct {
				ProjectID, Availability, MovedTo string
				ProjectPath                      *string
			}
		}
		if err := json.Unmarshal([]byte(out), &env); err != nil {
			t.Fatalf("%q: %v\n%s", q, err, out)
		}
		ghost, live := -1, -1
		for i, p := range env.Projects {
			if p.MovedTo != "" {
				ghost = i
			}
			if p.ProjectPath != nil && *p.ProjectPath == moved {
				live = i
			}
		}
		if ghost < 0 || live < 0 || ghost != len(env.Projects)-1 || live > ghost {
			t.Errorf("%q: the moved record (at %d) must come last, after its new project (at %d):\n%s", q, ghost, live, out)
		}
	}
}
