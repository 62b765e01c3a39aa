//go:build unix

package nofollow

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cgcat/cgcat/local/pathid"
)

// tree makes root/{real/{sub/f.txt,g.txt}, link -> real, real/sublink ->
// sub, real/flink -> g.txt} and returns the canonical root.
func tree(t *testing.T) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(root, "real", "sub"), 0o755))
	must(os.WriteFile(filepath.Join(root, "real", "sub", "f.txt"), []byte("deep"), 0o644))
	must(os.WriteFile(filepath.Join(root, "real", "g.txt"), []byte("top"), 0o644))
	must(os.Symlink("real", filepath.Join(root, "link")))
	must(os.Symlink("sub", filepath.Join(root, "real", "sublink")))
	must(os.Symlink("g.txt", filepath.Join(root, "real", "flink")))
	return root
}

// bothWays runs f with the platform's one-call open and with the
// component walk (the fallback where openat2 or O_NOFOLLOW_ANY is missing).
func bothWays(t *testing.T, f func(t *testing.T)) {
	t.Run("native", f)
	t.Run("walk", func(t *testing.T) {
		forceWalk(t)
		f(t)
	})
}

func TestOpenDirRefusesSymlinkInAnyComponent(t *testing.T) {
	bothWays(t, func(t *testing.T) {
		root := tree(t)
		for _, p := range []string{
			filepath.Join(root, "link"),            // the last component
			filepath.Join(root, "link", "sub"),     // an ancestor
			filepath.Join(root, "real", "sublink"), // the last, below a real one
		} {
			for name, open := range map[string]func(string) (*Dir, error){"OpenDir": OpenDir, "LookupDir": LookupDir} {
				d, err := open(p)
				if err == nil {
					d.Close()
					t.Errorf("%s(%s) followed a symlink", name, p)
					continue
				}
				if !IsSymlink(err) {
					t.Errorf("%s(%s): %v, want ErrSymlink", name, p, err)
				}
			}
		}
		d, err := OpenDir(filepath.Join(root, "real", "sub"))
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		var got []string
		if err := d.List(func(name string, typ fs.FileMode) { got = append(got, name) }); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, []string{"f.txt"}) {
			t.Errorf("list %q", got)
		}
		if _, err := OpenDir(filepath.Join(root, "real", "g.txt")); err == nil || IsSymlink(err) {
			t.Errorf("a file opened as a directory: %v", err)
		}
		if _, err := OpenDir(filepath.Join(root, "nope")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("missing: %v", err)
		}
		if _, err := OpenDir("relative/path"); err == nil {
			t.Error("a relative path was opened")
		}
	})
}

func TestListTypesAndRelist(t *testing.T) {
	root := tree(t)
	d, err := OpenDir(filepath.Join(root, "real"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for range 2 { // the second listing starts over
		got := map[string]fs.FileMode{}
		if err := d.List(func(name string, typ fs.FileMode) { got[name] = typ }); err != nil {
			t.Fatal(err)
		}
		want := map[string]fs.FileMode{"sub": fs.ModeDir, "g.txt": 0, "sublink": fs.ModeSymlink, "flink": fs.ModeSymlink}
		if len(got) != len(want) {
			t.Fatalf("list %v, want %v", got, want)
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: type %v, want %v", k, got[k], v)
			}
		}
	}
	l, err := LookupDir(filepath.Join(root, "real"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if runtimeHasLookupOnly && l.List(func(string, fs.FileMode) {}) == nil {
		t.Error("a lookup-only directory listed")
	}
}

func TestRelativeOpens(t *testing.T) {
	bothWays(t, func(t *testing.T) {
		root := tree(t)
		d, err := LookupDir(root)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		f, err := d.OpenFile("real/sub/f.txt")
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(f)
		f.Close()
		if err != nil || string(b) != "deep" {
			t.Fatalf("read %q %v", b, err)
		}
		for _, rel := range []string{"link/g.txt", "real/sublink/f.txt", "real/flink", "link"} {
			if f, err := d.OpenFile(rel); !IsSymlink(err) {
				if f != nil {
					f.Close()
				}
				t.Errorf("OpenFile(%s): %v, want ErrSymlink", rel, err)
			}
		}
		for _, rel := range []string{"link", "real/sublink", "link/sub"} {
			if sd, err := d.OpenDir(rel); !IsSymlink(err) {
				if sd != nil {
					sd.Close()
				}
				t.Errorf("OpenDir(%s): %v, want ErrSymlink", rel, err)
			}
		}
		for _, rel := range []string{"", "/etc/passwd", "../x", "real/../real/g.txt", "./real", "real//g.txt"} {
			if f, err := d.OpenFile(rel); err == nil {
				f.Close()
				t.Errorf("OpenFile(%q) accepted", rel)
			}
		}
		sub, err := d.OpenDir("real/sub")
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Close()
		if sub.Path() != filepath.Join(root, "real", "sub") {
			t.Errorf("path %s", sub.Path())
		}
		want, _ := pathid.FileID(filepath.Join(root, "real", "sub"))
		if id, err := sub.ID(); err != nil || id != want || id.IsZero() {
			t.Errorf("id %v %v, want %v", id, err, want)
		}
	})
}

func TestLstatReadlink(t *testing.T) {
	root := tree(t)
	d, err := OpenDir(filepath.Join(root, "real"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if fi, err := d.Lstat("sublink"); err != nil || !fi.IsSymlink() {
		t.Errorf("lstat sublink: %+v %v", fi, err)
	}
	if fi, err := d.Lstat("g.txt"); err != nil || !fi.IsRegular() || fi.Size != 3 {
		t.Errorf("lstat g.txt: %+v %v", fi, err)
	}
	if s, err := d.Readlink("sublink"); err != nil || s != "sub" {
		t.Errorf("readlink %q %v", s, err)
	}
	if _, err := d.Lstat("sub/f.txt"); err == nil {
		t.Error("Lstat took a path of two names")
	}
}

func TestLookupChain(t *testing.T) {
	bothWays(t, func(t *testing.T) {
		root := tree(t)
		p := filepath.Join(root, "real", "sub")
		d, ids, err := LookupChain(p, root)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		var want []pathid.ID
		for _, a := range []string{filepath.Join(root, "real"), root} {
			id, err := pathid.FileID(a)
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, id)
		}
		if !slices.Equal(ids, want) {
			t.Errorf("ancestors %v, want %v", ids, want)
		}
		self, _ := pathid.FileID(p)
		if id, err := d.ID(); err != nil || id != self {
			t.Errorf("self %v %v, want %v", id, err, self)
		}
		// The top itself: no ancestors.
		if d2, ids, err := LookupChain(root, root); err != nil || len(ids) != 0 {
			t.Errorf("top: %v %v", ids, err)
		} else {
			d2.Close()
		}
		// Up to the file-system root: one id per component.
		if d3, ids, err := LookupChain(p, ""); err != nil {
			t.Error(err)
		} else {
			d3.Close()
			if _, _, parts, _ := splitAbs(p); len(ids) != len(parts) || ids[0] != want[0] {
				t.Errorf("to /: %d ids for %d components", len(ids), len(parts))
			}
		}
		if _, _, err := LookupChain(filepath.Join(root, "link", "sub"), root); !IsSymlink(err) {
			t.Errorf("through a symlink: %v", err)
		}
		if _, _, err := LookupChain(filepath.Join(root, "real"), filepath.Join(root, "re")); err == nil {
			t.Error("a top that is no ancestor by whole segments was accepted")
		}
	})
}
