package meta_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cgcat/cgcat/local/meta"
)

// StampNames given a root's source names stamps as Stamp does (the scanner
// stamps from its listing, the end of a pass with Stamp: the two must
// agree, or every project would be read again on every pass), and it moves
// with each kind of change Stamp sees.
func TestStampNamesAgreesWithStamp(t *testing.T) {
	old := meta.RacyStamp
	meta.RacyStamp = 0 // the files were all just made
	t.Cleanup(func() { meta.RacyStamp = old })
	cases := map[string]map[string]string{
		"bare":         {"src/x.go": "package x"},
		"manifests":    {"package.json": `{"name":"a"}`, "README.md": "# a", "go.mod": "module a"},
		"git":          {"package.json": `{"name":"a"}`, ".git/HEAD": "ref: refs/heads/main\n", ".git/config": "[core]\n"},
		"worktree":     {".git": "gitdir: /elsewhere\n", "Cargo.toml": "[package]\nname='a'\n"},
		"hint":         {"codegraph/project.json": `{"aliases":["x"]}`, "pyproject.toml": "[project]\nname='a'\n"},
		"hint as file": {"codegraph": "not a dir", "setup.cfg": "[metadata]\nname=a\n"},
	}
	for name, files := range cases {
		t.Run(name, func(t *testing.T) {
			root := tree(t, "p", files)
			check := func(when string) uint64 {
				t.Helper()
				ents, err := os.ReadDir(root)
				if err != nil {
					t.Fatal(err)
				}
				var names []string
				for i := len(ents) - 1; i >= 0; i-- { // any order
					if meta.IsSource(ents[i].Name()) {
						names = append(names, ents[i].Name())
					}
				}
				a, b := meta.Stamp(root), meta.StampNames(root, names)
				if a == 0 || a != b {
					t.Fatalf("%s: Stamp %x, StampNames %x (names %v)", when, a, b, names)
				}
				return a
			}
			before := check("as made")
			if err := os.WriteFile(filepath.Join(root, "README.md"), []byte("# a longer readme\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if after := check("README written"); after == before {
				t.Fatal("a README written must change the stamp")
			}
			if _, err := os.Stat(filepath.Join(root, ".git", "HEAD")); err == nil {
				before := check("before the branch switch")
				if err := os.WriteFile(filepath.Join(root, ".git", "HEAD"), []byte("ref: refs/heads/other-branch\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				if check("branch switched") == before {
					t.Fatal("a switched branch must change the stamp")
				}
			}
		})
	}
}

// A root with more source names than a stamp covers: Stamp covers the
// first MaxStampNames in listing order, as a scanner's listing keeps them,
// so the two still agree.
func TestStampNamesAgreesWithStampWhenFull(t *testing.T) {
	old := meta.RacyStamp
	meta.RacyStamp = 0 // the files were all just made (else both are 0 and agree for nothing)
	t.Cleanup(func() { meta.RacyStamp = old })
	root := t.TempDir()
	for i := range meta.MaxStampNames + meta.MaxStampNames/5 + 300 {
		name := fmt.Sprintf("p%05d.csproj", i)
		if i%7 == 0 {
			name = fmt.Sprintf("other%05d.txt", i)
		}
		if err := os.WriteFile(filepath.Join(root, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d, err := os.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	all, err := d.Readdirnames(-1) // listing order, as the scanner lists
	d.Close()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range all {
		if meta.IsSource(n) && len(names) < meta.MaxStampNames {
			names = append(names, n)
		}
	}
	if len(names) != meta.MaxStampNames {
		t.Fatalf("fixture: %d source names", len(names))
	}
	if a, b := meta.Stamp(root), meta.StampNames(root, names); a == 0 || a != b {
		t.Fatalf("Stamp %x, StampNames of the first %d source names %x", a, meta.MaxStampNames, b)
	}
}

// A stamp of files changed within the racy margin is 0 (not to be kept);
// the same files stamp once they are older.
func TestStampIsZeroWhileRacy(t *testing.T) {
	old := meta.RacyStamp
	meta.RacyStamp = 200 * time.Millisecond
	t.Cleanup(func() { meta.RacyStamp = old })
	root := tree(t, "p", map[string]string{"package.json": `{"name":"a"}`})
	if s := meta.Stamp(root); s != 0 {
		t.Fatalf("a file written just now stamps %x; want 0", s)
	}
	time.Sleep(meta.RacyStamp + 50*time.Millisecond)
	if s := meta.Stamp(root); s == 0 {
		t.Fatal("files older than the racy margin stamp 0")
	}
}
