package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cgcat/cgcat/cmd/cgcat/hostconfig"
)

// cobraWords are phrases of cobra's and strconv's own errors: none may reach
// a person.
var cobraWords = []string{"arg(s)", "accepts", "strconv", "invalid syntax", "invalid argument", "for \"--", "flag needs", "Usage:"}

// TestUsageErrors: every way of calling a command wrongly exits 2 with a
// message in the CLI's words (what is wrong, what to type) and the pointer
// to the command's help; cobra's and strconv's texts never reach a person.
func TestUsageErrors(t *testing.T) {
	base := canonTemp(t)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(base, "xdg"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(base, "share"))
	t.Setenv("CGCAT_CONFIG", "")
	for _, tt := range []struct {
		args []string
		want []string // in stderr
		help string   // the command whose --help the message points to
	}{
		{[]string{"projects", "--limit", "abc"}, []string{`--limit "abc" is not a whole number`, "how many projects per page (1-50)"}, "cgcat projects"},
		{[]string{"projects", "--limit=abc"}, []string{`--limit "abc" is not a whole number`}, "cgcat projects"},
		{[]string{"projects", "--limit", "-1"}, []string{"--limit: must be between 1 and 50, got -1"}, "cgcat projects"},
		{[]string{"projects", "--limit", "0"}, []string{"--limit: must be between 1 and 50, got 0"}, "cgcat projects"},
		{[]string{"projects", "--limit"}, []string{"--limit needs a value"}, "cgcat projects"},
		{[]string{"projects", "--limt", "3"}, []string{"unknown flag --limt for `cgcat projects` (did you mean --limit?)"}, "cgcat projects"},
		{[]string{"projects", "--page", "0"}, []string{"--page must be 1 or more, got 0"}, "cgcat projects"},
		{[]string{"projects", "--all", "--page", "2"}, []string{"--all shows every page; leave out --page 2"}, "cgcat projects"},
		{[]string{"projects", "--json=maybe"}, []string{`--json "maybe": "maybe" is not a field; the fields are projectId,`}, "cgcat projects"},
		{[]string{"projects", "--json=name,bogus"}, []string{`"bogus" is not a field`}, "cgcat projects"},
		{[]string{"projects", "--color=sometimes"}, []string{`--color "sometimes": write auto, always or never`}, "cgcat projects"},
		{[]string{"init", "tcsh"}, []string{`unknown shell "tcsh": write bash, zsh or fish`}, "cgcat init"},
		{[]string{"init", "zsh", "--cmd", "a b"}, []string{`--cmd "a b": write a plain command name`}, "cgcat init"},
		{[]string{"path"}, []string{"`cgcat path` needs NAME|ID"}, "cgcat path"},
		{[]string{"projects", "--workspace", "rel", "--limit", "51"}, []string{"--limit: must be between 1 and 50, got 51"}, "cgcat projects"},
		{[]string{"config", "bogus"}, []string{"unknown command \"bogus\" for `cgcat config`; the commands are: check, init"}, "cgcat config"},
		{[]string{"config", "chek"}, []string{`(did you mean "check"?)`}, "cgcat config"},
		{[]string{"gbrain", "bogus"}, []string{"unknown command \"bogus\" for `cgcat gbrain`"}, "cgcat gbrain"},
		{[]string{"bogus"}, []string{"unknown command \"bogus\" for `cgcat`", "projects"}, "cgcat"},
		{[]string{"projcts"}, []string{`(did you mean "projects"?)`}, "cgcat"},
		{[]string{"-x"}, []string{"unknown flag -x for `cgcat`"}, "cgcat"},
		{[]string{"resolve"}, []string{"ID is missing", "cgcat resolve cg_", "`cgcat projects` shows the ids"}, "cgcat resolve"},
		{[]string{"resolve", "cg_aaaaaaaaaaaaaaaa", "cg_bbbbbbbbbbbbbbbb"}, []string{"resolve takes one ID, got 2 arguments"}, "cgcat resolve"},
		{[]string{"resolve", "cg_aaaaaaaaaaaaaaaa", "--expect-revision", "x"}, []string{`--expect-revision "x" is not a whole number`}, "cgcat resolve"},
		{[]string{"resolve", "cg_aaaaaaaaaaaaaaaa", "--expect-revision", "-2"}, []string{"--expect-revision must be at least 1, got -2"}, "cgcat resolve"},
		{[]string{"scan", "now"}, []string{"`cgcat scan` takes no arguments, got \"now\""}, "cgcat scan"},
		{[]string{"install", "codex", "claude"}, []string{"`cgcat install` takes " + strings.Join(hostconfig.Hosts, "|") + ", got 2 arguments: \"codex\" \"claude\""}, "cgcat install"},
		{[]string{"uninstall"}, []string{"`cgcat uninstall` needs " + strings.Join(hostconfig.Hosts, "|")}, "cgcat uninstall"},
		{[]string{"forget"}, []string{"`cgcat forget` needs ID..."}, "cgcat forget"},
		{[]string{"completion"}, []string{"`cgcat completion` needs bash|zsh|fish|powershell"}, "cgcat completion"},
		{[]string{"completion", "tcsh"}, []string{`unknown shell "tcsh": write bash, zsh, fish or powershell`}, "cgcat completion"},
		{[]string{"config", "init"}, []string{"name at least one --root DIR"}, "cgcat config init"},
		{[]string{"prune", "--missing-for", "soon"}, []string{`--missing-for "soon" is not a duration`}, "cgcat prune"},
		{[]string{"instructions", "--lang", "fr"}, []string{"--lang"}, "cgcat instructions"},
		{[]string{"version", "extra"}, []string{"`cgcat version` takes no arguments"}, "cgcat version"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out, errOut, rc := cliRun(t, tt.args...)
			if rc != exitUsage {
				t.Fatalf("exit %d, want 2\nstdout: %s\nstderr: %s", rc, out, errOut)
			}
			mustContain(t, errOut, tt.want...)
			mustContain(t, errOut, "cgcat: ", "Run `"+tt.help+" --help` for usage.")
			mustNotContain(t, errOut, cobraWords...)
			if out != "" {
				t.Errorf("a usage error printed on stdout: %q", out)
			}
		})
	}
}

