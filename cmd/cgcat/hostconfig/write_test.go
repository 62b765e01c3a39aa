package hostconfig

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

var testNow = time.Date(2026, 8, 1, 12, 30, 45, 0, time.UTC)

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func TestWriteWithBackupExisting(t *testing.T) {
	for _, mode := range []os.FileMode{0o600, 0o640, 0o644} {
		dir := t.TempDir()
		p := filepath.Join(dir, "config.toml")
		if err := os.WriteFile(p, []byte("old\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		backup, err := WriteWithBackup(p, []byte("new\n"), testNow, Backups{})
		if err != nil {
			t.Fatal(err)
		}
		if want := p + ".cgcat-backup-20260801T123045Z"; backup != want {
			t.Fatalf("backup = %q, want %q", backup, want)
		}
		if b, _ := os.ReadFile(p); string(b) != "new\n" {
			t.Fatalf("file = %q", b)
		}
		if b, _ := os.ReadFile(backup); string(b) != "old\n" {
			t.Fatalf("backup = %q", b)
		}
		for _, f := range []string{p, backup} {
			fi, err := os.Stat(f)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != mode {
				t.Errorf("%s mode = %v, want %v", f, fi.Mode().Perm(), mode)
			}
		}
		if names := dirNames(t, dir); !slices.Equal(names, []string{"config.toml", "config.toml.cgcat-backup-20260801T123045Z"}) {
			t.Errorf("directory holds %q (temp file left?)", names)
		}

		// A second write in the same second gets its own backup.
		backup2, err := WriteWithBackup(p, []byte("newer\n"), testNow, Backups{})
		if err != nil {
			t.Fatal(err)
		}
		if backup2 != backup+"-1" {
			t.Fatalf("second backup = %q", backup2)
		}
		if b, _ := os.ReadFile(backup2); string(b) != "new\n" {
			t.Fatalf("second backup = %q", b)
		}
		if b, _ := os.ReadFile(backup); string(b) != "old\n" {
			t.Fatalf("first backup overwritten: %q", b)
		}
	}
}

func TestWriteWithBackupNewFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "opencode.json")
	backup, err := WriteWithBackup(p, []byte("{}\n"), testNow, Backups{})
	if err != nil || backup != "" {
		t.Fatalf("backup=%q err=%v", backup, err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v", fi.Mode().Perm())
	}
	if names := dirNames(t, dir); !slices.Equal(names, []string{"opencode.json"}) {
		t.Errorf("directory holds %q", names)
	}
}

func TestWriteWithBackupFollowsSymlink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "dotfiles", "config.toml")
	if err := os.MkdirAll(filepath.Dir(real), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(real, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "config.toml")
	if err := os.Symlink(real, link); err != nil {
		t.Skip(err)
	}
	backup, err := WriteWithBackup(link, []byte("new\n"), testNow, Backups{})
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("symlink replaced: %v %v", fi, err)
	}
	if b, _ := os.ReadFile(real); string(b) != "new\n" {
		t.Fatalf("target = %q", b)
	}
	if !strings.HasPrefix(backup, real) {
		t.Errorf("backup %q not beside the real file", backup)
	}
}

func TestWriteWithBackupErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := WriteWithBackup(dir, []byte("x"), testNow, Backups{}); err == nil {
		t.Error("writing over a directory succeeded")
	}
	if _, err := WriteWithBackup(filepath.Join(dir, "missing", "config.toml"), []byte("x"), testNow, Backups{}); err == nil {
		t.Error("writing into a missing directory succeeded")
	}
	if names := dirNames(t, dir); len(names) != 0 {
		t.Errorf("left %q behind", names)
	}
}
