package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// binRun runs the built cgcat binary as its own process.
func binRun(t *testing.T, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(cgcatBin(t), args...)
	cmd.Env = env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	rc := 0
	if ee, ok := err.(*exec.ExitError); ok {
		rc = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errOut.String(), rc
}

type pagedJSON struct {
	Status     string
	Message    string
	NextCursor *string
	Total      *int
	Page       int
	Pages      int
	Projects   []struct {
		ProjectID string
		Name      string
	}
}

func (p pagedJSON) ids() []string {
	var out []string
	for _, pr := range p.Projects {
		out = append(out, pr.ProjectID)
	}
	return out
}

func decodePaged(t *testing.T, out string) pagedJSON {
	t.Helper()
	var p pagedJSON
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	return p
}

// pagingFixture: seven projects whose names all contain "pay", so a plain
// listing and a search both span pages.
func pagingFixture(t *testing.T) (env []string, flags []string, names []string) {
	t.Helper()
	base := canonTemp(t)
	code := filepath.Join(base, "code")
	for i := range 7 {
		name := fmt.Sprintf("pay-gateway-%d", i)
		cliProject(t, filepath.Join(code, name), fmt.Sprintf(`{"name":%q,"description":"pay gateway number %d"}`, name, i))
		names = append(names, name)
	}
	env = append(slices.Clone(origEnv), "CGCAT_CONFIG=", "XDG_CONFIG_HOME="+filepath.Join(base, "xdg"), "XDG_DATA_HOME="+filepath.Join(base, "share"))
	flags = []string{"--root", code, "--data-dir", filepath.Join(base, "data")}
	if _, errOut, rc := binRun(t, env, append([]string{"scan"}, flags...)...); rc != 0 {
		t.Fatalf("scan: %s", errOut)
	}
	return env, flags, names
}

// TestProjectsPagingAcrossProcesses: every page is its own process; the
// pages of one listing are disjoint, in order, and together are the
// listing --all shows; the header says "N of M"; the hint for the next
// page is a command that works.
func TestProjectsPagingAcrossProcesses(t *testing.T) {
	env, flags, names := pagingFixture(t)
	for _, query := range [][]string{nil, {"pay", "gateway"}} {
		t.Run(fmt.Sprintf("query %q", query), func(t *testing.T) {
			args := append(append([]string{"projects"}, query...), flags...)
			out, errOut, rc := binRun(t, env, append(args, "--all", "--limit", "3", "--json")...)
			if rc != 0 {
				t.Fatalf("--all: exit %d %s", rc, errOut)
			}
			all := decodePaged(t, out)
			if len(all.Projects) != 7 || all.Total == nil || *all.Total != 7 || all.Pages != 3 || all.Page != 0 || all.NextCursor != nil {
				t.Fatalf("--all: %+v", all)
			}
			var paged []string
			for page := 1; page <= 3; page++ {
				out, errOut, rc := binRun(t, env, append(args, "--limit", "3", "--page", fmt.Sprint(page), "--json")...)
				if rc != 0 {
					t.Fatalf("page %d: exit %d %s", page, rc, errOut)
				}
				p := decodePaged(t, out)
				want := min(3, 7-3*(page-1))
				if p.Status != "ok" || len(p.Projects) != want || *p.Total != 7 || p.Page != page || p.Pages != 3 {
					t.Fatalf("page %d: %+v", page, p)
				}
				paged = append(paged, p.ids()...)
			}
			if !slices.Equal(paged, all.ids()) {
				t.Fatalf("pages %v\nare not the listing %v", paged, all.ids())
			}
			// The text: "N of M", the page, and the command for the next one.
			out, _, rc = binRun(t, env, append(args, "--limit", "3", "-v")...)
			what := ""
			if query != nil {
				what = ` matching "pay gateway"`
			}
			mustContain(t, out, "3 of 7 project(s)"+what+", page 1 of 3", "\n1. ", "\n3. ")
			mustNotContain(t, out, "\n4. ", "cursor")
			i := strings.Index(out, "more: ")
			if rc != 0 || i < 0 {
				t.Fatalf("exit %d, no next-page command:\n%s", rc, out)
			}
			next := strings.Fields(strings.TrimPrefix(strings.SplitN(out[i:], "\n", 2)[0], "more: "))
			next = next[:slices.Index(next, "(or")]
			if next[0] != "cgcat" || next[len(next)-2] != "--page" || next[len(next)-1] != "2" {
				t.Fatalf("next-page command %q", next)
			}
			out2, _, rc := binRun(t, env, next[1:]...)
			mustContain(t, out2, "3 of 7 project(s)"+what+", page 2 of 3", "\n4. ", "\n6. ")
			if rc != 0 || strings.Contains(out2, "\n1. ") {
				t.Fatalf("the printed next-page command gave (exit %d):\n%s", rc, out2)
			}
			last, _, _ := binRun(t, env, append(args, "--limit", "3", "--page", "3", "-v")...)
			mustContain(t, last, "1 of 7 project(s)"+what+", page 3 of 3", "\n7. ")
			mustNotContain(t, last, "more: ")
			// Past the end: a usage error that says how many pages there are.
			_, errOut, rc = binRun(t, env, append(args, "--limit", "3", "--page", "4")...)
			if rc != exitUsage || !strings.Contains(errOut, "--page 4 is past the end: 7 project(s) make 3 page(s) of 3") {
				t.Fatalf("past the end: exit %d %s", rc, errOut)
			}
		})
	}
	// All the names were listed.
	out, _, _ := binRun(t, env, append([]string{"projects", "--all", "-v"}, flags...)...)
	mustContain(t, out, "7 of 7 project(s) ")
	mustContain(t, out, names...)
}

// TestProjectsJoinsWords: the words of a query are one query, the same as
// the quoted phrase.
func TestProjectsJoinsWords(t *testing.T) {
	base := canonTemp(t)
	code := filepath.Join(base, "code")
	cliProject(t, filepath.Join(code, "pay-gateway"), `{"name":"pay-gateway","description":"card payments gateway"}`)
	cliProject(t, filepath.Join(code, "ledger"), `{"name":"ledger","description":"double-entry ledger"}`)
	cliProject(t, filepath.Join(code, "gateway-proxy"), `{"name":"gateway-proxy","description":"an HTTP proxy"}`)
	flags := []string{"--root", code, "--data-dir", filepath.Join(base, "data"), "--json", "--all"}
	words, _, rc := cliRun(t, append([]string{"projects", "pay", "gateway"}, flags...)...)
	if rc != 0 {
		t.Fatalf("exit %d", rc)
	}
	phrase, _, _ := cliRun(t, append([]string{"projects", "pay gateway"}, flags...)...)
	one, _, _ := cliRun(t, append([]string{"projects", "pay"}, flags...)...)
	w, p, o := decodePaged(t, words), decodePaged(t, phrase), decodePaged(t, one)
	if len(w.Projects) == 0 || w.Projects[0].Name != "pay-gateway" {
		t.Fatalf("pay gateway: %+v", w)
	}
	if !slices.Equal(w.ids(), p.ids()) {
		t.Fatalf("words %v, phrase %v", w.ids(), p.ids())
	}
	if slices.Equal(w.ids(), o.ids()) {
		t.Fatalf("the second word was dropped: %v", w.ids())
	}
	text, _, _ := cliRun(t, "projects", "pay", "gateway", "--root", code, "--data-dir", filepath.Join(base, "data"), "-v")
	mustContain(t, text, `matching "pay gateway"`)
}

// TestCLIWording: the CLI twins' messages name cgcat's commands, never the
// MCP tools or "this server", while the MCP text keeps its own words.
func TestCLIWording(t *testing.T) {
	base := canonTemp(t)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(base, "xdg"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(base, "share"))
	t.Setenv("CGCAT_CONFIG", "")
	code := filepath.Join(base, "code")
	cliProject(t, filepath.Join(code, "snappy"), `{"name":"snappy"}`)
	cliProject(t, filepath.Join(code, "uuid"), `{"name":"uuid"}`)
	flags := []string{"--root", code, "--data-dir", filepath.Join(base, "data")}
	e, _ := cliJSON(t, append([]string{"projects", "snappy"}, flags...)...)
	id := e.Projects[0].ProjectID
	if err := os.RemoveAll(filepath.Join(code, "snappy", ".codegraph")); err != nil {
		t.Fatal(err)
	}
	agentWords := []string{"local_codegraph", "this server", "restart", "frontend", "cursor", "call again"}
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"projects"}, []string{"cgcat config init --root /ABS/DIR", "or pass --root DIR to this command"}},
		{append([]string{"resolve", "cg_aaaaaaaaaaaaaaaa"}, flags...), []string{"unknown_project", "search again with `cgcat projects QUERY`"}},
		{append([]string{"resolve", "/etc"}, flags...), []string{"Search with `cgcat projects QUERY` instead"}},
		{append([]string{"resolve", id}, flags...), []string{"missing", "Search again with `cgcat projects QUERY`"}},
		{append([]string{"projects", "zyxwvut"}, flags...), []string{`no project matching "zyxwvut"`}},
	} {
		out, errOut, _ := cliRun(t, tt.args...)
		mustContain(t, out+errOut, tt.want...)
		mustNotContain(t, out+errOut, agentWords...)
		// --json carries the same CLI wording.
		jout, _, _ := cliRun(t, append(tt.args, "--json")...)
		mustNotContain(t, jout, agentWords...)
	}
}