// TestExitStatusTable: the table is in `cgcat --help`, every command's help
// points to it, and the statuses mean what it says.
func TestExitStatusTable(t *testing.T) {
	base := canonTemp(t)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(base, "xdg"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(base, "share"))
	t.Setenv("CGCAT_CONFIG", "")
	out, _, rc := cliRun(t, "--help")
	if rc != 0 {
		t.Fatalf("--help: exit %d", rc)
	}
	mustContain(t, out, "Exit status (every command):", "0  done", "1  failed", "2  usage", "3  not found")
	for _, args := range [][]string{{"projects", "--help"}, {"config", "init", "--help"}, {"gbrain", "sync", "--help"}, {"doctor", "--help"}} {
		out, _, rc := cliRun(t, args...)
		if rc != 0 || !strings.Contains(out, "Exit status: 0 done, 1 failed, 2 usage error, 3 not found") {
			t.Errorf("%v: exit %d, no exit-status line:\n%s", args, rc, out)
		}
	}
	// A bare command group shows its help (exit 0); so does cgcat alone.
	for _, args := range [][]string{{"config"}, {}} {
		out, errOut, rc := cliRun(t, args...)
		if rc != 0 || !strings.Contains(out, "Available Commands:") || errOut != "" {
			t.Errorf("%v: exit %d\n%s\n%s", args, rc, out, errOut)
		}
	}

	code := filepath.Join(base, "code")
	cliProject(t, filepath.Join(code, "order-sdk"), `{"name":"@acme/order-sdk"}`)
	flags := []string{"--root", code, "--data-dir", filepath.Join(base, "data")}
	for _, tt := range []struct {
		args []string
		rc   int
	}{
		{[]string{"projects"}, exitOK},
		{[]string{"projects", "zyxwvut-nothing"}, exitOK}, // no match is an answer
		{[]string{"resolve", "cg_aaaaaaaaaaaaaaaa"}, exitNotFound},
		{[]string{"resolve", "/not/an/id"}, exitNotFound},
		{[]string{"forget", "cg_aaaaaaaaaaaaaaaa"}, exitNotFound},
	} {
		out, errOut, rc := cliRun(t, append(tt.args, flags...)...)
		if rc != tt.rc {
			t.Errorf("%v: exit %d, want %d\n%s\n%s", tt.args, rc, tt.rc, out, errOut)
		}
	}
	// Not set up: exit 1, with the fix, said once (issue 25: it was said
	// twice), on stderr; scan says the same (it exited 2).
	out, errOut, rc := cliRun(t, "projects")
	if rc != exitFailure || strings.Count(out+errOut, "cgcat config init --root") != 1 || !strings.Contains(errOut, "cgcat is not set up yet: there is no config file at") {
		t.Errorf("projects without a config: exit %d\n%s\n%s", rc, out, errOut)
	}
	sout, serr, src := cliRun(t, "scan")
	if src != exitFailure || sout != "" || strings.Count(serr, "cgcat config init --root") != 1 || !strings.Contains(serr, "cgcat: not set up yet: there is no config file at") {
		t.Errorf("scan without a config: exit %d\n%s\n%s", src, sout, serr)
	}
	if _, _, rc := cliRun(t, "resolve", "cg_aaaaaaaaaaaaaaaa"); rc != exitFailure {
		t.Errorf("resolve without a config: exit %d, want 1", rc)
	}
}

