package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cgcat/cgcat/server"
)

// layoutFixture: four projects, two of them clones of one package, and a
// name with a tab in it.
func layoutFixture(t *testing.T) (code string, flags []string) {
	t.Helper()
	base := canonTemp(t)
	code = filepath.Join(base, "code")
	cliProject(t, filepath.Join(code, "libs", "order-sdk"), `{"name":"@acme/order-sdk","description":"order client"}`)
	cliProject(t, filepath.Join(code, "clones", "order-sdk"), `{"name":"@acme/order-sdk","description":"order client"}`)
	cliProject(t, filepath.Join(code, "services", "payments"), `{"name":"payments","description":"charges and refunds"}`)
	cliProject(t, filepath.Join(code, "tools", "odd"), `{"name":"odd\tname","description":"tab in the name"}`)
	flags = []string{"--root", code, "--data-dir", filepath.Join(base, "data")}
	if _, errOut, rc := cliRun(t, append([]string{"scan"}, flags...)...); rc != 0 {
		t.Fatal(errOut)
	}
	return code, flags
}

// TestRecordsInAPipe: in a pipe, every project is one line of four
// tab-separated fields, with no header, every page, and control
// characters escaped so a record never breaks.
func TestRecordsInAPipe(t *testing.T) {
	code, flags := layoutFixture(t)
	out, errOut, rc := cliRun(t, append([]string{"projects"}, flags...)...)
	if rc != 0 {
		t.Fatalf("exit %d %s", rc, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines, want 4 (every project, no header):\n%s", len(lines), out)
	}
	paths := map[string]bool{}
	for _, l := range lines {
		f := strings.Split(l, "\t")
		if len(f) != 4 || !strings.HasPrefix(f[1], code) || !strings.HasPrefix(f[2], "cg_") || f[3] != "present" {
			t.Errorf("record %q", l)
		}
		paths[f[1]] = true
	}
	if !paths[filepath.Join(code, "tools", "odd")] {
		t.Errorf("no record for tools/odd:\n%s", out)
	}
	// Names are cleaned when read; a path is not: a tab or a line break
	// in it is escaped, so a record stays one line of four fields.
	odd := "/code/a\tb\nc"
	var rec strings.Builder
	if err := writeRecords(&rec, []server.Project{{Name: "x\ty", ProjectPath: &odd, ProjectID: "cg_aaaaaaaaaaaaaaaa", Availability: "present"}}); err != nil {
		t.Fatal(err)
	}
	if rec.String() != "x\\x09y\t/code/a\\x09b\\x0ac\tcg_aaaaaaaaaaaaaaaa\tpresent\n" {
		t.Errorf("record %q", rec.String())
	}
	if strings.Contains(out, "\033[") {
		t.Errorf("colour in a pipe:\n%q", out)
	}
	// More than the default page of 5: every one.
	for i := range 8 {
		cliProject(t, filepath.Join(code, "more", fmt.Sprint(i)), fmt.Sprintf(`{"name":"more-%d"}`, i))
	}
	if _, errOut, rc := cliRun(t, append([]string{"scan"}, flags...)...); rc != 0 {
		t.Fatal(errOut)
	}
	out, _, _ = cliRun(t, append([]string{"projects"}, flags...)...)
	if n := strings.Count(out, "\n"); n != 12 {
		t.Errorf("%d records, want all 12", n)
	}
}

// TestShortLayout: on a terminal (faked by the layout's own input), one
// line per project with a mark, the name, the path with ~, colour unless
// NO_COLOR, cut to the width; a page fits the lines.
func TestShortLayout(t *testing.T) {
	home, _ := os.UserHomeDir()
	p1 := filepath.Join(home, "code", "payments")
	gone := server.Project{Name: "old", ProjectID: "cg_bbbbbbbbbbbbbbbb", Availability: "missing", MovedTo: "cg_cccccccccccccccc"}
	ps := []server.Project{{Name: "payments", ProjectPath: &p1, Availability: "present", Workspace: "self"}, gone,
		{Name: "客户端", ProjectPath: &p1, Availability: "present", Reason: []string{"weaker match: x"}}}
	var b strings.Builder
	if err := writeShort(&b, termOut{tty: true, width: 60, lines: 24}, ps); err != nil {
		t.Fatal(err)
	}
	want := "✓ payments  ~/code/payments  (this workspace)\n" +
		"✗ old\u00a0\u00a0\u00a0\u00a0\u00a0\u00a0\u00a0\u00a0  moved: cgcat show cg_cccccccccccccccc\n"
	want = strings.ReplaceAll(want, "\u00a0", " ")
	got := b.String()
	if !strings.HasPrefix(got, want[:strings.Index(want, "\n")+1]) || !strings.Contains(got, "✗ old") || !strings.Contains(got, "moved: cgcat show cg_cccccccccccccccc") {
		t.Errorf("got\n%s", got)
	}
	if !strings.Contains(got, "客户端    ~/code/payments  (weaker match)") {
		t.Errorf("a wide name is padded by cells, a weaker match said:\n%s", got)
	}
	b.Reset()
	_ = writeShort(&b, termOut{tty: true, color: true, width: 30, lines: 24}, ps[:1])
	if !strings.Contains(b.String(), "\033[32m✓\033[0m") || !strings.Contains(b.String(), "…") {
		t.Errorf("colour and a cut path at 30 columns: %q", b.String())
	}
	// The page fits the terminal.
	o := &projectsOptions{limit: server.DefaultLimit, page: 1}
	if l := o.chooseLayout(termOut{tty: true, lines: 12}); l != layoutShort || o.limit != 10 {
		t.Errorf("12 lines: layout %d, limit %d", l, o.limit)
	}
	o = &projectsOptions{limit: server.DefaultLimit, page: 1}
	if l := o.chooseLayout(termOut{}); l != layoutRecords || !o.all {
		t.Errorf("a pipe: layout %d, all %v", l, o.all)
	}
	t.Setenv("NO_COLOR", "1")
	if tt, _ := termOf(&globalOptions{color: "auto"}, os.Stdout); tt.color {
		t.Error("NO_COLOR is set, yet colour")
	}
	if tt, _ := termOf(&globalOptions{color: "always"}, &strings.Builder{}); !tt.color {
		t.Error("--color=always on a pipe: no colour")
	}
}

// TestShortLayoutOnARealTerminal runs cgcat under a pseudo-terminal
// (script(1)): the short layout, coloured, with the page's footer.
func TestShortLayoutOnARealTerminal(t *testing.T) {
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("script(1) is not installed")
	}
	_, flags := layoutFixture(t)
	cmd := exec.Command(script, "-qec", shellJoin(append([]string{cgcatBin(t), "projects", "--limit", "2"}, flags...)), "/dev/null")
	cmd.Env = append(os.Environ(), "NO_COLOR=", "TERM=xterm", "COLUMNS=100")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	s := string(out)
	mustContain(t, s, "\033[32m✓\033[0m", "… 2 more: ", "--page 2")
	mustNotContain(t, s, "projectId=", "\t")
}

