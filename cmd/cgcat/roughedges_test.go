package main

// One test per rough edge of issue 25, item 3.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cgcat/cgcat/local/config"
	"github.com/cgcat/cgcat/server"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/spf13/cobra"
)

// TestMoreLineIsShellQuoted: the "more:" command of a page, pasted into a
// real shell, gives back every word as typed — an apostrophe, a backslash,
// a dollar and a control character included (the line used to be passed
// through local.Printable, which doubled the backslash of '\”).
func TestMoreLineIsShellQuoted(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed")
	}
	for _, query := range []string{"acme's sdk", `a\b $HOME "x"`, "tab\there", "it's \x1b[31m"} {
		root := &cobra.Command{Use: "cgcat"}
		cmd := &cobra.Command{Use: "projects", Run: func(*cobra.Command, []string) {}}
		cmd.Flags().Int("limit", 5, "")
		root.AddCommand(cmd)
		if err := cmd.Flags().Parse([]string{"--limit", "1"}); err != nil {
			t.Fatal(err)
		}
		e := &server.Envelope{Status: server.StatusOK, Projects: []server.Project{{Name: "x", ProjectID: "cg_aaaaaaaaaaaaaaaa"}}, Total: 3}
		text := renderProjects(e, listingView{query: query, page: 1, pages: 3, limit: 1, again: func(p int) string { return pageCommand(cmd, []string{query}, p) }})
		i := strings.Index(text, "more: ")
		if i < 0 {
			t.Fatalf("no more: line in\n%s", text)
		}
		line, _, _ := strings.Cut(text[i+len("more: "):], "  (or --all")
		if !utf8.ValidString(line) || strings.ContainsFunc(line, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			t.Errorf("the more: line is not printable: %q", line)
		}
		// The shell runs the line with cgcat as a function that prints its
		// words, one per NUL.
		out, err := exec.Command(bash, "-c", `cgcat() { printf '%s\0' "$@"; }; `+line).Output()
		if err != nil {
			t.Fatalf("%q: bash: %v", line, err)
		}
		got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
		want := []string{"projects", query, "--limit", "1", "--page", "2"}
		if !slices.Equal(got, want) {
			t.Errorf("query %q: the line %s gives %q, want %q", query, line, got, want)
		}
	}
}