// TestJSONErrors: a command called with --json that fails prints one JSON
// object on stdout, with the message and the exit status, and nothing on
// stderr.
func TestJSONErrors(t *testing.T) {
	base := canonTemp(t)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(base, "xdg"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(base, "share"))
	t.Setenv("CGCAT_CONFIG", "")
	noGBrain := filepath.Join(base, "nogbrain.json")
	writeTestFile(t, noGBrain, `{"version": 1, "dataDir": "`+filepath.Join(base, "data")+`"}`)
	unreachable := filepath.Join(base, "unreachable.json")
	writeTestFile(t, unreachable, `{"version": 1, "dataDir": "`+filepath.Join(base, "data2")+`", "discovery": {"roots": ["`+base+`"]},
		"gbrain": {"enabled": true, "connectionRef": "g"}, "connections": {"g": {"command": "`+filepath.Join(base, "no-such-gbrain")+`"}}}`)
	for _, tt := range []struct {
		args []string
		rc   int
		want string
	}{
		{[]string{"projects", "--json", "--limit", "abc"}, exitUsage, `--limit "abc" is not a whole number`},
		{[]string{"projects", "--limit", "abc", "--json"}, exitUsage, `--limit "abc" is not a whole number`},
		{[]string{"config", "check", "--json"}, exitFailure, "no config file at"},
		{[]string{"gbrain", "sync", "--json", "--config", noGBrain}, exitUsage, "GBrain is not enabled"},
		{[]string{"gbrain", "sync", "--json", "--config", unreachable}, exitFailure, "cannot reach GBrain"},
		{[]string{"resolve", "--json"}, exitUsage, "ID is missing"},
	} {
		out, errOut, rc := cliRun(t, tt.args...)
		var got jsonError
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Errorf("%v: stdout is not one JSON object: %v\n%s", tt.args, err, out)
			continue
		}
		if rc != tt.rc || got.ExitCode != tt.rc || !strings.Contains(got.Error, tt.want) || errOut != "" {
			t.Errorf("%v: exit %d, %+v, stderr %q; want exit %d with %q", tt.args, rc, got, errOut, tt.rc, tt.want)
		}
	}
	// Without --json the same failure is a line on stderr.
	out, errOut, rc := cliRun(t, "gbrain", "sync", "--config", unreachable)
	if rc != exitFailure || out != "" || !strings.HasPrefix(errOut, "cgcat: cannot reach GBrain") {
		t.Errorf("gbrain sync: exit %d\nstdout %q\nstderr %q", rc, out, errOut)
	}
}

// TestStoreRecoverJSON: store recover prints its report as JSON too.
func TestStoreRecoverJSON(t *testing.T) {
	base := canonTemp(t)
	code := filepath.Join(base, "code")
	cliProject(t, filepath.Join(code, "a"), `{"name":"a"}`)
	cliProject(t, filepath.Join(code, "b"), `{"name":"b"}`)
	flags := []string{"--root", code, "--data-dir", filepath.Join(base, "data")}
	if _, errOut, rc := cliRun(t, append([]string{"scan"}, flags...)...); rc != 0 {
		t.Fatal(errOut)
	}
	out, errOut, rc := cliRun(t, append([]string{"store", "recover", "--json"}, flags...)...)
	var rep struct{ Records, Dropped int }
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rc != 0 || rep.Records != 2 || rep.Dropped != 0 {
		t.Fatalf("store recover --json: exit %d %v %+v\n%s\n%s", rc, err, rep, out, errOut)
	}
}
