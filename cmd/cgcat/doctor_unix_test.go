//go:build unix

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// TestDoctorUnwritableDataDir: a data dir this user may not write is a ✗
// with a fix. Root writes anywhere, so as root the check runs the built
// binary as user nobody.
func TestDoctorUnwritableDataDir(t *testing.T) {
	if os.Geteuid() != 0 {
		e := newTestEnv(t)
		e.writeConfig(t)
		if err := os.MkdirAll(e.dataDir, 0o555); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(e.dataDir, 0o555); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(e.dataDir, 0o755) })
		out, _, code := e.doctor(t, nil)
		if code != 1 {
			t.Fatalf("exit %d, want 1\n%s", code, out)
		}
		mustContain(t, out, "✗ data dir "+e.dataDir+" is not writable", "fix: make it writable by this user")
		return
	}
	bin := cgcatBin(t)
	base, err := os.MkdirTemp("", "cgcat-doctor-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(base, "code")
	data := filepath.Join(base, "data")
	cfgPath := filepath.Join(base, "config.json")
	for _, d := range []string{root, data} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeTestFile(t, cfgPath, `{"version": 1, "dataDir": "`+data+`", "discovery": {"roots": ["`+root+`"]}}`)
	cmd := exec.Command(bin, "doctor", "--config", cfgPath)
	cmd.Env = []string{"HOME=" + base, "PATH=/usr/bin:/bin", "CODEX_HOME=" + filepath.Join(base, "codex"), "XDG_CONFIG_HOME=" + filepath.Join(base, "xdg")}
	cmd.Dir = base
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 1 {
		t.Fatalf("doctor as nobody: %v, want exit 1\n%s", err, out.String())
	}
	mustContain(t, out.String(), "✓ discovery root "+root+" is a readable directory", "✗ data dir "+data+" is not writable", "fix: make it writable by this user (chmod u+w "+data+")")
}
