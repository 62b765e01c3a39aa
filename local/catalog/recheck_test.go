package catalog

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/fixture"
)

// A positive re-check is reused only while the root and its database look
// exactly as the full check saw them: every change below is checked in
// full again, and gives the verdict of the disk as it is now.
func TestRecheckReuseEndsWithAnyChange(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, root, other string)
		wantOK bool
	}{
		{"nothing", func(*testing.T, string, string) {}, true},
		{"root swapped for a symlink to another project", func(t *testing.T, root, other string) {
			mustDo(t, os.Rename(root, root+".old"))
			mustDo(t, os.Symlink(other, root))
		}, false},
		{"root replaced by another project directory", func(t *testing.T, root, other string) {
			mustDo(t, os.Rename(root, root+".old"))
			mustDo(t, os.Rename(other, root))
		}, true},
		{"database rewritten in place, same size", func(t *testing.T, root, _ string) {
			f, err := os.OpenFile(filepath.Join(root, ".codegraph", "codegraph.db"), os.O_WRONLY, 0)
			mustDo(t, err)
			_, err = f.WriteAt([]byte("not SQLite at all"), 0)
			mustDo(t, err)
			mustDo(t, f.Close())
		}, false},
		{"database replaced by a symlink", func(t *testing.T, root, other string) {
			db := filepath.Join(root, ".codegraph", "codegraph.db")
			mustDo(t, os.Remove(db))
			mustDo(t, os.Symlink(filepath.Join(other, ".codegraph", "codegraph.db"), db))
		}, false},
		{"root replaced by a new directory holding its .codegraph", func(t *testing.T, root, _ string) {
			fresh := root + ".new"
			mustDo(t, os.Mkdir(fresh, 0o755))
			mustDo(t, os.Rename(filepath.Join(root, ".codegraph"), filepath.Join(fresh, ".codegraph")))
			mustDo(t, os.Rename(root, root+".old"))
			mustDo(t, os.Rename(fresh, root))
		}, true},
		{".codegraph removed", func(t *testing.T, root, _ string) {
			mustDo(t, os.RemoveAll(filepath.Join(root, ".codegraph")))
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			top := fixture.TempDir(t)
			root, other := filepath.Join(top, "g", "app"), filepath.Join(top, "g", "other")
			fixture.Project(t, root)
			fixture.Project(t, other)
			pol := Policy{Discovery: []string{top}, Share: []string{top}}
			p := &local.Project{ID: "cg_a", Root: root}
			if ck := Recheck(p, pol); !ck.OK {
				t.Fatalf("first check: %+v", ck)
			}
			full := fullChecks.Load()
			tc.change(t, root, other)
			ck := Recheck(p, pol)
			again := fullChecks.Load() - full
			if tc.name == "nothing" {
				if again != 0 {
					t.Fatalf("an unchanged root was checked in full again")
				}
			} else if again != 1 {
				t.Fatalf("after the change the remembered verdict was reused")
			}
			if ck.OK != tc.wantOK {
				t.Fatalf("verdict after the change: %+v, want OK=%v", ck, tc.wantOK)
			}
		})
	}
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// A project under a discovery root that is absent (a volume unplugged) or
// an empty mount point is inaccessible, never missing; one whose own folder
// went while its root stands full is missing.
func TestRecheckTellsAnOfflineVolumeFromADeletion(t *testing.T) {
	base := fixture.TempDir(t)
	for _, tc := range []struct {
		name   string
		change func(top, root string)
		want   local.Availability
	}{
		{"root unplugged", func(top, _ string) { mustDo(t, os.Rename(top, top+".away")) }, local.Inaccessible},
		{"empty mount point", func(top, _ string) {
			mustDo(t, os.Rename(top, top+".away"))
			mustDo(t, os.Mkdir(top, 0o755))
		}, local.Inaccessible},
		{"project deleted", func(_, root string) { mustDo(t, os.RemoveAll(root)) }, local.Missing},
	} {
		t.Run(tc.name, func(t *testing.T) {
			top := filepath.Join(base, tc.name)
			root := filepath.Join(top, "g", "app")
			fixture.Project(t, root)
			fixture.Project(t, filepath.Join(top, "g", "other"))
			pol := Policy{Discovery: []string{top}, Share: []string{top}, ExposePaths: true}
			p := &local.Project{ID: "cg_a", Root: root}
			tc.change(top, root)
			if ck := Recheck(p, pol); ck.OK || ck.Availability != tc.want || ck.Why == "" {
				t.Fatalf("%+v, want %s", ck, tc.want)
			}
		})
	}
}
