package pathid

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

func TestFileIDNoticesReplacement(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "proj")
	mkdir(t, base, "proj")
	a, err := FileID(root)
	if err != nil {
		t.Fatal(err)
	}
	if a.IsZero() {
		t.Fatal("zero id")
	}
	if b, err := FileID(root + string(filepath.Separator)); err != nil || b != a {
		t.Errorf("same directory, other spelling: %v %v != %v", err, b, a)
	}
	// Replace the root behind our back; keep the old one so its inode is
	// not reused.
	if err := os.Rename(root, root+".old"); err != nil {
		t.Fatal(err)
	}
	mkdir(t, base, "proj")
	c, err := FileID(root)
	if err != nil {
		t.Fatal(err)
	}
	if c == a {
		t.Errorf("replaced root kept id %v", a)
	}
	if _, err := FileID(filepath.Join(base, "nope")); !os.IsNotExist(err) {
		t.Errorf("missing: %v", err)
	}
	if runtime.GOOS != "windows" {
		fi, err := os.Stat(root)
		if err != nil {
			t.Fatal(err)
		}
		if id, ok := IDOf(fi); !ok || id != c {
			t.Errorf("IDOf = %v %v, want %v", id, ok, c)
		}
	}
}

func TestIDString(t *testing.T) {
	for _, id := range []ID{{}, {Dev: 1, Ino: 2}, {Dev: ^uint64(0), Ino: 7, InoHi: 9}} {
		got, err := ParseID(id.String())
		if err != nil || got != id {
			t.Errorf("ParseID(%q) = %v, %v; want %v", id.String(), got, err, id)
		}
	}
	for _, bad := range []string{"", "1", "1:2:3:4", "x:1", "1:"} {
		if _, err := ParseID(bad); err == nil {
			t.Errorf("ParseID(%q) accepted", bad)
		}
	}
}

// IDs catch an alias that no path rule sees: here a symlink, and a bind
// mount where the kernel lets us make one.
func TestUnderAnyID(t *testing.T) {
	skipOnWindows(t)
	base := mustCanonical(t, t.TempDir())
	mkdir(t, base, "private/app")
	mkdir(t, base, "public/app")
	symlink(t, filepath.Join(base, "private"), filepath.Join(base, "alias"))
	deny, err := FileID(filepath.Join(base, "private"))
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]bool{
		base + "/private/app": true,
		base + "/private":     true,
		base + "/alias/app":   true, // not canonical: the path rules would say no
		base + "/public/app":  false,
		base:                  false,
	} {
		got, err := UnderAnyID(p, []ID{{}, deny})
		if err != nil || got != want {
			t.Errorf("UnderAnyID(%q) = %v, %v; want %v", p, got, err, want)
		}
	}
	if got, _ := UnderAnyID(base+"/private", []ID{{}}); got {
		t.Error("zero id matched")
	}
	if _, err := UnderAnyID(base+"/nope/x", []ID{deny}); err == nil {
		t.Error("missing path: no error")
	}

	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		return
	}
	mnt := filepath.Join(base, "public", "bind")
	mkdir(t, base, "public/bind")
	if out, err := exec.Command("mount", "--bind", filepath.Join(base, "private"), mnt).CombinedOutput(); err != nil {
		t.Logf("bind mount refused, alias case not tried: %v %s", err, out)
		return
	}
	t.Cleanup(func() { _ = exec.Command("umount", mnt).Run() })
	p := mustCanonical(t, mnt+"/app")
	if Within(filepath.Join(base, "private"), p) {
		t.Fatalf("bind mount unexpectedly visible to path rules: %q", p)
	}
	if got, err := UnderAnyID(p, []ID{deny}); err != nil || !got {
		t.Errorf("bind-mounted deny root not caught by id: %v %v", got, err)
	}
}