// TestScanGapCountIsTrue: more places not covered than the 200 kept by
// path give the true gapCount and the "… and N more" line (gapCount was
// the length of the kept list, so that line could never print).
func TestScanGapCountIsTrue(t *testing.T) {
	base := canonTemp(t)
	code := filepath.Join(base, "code")
	const n = 230
	for i := range n {
		if err := os.MkdirAll(filepath.Join(code, fmt.Sprintf("d%03d", i), "deeper"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfgPath := filepath.Join(base, "config.json")
	writeTestFile(t, cfgPath, fmt.Sprintf(`{"version":1,"dataDir":%q,"discovery":{"roots":[%q],"maxDepth":1}}`, filepath.Join(base, "data"), code))
	out, errOut, rc := cliRun(t, "scan", "--json", "--config", cfgPath)
	if rc != 0 {
		t.Fatalf("scan: exit %d %s", rc, errOut)
	}
	var sum scanSummary
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatal(err)
	}
	if sum.GapCount != n || len(sum.Gaps) != 200 || sum.Coverage != "partial" {
		t.Fatalf("gapCount %d with %d listed (coverage %s), want %d with 200", sum.GapCount, len(sum.Gaps), sum.Coverage, n)
	}
	text, _, _ := cliRun(t, "scan", "--config", cfgPath)
	mustContain(t, text, fmt.Sprintf("… and %d more places not covered", n-200))
}

// TestPruneMissingForDays: --missing-for counts in days like the config
// (3d), in hours (72h), or both (1d12h); nonsense is a usage error.
func TestPruneMissingForDays(t *testing.T) {
	for in, want := range map[string]time.Duration{"3d": 72 * time.Hour, "72h": 72 * time.Hour, "1d12h": 36 * time.Hour, "0": 0, "0s": 0, "30d": 720 * time.Hour} {
		if got, err := parseAge(in); err != nil || got != want {
			t.Errorf("parseAge(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "d", "-3d", "3 days", "-1h", "3dd", "1h3d"} {
		if got, err := parseAge(in); err == nil {
			t.Errorf("parseAge(%q) = %v, want an error", in, got)
		}
	}
	base := canonTemp(t)
	code := filepath.Join(base, "code")
	cliProject(t, filepath.Join(code, "a"), `{"name":"a"}`)
	flags := []string{"--root", code, "--data-dir", filepath.Join(base, "data")}
	for _, age := range []string{"3d", "72h"} {
		out, errOut, rc := cliRun(t, append([]string{"prune", "--dry-run", "--missing-for", age}, flags...)...)
		if rc != 0 || !strings.Contains(out, "nothing to forget") {
			t.Errorf("--missing-for %s: exit %d\n%s%s", age, rc, out, errOut)
		}
	}
}

// TestForgetNamesGBrainOnlyWhenOn: forget and prune talk about GBrain
// cards only when GBrain is on.
func TestForgetNamesGBrainOnlyWhenOn(t *testing.T) {
	base := canonTemp(t)
	code := filepath.Join(base, "code")
	cliProject(t, filepath.Join(code, "a"), `{"name":"a"}`)
	flags := []string{"--root", code, "--data-dir", filepath.Join(base, "data")}
	e, _ := cliJSON(t, append([]string{"projects"}, flags...)...)
	out, errOut, rc := cliRun(t, append([]string{"forget", e.Projects[0].ProjectID}, flags...)...)
	if rc != 0 || !strings.Contains(out, "1 record(s) removed") || strings.Contains(out, "GBrain card") {
		t.Fatalf("forget with GBrain off: exit %d\n%s%s", rc, out, errOut)
	}
	var on bytes.Buffer
	if err := printForget(&on, &forgetReport{Forgotten: []forgotten{{ProjectID: "cg_aaaaaaaaaaaaaaaa"}}, gbrain: true}, false); err != nil {
		t.Fatal(err)
	}
	mustContain(t, on.String(), "their GBrain cards are taken back on the next sync")
}

// TestNotSharedOneWording: the agent's and the person's answer for a
// project this configuration does not share say the same sentence.
func TestNotSharedOneWording(t *testing.T) {
	base := canonTemp(t)
	code := filepath.Join(base, "code")
	cliProject(t, filepath.Join(code, "private", "secret"), `{"name":"secret"}`)
	data := filepath.Join(base, "data")
	open := filepath.Join(base, "open.json")
	writeTestFile(t, open, fmt.Sprintf(`{"version":1,"dataDir":%q,"discovery":{"roots":[%q]}}`, data, code))
	denied := filepath.Join(base, "denied.json")
	writeTestFile(t, denied, fmt.Sprintf(`{"version":1,"dataDir":%q,"discovery":{"roots":[%q]},"sharing":{"denyRoots":[%q]}}`, data, code, filepath.Join(code, "private")))
	e, _ := cliJSON(t, "projects", "--config", open)
	id := e.Projects[0].ProjectID
	cfg, err := config.Load(denied)
	if err != nil {
		t.Fatal(err)
	}
	msgs := map[server.Face]string{}
	for _, face := range []server.Face{server.FaceAgent, server.FaceCLI} {
		f := newFrontendFor(face, config.Fixed(cfg), "", newLogger(&bytes.Buffer{}), frontendGBrain{}, "")
		r, err := f.Resolve(context.Background(), server.ResolveArgs{ProjectID: id})
		if err != nil || r.Status != server.StatusNotAvailable {
			t.Fatalf("face %d: %v %+v", face, err, r)
		}
		msgs[face] = r.Message
	}
	if msgs[server.FaceAgent] != msgs[server.FaceCLI] || msgs[server.FaceCLI] != "This project is not shared by this configuration." {
		t.Fatalf("agent %q, person %q", msgs[server.FaceAgent], msgs[server.FaceCLI])
	}
}

// TestOneVersionEverywhere: `cgcat version`, `cgcat --version`, doctor
// and the MCP serverInfo report one version string, and a build in a
// git checkout reports more than "dev".
func TestOneVersionEverywhere(t *testing.T) { checkOneVersion(t, cgcatBin(t)) }

// checkOneVersion runs bin's version, --version, doctor and serve, and
// returns the one version they all report.
func checkOneVersion(t *testing.T, bin string) string {
	t.Helper()
	out, err := exec.Command(bin, "version", "--json").Output()
	if err != nil {
		t.Fatal(err)
	}
	var b build
	if err := json.Unmarshal(out, &b); err != nil {
		t.Fatal(err)
	}
	if b.Version == "" || (b.Version == "dev" && b.Commit != "unknown") {
		t.Fatalf("version %q with commit %q: a build that knows its commit says more than dev", b.Version, b.Commit)
	}
	short, _ := exec.Command(bin, "--version").Output()
	if !strings.HasPrefix(string(short), "cgcat version "+b.Version+" ") {
		t.Errorf("--version: %q, want %s", short, b.Version)
	}
	base := canonTemp(t)
	code := filepath.Join(base, "code")
	cliProject(t, filepath.Join(code, "a"), `{"name":"a"}`)
	cfgPath := filepath.Join(base, "config.json")
	writeTestFile(t, cfgPath, fmt.Sprintf(`{"version":1,"dataDir":%q,"discovery":{"roots":[%q]}}`, filepath.Join(base, "data"), code))
	doc, _ := exec.Command(bin, "doctor", "--config", cfgPath).Output()
	if first, _, _ := strings.Cut(string(doc), "\n"); first != "cgcat doctor (cgcat "+b.Version+")" {
		t.Errorf("doctor says %q, want version %s", first, b.Version)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := client.NewStdioMCPClient(bin, os.Environ(), "serve", "--config", cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	res, err := c.Initialize(ctx, init)
	if err != nil {
		t.Fatal(err)
	}
	if res.ServerInfo.Version != b.Version {
		t.Errorf("serverInfo.version %q, want %q", res.ServerInfo.Version, b.Version)
	}
	return b.Version
}

// TestHelpIsWrapped: every help page is wrapped at 80 columns (except
// lines laid out by hand: indented), and only subcommands point to
// `cgcat --help` (the page that has the exit-status table).
func TestHelpIsWrapped(t *testing.T) {
	root := newRootCommand(strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{})
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		for _, l := range strings.Split(c.Long, "\n") {
			if utf8.RuneCountInString(l) > helpWidth && !strings.HasPrefix(l, " ") {
				t.Errorf("%s: a help line of %d runes: %q", c.CommandPath(), utf8.RuneCountInString(l), l)
			}
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
	out, _, _ := cliRun(t, "--help")
	mustNotContain(t, out, "`cgcat --help` says more")
	mustContain(t, out, "Exit status (every command):")
	out, _, _ = cliRun(t, "scan", "--help")
	mustContain(t, out, "`cgcat --help` says more")
	if got := wrapHelp("one two three four\nfive\n\n  kept   as is\nlaid out", 10); got != "one two\nthree four\nfive\n\n  kept   as is\nlaid out" {
		t.Errorf("wrapHelp: %q", got)
	}
}
