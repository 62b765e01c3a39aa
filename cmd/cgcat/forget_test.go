package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type cliEnvelope struct {
	Status   string
	Message  string
	Coverage string
	Projects []struct {
		ProjectID    string
		Name         string
		ProjectPath  *string
		Availability string
		MovedTo      string
	}
}

func cliJSON(t *testing.T, args ...string) (cliEnvelope, int) {
	t.Helper()
	out, errOut, rc := cliRun(t, append(args, "--json")...)
	var e cliEnvelope
	if err := json.Unmarshal([]byte(out), &e); err != nil {
		t.Fatalf("%v: not an envelope (rc %d): %v\n%s\n%s", args, rc, err, out, errOut)
	}
	return e, rc
}

// A moved project: its old id resolves missing with movedTo, the new record
// is listed first; prune removes the missing record, forget a present one,
// and each removed id then resolves unknown_project.
func TestMovePruneForget(t *testing.T) {
	base := canonTemp(t)
	code := filepath.Join(base, "code")
	cliProject(t, filepath.Join(code, "go", "snappy"), `{"name":"snappy"}`)
	cliProject(t, filepath.Join(code, "go", "uuid"), `{"name":"uuid"}`)
	flags := []string{"--root", code, "--data-dir", filepath.Join(base, "data")}
	if _, errOut, rc := cliRun(t, append([]string{"scan"}, flags...)...); rc != 0 {
		t.Fatalf("scan: %s", errOut)
	}
	first, _ := cliJSON(t, append([]string{"projects", "snappy"}, flags...)...)
	if len(first.Projects) != 1 {
		t.Fatalf("fixture: %+v", first)
	}
	oldID := first.Projects[0].ProjectID
	if err := os.MkdirAll(filepath.Join(code, "go", "compress"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(code, "go", "snappy"), filepath.Join(code, "go", "compress", "snappy")); err != nil {
		t.Fatal(err)
	}
	cliRun(t, append([]string{"scan"}, flags...)...)
	res, rc := cliJSON(t, append([]string{"resolve", oldID}, flags...)...)
	if rc != 3 || res.Status != "missing" || len(res.Projects) != 1 || res.Projects[0].MovedTo == "" || res.Projects[0].MovedTo == oldID || !strings.Contains(res.Message, res.Projects[0].MovedTo) {
		t.Fatalf("old id after a move: rc=%d %+v", rc, res)
	}
	newID := res.Projects[0].MovedTo
	list, _ := cliJSON(t, append([]string{"projects", "snappy", "--limit", "5"}, flags...)...)
	if len(list.Projects) != 2 || list.Projects[0].ProjectID != newID || list.Projects[0].ProjectPath == nil {
		t.Fatalf("the live project must rank before its ghost: %+v", list.Projects)
	}

	out, _, rc := cliRun(t, append([]string{"prune", "--missing-for", "0s", "--dry-run"}, flags...)...)
	if rc != 0 || !strings.Contains(out, "would forget "+oldID) {
		t.Fatalf("prune --dry-run: rc=%d %s", rc, out)
	}
	if res, _ := cliJSON(t, append([]string{"resolve", oldID}, flags...)...); res.Status != "missing" {
		t.Fatalf("a dry run removed the record: %+v", res)
	}
	if out, _, rc := cliRun(t, append([]string{"prune", "--missing-for", "0s"}, flags...)...); rc != 0 || !strings.Contains(out, "forgot "+oldID) || strings.Contains(out, newID) {
		t.Fatalf("prune: rc=%d %s", rc, out)
	}
	if res, rc := cliJSON(t, append([]string{"resolve", oldID}, flags...)...); rc != 3 || res.Status != "unknown_project" {
		t.Fatalf("a pruned id: rc=%d %+v", rc, res)
	}
	if out, _, rc := cliRun(t, append([]string{"forget", newID, "cg_aaaaaaaaaaaaaaaa"}, flags...)...); rc != 3 || !strings.Contains(out, "forgot "+newID) || !strings.Contains(out, "unknown id cg_aaaaaaaaaaaaaaaa") {
		t.Fatalf("forget: rc=%d %s", rc, out)
	}
	if res, _ := cliJSON(t, append([]string{"resolve", newID}, flags...)...); res.Status != "unknown_project" {
		t.Fatalf("a forgotten id: %+v", res)
	}
	if _, errOut, rc := cliRun(t, append([]string{"forget", "/a/path"}, flags...)...); rc != 2 || !strings.Contains(errOut, "not a project id") {
		t.Fatalf("forget of a path: rc=%d %s", rc, errOut)
	}
	// Still on disk: the next scan finds it again, as a new record.
	cliRun(t, append([]string{"scan"}, flags...)...)
	again, _ := cliJSON(t, append([]string{"projects", "snappy"}, flags...)...)
	if len(again.Projects) != 1 || again.Projects[0].ProjectID == newID || again.Projects[0].ProjectID == oldID {
		t.Fatalf("rediscovered: %+v", again.Projects)
	}
}