func shellJoin(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = shellWord(w)
	}
	return strings.Join(out, " ")
}

// TestJSONFields: --json FIELDS (with = or a space) prints one array of
// objects with exactly those fields; --json alone the envelope.
func TestJSONFields(t *testing.T) {
	code, flags := layoutFixture(t)
	for _, args := range [][]string{{"projects", "--json", "name,projectPath"}, {"projects", "--json=name,projectPath"}, {"projects", "order", "--json", "name,projectPath"}} {
		out, errOut, rc := cliRun(t, append(args, flags...)...)
		var rows []map[string]any
		if err := json.Unmarshal([]byte(out), &rows); err != nil || rc != 0 || len(rows) == 0 {
			t.Fatalf("%v: exit %d %v\n%s%s", args, rc, err, out, errOut)
		}
		for _, r := range rows {
			p, _ := r["projectPath"].(string)
			if len(r) != 2 || r["name"] == nil || !strings.HasPrefix(p, code) {
				t.Errorf("%v: row %v", args, r)
			}
		}
	}
	// A query that is a field name goes before --json.
	out, _, _ := cliRun(t, append([]string{"projects", "name", "--json"}, flags...)...)
	if !strings.Contains(out, `"schemaVersion"`) {
		t.Errorf("--json alone: %s", out)
	}
	if got := joinJSONFields([]string{"projects", "--json", "name", "x", "--", "--json", "name"}); !slices.Equal(got, []string{"projects", "--json=name", "x", "--", "--json", "name"}) {
		t.Errorf("joinJSONFields: %q", got)
	}
}

