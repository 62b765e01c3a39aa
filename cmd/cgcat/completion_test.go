package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCompletionScripts: a script for each shell, each calling back into
// cgcat for the dynamic values.
func TestCompletionScripts(t *testing.T) {
	for shell, marks := range map[string][]string{
		"bash":       {"complete -o default -F __start_cgcat cgcat", "__complete"},
		"zsh":        {"#compdef cgcat", "__complete"},
		"fish":       {"complete -c cgcat", "__complete"},
		"powershell": {"Register-ArgumentCompleter", "__complete"},
	} {
		out, errOut, rc := cliRun(t, "completion", shell)
		if rc != 0 {
			t.Fatalf("%s: exit %d %s", shell, rc, errOut)
		}
		mustContain(t, out, marks...)
	}
}

// complete asks cgcat for the completions of args (the last one is the word
// being completed) the way a shell script does, and returns the values.
func complete(t *testing.T, args ...string) []string {
	t.Helper()
	out, errOut, rc := cliRun(t, append([]string{"__complete"}, args...)...)
	if rc != 0 {
		t.Fatalf("__complete %v: exit %d %s", args, rc, errOut)
	}
	var vals []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasPrefix(l, ":") || l == "" {
			continue // the directive
		}
		vals = append(vals, l)
	}
	return vals
}

func values(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i], _, _ = strings.Cut(l, "\t")
	}
	return out
}

func TestCompletionValues(t *testing.T) {
	base := canonTemp(t)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(base, "xdg"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(base, "share"))
	t.Setenv("CGCAT_CONFIG", "")
	if got := values(complete(t, "install", "")); !slices.Equal(got, []string{"codex", "opencode", "claude", "gemini", "cursor"}) {
		t.Errorf("install hosts: %q", got)
	}
	if got := values(complete(t, "uninstall", "c")); !slices.Equal(got, []string{"codex", "claude", "cursor"}) {
		t.Errorf("uninstall c: %q", got)
	}
	if got := values(complete(t, "install", "codex", "")); len(got) != 0 {
		t.Errorf("a second host: %q", got)
	}
	if got := complete(t, "instructions", "--lang", ""); !slices.Equal(values(got), []string{"en", "zh"}) {
		t.Errorf("--lang: %q", got)
	}
	if got := values(complete(t, "completion", "")); !slices.Equal(got, []string{"bash", "zsh", "fish", "powershell"}) {
		t.Errorf("completion shells: %q", got)
	}

	// Project ids: only the ones this configuration shares.
	code := filepath.Join(base, "code")
	cliProject(t, filepath.Join(code, "order-sdk"), `{"name":"@acme/order-sdk"}`)
	cliProject(t, filepath.Join(code, "payments"), `{"name":"payments"}`)
	cliProject(t, filepath.Join(code, "private", "secret-svc"), `{"name":"secret-svc"}`)
	data := filepath.Join(base, "data")
	open := filepath.Join(base, "open.json")
	writeTestFile(t, open, fmt.Sprintf(`{"version":1,"dataDir":%q,"discovery":{"roots":[%q]}}`, data, code))
	denied := filepath.Join(base, "denied.json")
	writeTestFile(t, denied, fmt.Sprintf(`{"version":1,"dataDir":%q,"discovery":{"roots":[%q]},"sharing":{"denyRoots":[%q]}}`, data, code, filepath.Join(code, "private")))

	// No catalog yet: nothing is offered, and nothing is created or scanned.
	if got := complete(t, "resolve", "--config", open, ""); len(got) != 0 {
		t.Errorf("without a catalog: %q", got)
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Fatalf("completion created the data dir (%v)", err)
	}
	if _, errOut, rc := cliRun(t, "scan", "--config", open); rc != 0 {
		t.Fatal(errOut)
	}
	all, _ := cliJSON(t, "projects", "--config", open, "--all")
	ids := map[string]string{}
	for _, p := range all.Projects {
		ids[p.Name] = p.ProjectID
	}
	if len(ids) != 3 {
		t.Fatalf("fixture: %+v", all)
	}
	got := complete(t, "resolve", "--config", open, "")
	if len(got) != 3 {
		t.Fatalf("resolve ids: %q", got)
	}
	for _, l := range got {
		id, desc, _ := strings.Cut(l, "\t")
		name, _, _ := strings.Cut(desc, " — ")
		if ids[name] != id || !strings.Contains(desc, code) {
			t.Errorf("completion %q: want the id of %q with its path", l, name)
		}
	}
	hidden := ids["secret-svc"]
	for _, args := range [][]string{
		{"resolve", "--config", denied, ""},
		{"forget", "--config", denied, ""},
	} {
		got := values(complete(t, args...))
		if slices.Contains(got, hidden) || len(got) != 2 {
			t.Errorf("%v: %q (the hidden project's id %s must not be offered; the other two must)", args, got, hidden)
		}
	}
	if got := complete(t, "resolve", "--config", denied, hidden[:len(hidden)-1]); len(got) != 0 {
		t.Errorf("the hidden id by its prefix: %q", got)
	}
	if got := complete(t, "projects", "--config", denied, "s"); slices.Contains(got, "secret-svc") || len(got) != 0 {
		t.Errorf("projects names with a deny root: %q", got)
	}
	if got := complete(t, "projects", "--config", open, "s"); !slices.Equal(got, []string{"secret-svc"}) {
		t.Errorf("projects names: %q", got)
	}
	// A prefix narrows; resolve takes one id, forget many (none twice).
	id := ids["payments"]
	if got := values(complete(t, "resolve", "--config", open, id[:len(id)-1])); !slices.Equal(got, []string{id}) {
		t.Errorf("prefix %s: %q", id[:len(id)-1], got)
	}
	if got := complete(t, "resolve", "--config", open, id, ""); len(got) != 0 {
		t.Errorf("resolve offers a second id: %q", got)
	}
	if got := values(complete(t, "forget", "--config", open, id, "")); len(got) != 2 || slices.Contains(got, id) {
		t.Errorf("forget after %s: %q", id, got)
	}
}
