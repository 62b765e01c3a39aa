//go:build unix

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestScanEscapesNames: directory names are data. One named with a
// terminal title sequence and a byte that is not UTF-8 becomes a coverage
// gap, and `cgcat scan` (the real binary, real stdout and stderr) prints
// its path escaped: no raw ESC, BEL or 0xff byte reaches the terminal.
func TestScanEscapesNames(t *testing.T) {
	base := canonTemp(t)
	code := filepath.Join(base, "code")
	fakeProject(t, filepath.Join(code, "ok"), "ok-pkg")
	evil := "gap\x1b]0;PWNED\x07\xffgap"
	if err := os.MkdirAll(filepath.Join(code, evil, "inner"), 0o755); err != nil {
		t.Skipf("this file system refuses the name: %v", err)
	}
	cmd := exec.Command(cgcatBin(t), "scan", "--root", code, "--data-dir", filepath.Join(base, "data"))
	cmd.Env = append(os.Environ(), "HOME="+base, "XDG_CONFIG_HOME="+filepath.Join(base, "xdg"), "CGCAT_CONFIG=")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("scan: %v\n%s\n%s", err, stdout.Bytes(), stderr.Bytes())
	}
	for name, b := range map[string][]byte{"stdout": stdout.Bytes(), "stderr": stderr.Bytes()} {
		for _, c := range []byte{0x1b, 0x07, 0xff} {
			if i := bytes.IndexByte(b, c); i >= 0 {
				t.Errorf("%s carries a raw 0x%02x byte: %q", name, c, b)
			}
		}
	}
	// The gap is reported, escaped.
	if !bytes.Contains(stdout.Bytes(), []byte(`gap\x1b]0;PWNED\x07`)) {
		t.Errorf("the gap is not reported with its name escaped:\n%q", stdout.Bytes())
	}
}