// TestPathPicksOnlyWhenSure: path prints the root of the one project a
// name stands for; clones of one package, or a word that is no project's
// name, exit 1 with the candidates on stderr and nothing on stdout.
func TestPathPicksOnlyWhenSure(t *testing.T) {
	code, flags := layoutFixture(t)
	for _, tt := range []struct {
		words []string
		want  string
		rc    int
	}{
		{[]string{"payments"}, filepath.Join(code, "services", "payments"), 0},
		{[]string{"PAYMENTS"}, filepath.Join(code, "services", "payments"), 0},
		{[]string{"refunds"}, filepath.Join(code, "services", "payments"), 0}, // the only match
		{[]string{"@acme/order-sdk"}, "", 1},                                  // two clones
		{[]string{"order", "client"}, "", 1},                                  // two matches, no name
		{[]string{"zyxwvut"}, "", 1},
		{[]string{"cg_aaaaaaaaaaaaaaaa"}, "", 3},
	} {
		out, errOut, rc := cliRun(t, append(append([]string{"path"}, flags...), tt.words...)...)
		if rc != tt.rc || strings.TrimSuffix(out, "\n") != tt.want {
			t.Errorf("path %q: exit %d, %q; want %d, %q\n%s", tt.words, rc, out, tt.rc, tt.want, errOut)
		}
		if tt.rc == 1 && len(tt.words) == 1 && tt.words[0] == "@acme/order-sdk" {
			mustContain(t, errOut, "names no single project", filepath.Join(code, "libs", "order-sdk"), filepath.Join(code, "clones", "order-sdk"))
		}
	}
	// By id: the same path as by name; show gives the detail.
	e, _ := cliJSON(t, append([]string{"projects", "payments"}, flags...)...)
	out, _, rc := cliRun(t, append([]string{"path", e.Projects[0].ProjectID}, flags...)...)
	if rc != 0 || strings.TrimSpace(out) != filepath.Join(code, "services", "payments") {
		t.Errorf("path by id: %d %q", rc, out)
	}
	out, _, rc = cliRun(t, append([]string{"show", "payments"}, flags...)...)
	if rc != 0 || !strings.Contains(out, "projectId="+e.Projects[0].ProjectID) || !strings.Contains(out, "description: \"charges and refunds\"") {
		t.Errorf("show payments: %d\n%s", rc, out)
	}
	out, _, rc = cliRun(t, append([]string{"resolve", "payments"}, flags...)...)
	if rc != 0 || !strings.Contains(out, "projectId="+e.Projects[0].ProjectID) {
		t.Errorf("resolve payments: %d\n%s", rc, out)
	}
}

// TestWorkspaceDefaultsToCurrentDirectory: run from inside a project,
// projects marks it as the workspace without --workspace; --workspace=
// turns the hint off.
func TestWorkspaceDefaultsToCurrentDirectory(t *testing.T) {
	code, flags := layoutFixture(t)
	t.Chdir(filepath.Join(code, "services", "payments"))
	out, _, _ := cliRun(t, append([]string{"projects", "--json", "name,workspace"}, flags...)...)
	var rows []struct{ Name, Workspace string }
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatal(err)
	}
	if last := rows[len(rows)-1]; last.Name != "payments" || last.Workspace != "self" {
		t.Fatalf("the current directory's project is not the workspace: %+v", rows)
	}
	out, _, _ = cliRun(t, append([]string{"projects", "--workspace=", "--json", "workspace"}, flags...)...)
	if strings.Contains(out, "self") {
		t.Fatalf("--workspace= still marks a workspace: %s", out)
	}
}

// TestCompletionOffersNames: where people type names, completion offers
// the forms a search finds exactly (`projects ord<TAB>` → order-sdk for
// @acme/order-sdk; `resolve pay<TAB>` → payments), and resolve takes the
// name.
func TestCompletionOffersNames(t *testing.T) {
	_, flags := layoutFixture(t)
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"projects", "ord"}, []string{"order-sdk"}},
		{[]string{"projects", "@ac"}, []string{"@acme/order-sdk"}},
		{[]string{"resolve", "pay"}, []string{"payments"}},
		{[]string{"path", "PAY"}, []string{"payments"}},
		{[]string{"show", "od"}, []string{"odd"}},
	} {
		got := values(complete(t, append(append(tt.args[:1:1], flags...), tt.args[1:]...)...))
		if !slices.Equal(got, tt.want) {
			t.Errorf("%v: %q, want %q", tt.args, got, tt.want)
		}
	}
}
