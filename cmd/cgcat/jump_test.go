package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// jumpEnv is a shell environment where cgcat is on PATH with a config
// file over the layout fixture, and, with fzf, a fake fzf that picks the
// second line it is given and records its arguments.
func jumpEnv(t *testing.T, fzf bool) (code, bin string, env []string) {
	t.Helper()
	code, _ = layoutFixture(t)
	dir := t.TempDir()
	bin = filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(cgcatBin(t), filepath.Join(bin, "cgcat")); err != nil {
		t.Fatal(err)
	}
	if fzf {
		writeTestFile(t, filepath.Join(bin, "fzf"), "#!/bin/sh\nprintf '%s\\n' \"$@\" > \"$FZF_ARGS\"\nsed -n 2p\n")
		if err := os.Chmod(filepath.Join(bin, "fzf"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfg := filepath.Join(dir, "config.json")
	writeTestFile(t, cfg, fmt.Sprintf(`{"version":1,"dataDir":%q,"discovery":{"roots":[%q]}}`, filepath.Join(filepath.Dir(code), "data"), code))
	env = []string{"PATH=" + bin + ":/usr/bin:/bin", "HOME=" + dir, "CGCAT_CONFIG=" + cfg, "FZF_ARGS=" + filepath.Join(dir, "fzf-args"), "TERM=dumb"}
	return code, bin, env
}

// TestInitHookJumps: `eval "$(cgcat init bash)"` gives cgcd, which enters
// the project a name stands for, goes back with -, enters a directory as
// cd would, and leaves the shell where it was (exit 1, the candidates
// said) when the name is not sure and there is no fzf.
func TestInitHookJumps(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed")
	}
	code, _, env := jumpEnv(t, false)
	run := func(script string) (string, string, int) {
		cmd := exec.Command(bash, "--norc", "-c", `eval "$(cgcat init bash)"; `+script)
		cmd.Env, cmd.Dir = env, code
		var out, errOut strings.Builder
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
	if out, errOut, rc := run(`cgcd payments && pwd && cgcd - >/dev/null && pwd && cgcd tools && pwd`); rc != 0 ||
		out != filepath.Join(code, "services", "payments")+"\n"+code+"\n"+filepath.Join(code, "tools")+"\n" {
		t.Fatalf("cgcd payments; cgcd -; cgcd tools: exit %d\n%s%s", rc, out, errOut)
	}
	out, errOut, rc := run(`cgcd @acme/order-sdk; echo "rc=$?"; pwd`)
	if out != "rc=1\n"+code+"\n" || !strings.Contains(errOut, "names no single project") {
		t.Fatalf("an unsure name without fzf: exit %d\n%s%s", rc, out, errOut)
	}
	// --cmd names the command; a name that is not a command name is refused.
	if out, errOut, rc := run(`eval "$(cgcat init bash --cmd j)"; j payments && pwd`); rc != 0 || out != filepath.Join(code, "services", "payments")+"\n" {
		t.Fatalf("--cmd j: exit %d\n%s%s", rc, out, errOut)
	}
}

// TestInitHookUsesFzf: with fzf installed and a terminal, an unsure name
// lets fzf choose among the matching projects' records, and cgcd enters
// the chosen one by its id.
func TestInitHookUsesFzf(t *testing.T) {
	script, err1 := exec.LookPath("script")
	bash, err2 := exec.LookPath("bash")
	if err1 != nil || err2 != nil {
		t.Skip("script(1) or bash is not installed")
	}
	code, _, env := jumpEnv(t, true)
	cmd := exec.Command(script, "-qec", bash+` --norc -c 'eval "$(cgcat init bash)"; cgcd @acme/order-sdk && pwd'`, "/dev/null")
	cmd.Env, cmd.Dir = env, code
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// The records are sorted best first; the fake fzf takes the second.
	got := strings.TrimSpace(strings.ReplaceAll(string(out), "\r", ""))
	if got != filepath.Join(code, "libs", "order-sdk") && got != filepath.Join(code, "clones", "order-sdk") {
		t.Fatalf("cgcd with fzf: %q", out)
	}
	args := readTestFile(t, strings.TrimPrefix(env[3], "FZF_ARGS="))
	mustContain(t, args, "--with-nth=1,2", "--select-1")
}

// TestInitScripts: each shell's hook defines the command and uses cgcat
// path; fish gets fish syntax.
func TestInitScripts(t *testing.T) {
	for shell, marks := range map[string][]string{
		"bash": {"cgcd() {", "command cgcat path -- \"$@\"", "command -v fzf"},
		"zsh":  {"cgcd() {", "command cgcat path -- \"$@\""},
		"fish": {"function cgcd", "command cgcat path -- $argv", "command -q fzf"},
	} {
		out, errOut, rc := cliRun(t, "init", shell)
		if rc != 0 {
			t.Fatalf("%s: exit %d %s", shell, rc, errOut)
		}
		mustContain(t, out, marks...)
		if shell != "fish" && strings.Contains(out, "__CMD__") {
			t.Errorf("%s: the placeholder is left", shell)
		}
	}
	if sh, err := exec.LookPath("sh"); err == nil {
		for _, shell := range []string{"bash"} {
			out, _, _ := cliRun(t, "init", shell)
			if b, err := exec.Command(sh, "-n", "-c", strings.ReplaceAll(out, "local ", "")).CombinedOutput(); err != nil {
				t.Errorf("%s hook does not parse: %v %s", shell, err, b)
			}
		}
	}
}
