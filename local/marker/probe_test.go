//go:build unix

package marker

import (
	"github.com/cgcat/cgcat/local/fixture"
	"github.com/cgcat/cgcat/local/nofollow/nofollowtest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/pathid"
)

func fileID(t testing.TB, p string) pathid.ID {
	t.Helper()
	id, err := pathid.FileID(p)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func TestProbeRootIdentities(t *testing.T) {
	base := fixture.Canon(t, t.TempDir())
	code := filepath.Join(base, "code")
	proj := filepath.Join(code, "a", "proj")
	fixture.Project(t, proj)
	c := ProbeRoot(proj, code)
	if !c.Project || c.Availability != local.Present || c.IndexState != local.MarkerPresent {
		t.Fatalf("verdict %+v", c.Verdict)
	}
	if c.ID != fileID(t, proj) {
		t.Errorf("root id %v, want %v", c.ID, fileID(t, proj))
	}
	if want := []pathid.ID{fileID(t, filepath.Join(code, "a")), fileID(t, code)}; !slices.Equal(c.Ancestors, want) {
		t.Errorf("ancestors %v, want %v", c.Ancestors, want)
	}
	if c.DB != fileID(t, filepath.Join(proj, ".codegraph", "codegraph.db")) {
		t.Errorf("db id %v", c.DB)
	}
	// Up to the file-system root: one identity per component.
	if c := ProbeRoot(proj, ""); !c.Project || len(c.Ancestors) != strings.Count(proj, "/") {
		t.Errorf("to /: %+v", c)
	}
	// The top is the root itself: no ancestors.
	if c := ProbeRoot(proj, proj); !c.Project || len(c.Ancestors) != 0 {
		t.Errorf("top = root: %+v", c)
	}
	// A top that is not an ancestor by whole segments.
	if c := ProbeRoot(proj, filepath.Join(code, "a", "pro")); c.Project {
		t.Errorf("a top that is not an ancestor was accepted: %+v", c)
	}
	// Probe agrees with ProbeRoot.
	if v := Probe(proj); v != c.Verdict {
		t.Errorf("Probe %+v, ProbeRoot %+v", v, c.Verdict)
	}
}

// TestProbeRefusesSymlinks: a root or an ancestor swapped for a symlink is
// missing (never followed), and the marker's own parts must not be
// symlinks either.
func TestProbeRefusesSymlinks(t *testing.T) {
	tr := fixture.NewSwapTree(t)
	proj := filepath.Join(tr.Code, "proj")
	w := nofollowtest.Watch(t, tr.Private, filepath.Join(tr.Private, "secretproj", "README.md"))
	// The root itself.
	if err := os.Rename(proj, proj+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(tr.Private, "secretproj"), proj); err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]Verdict{"Probe": Probe(proj), "ProbeRoot": ProbeRoot(proj, tr.Code).Verdict, "ProbeRootAlone": ProbeRootAlone(proj).Verdict} {
		if v.Project || v.Availability != local.Missing || !strings.Contains(v.Why, "symlink") {
			t.Errorf("%s of a root swapped for a symlink: %+v", name, v)
		}
	}
	// An ancestor.
	deep := filepath.Join(tr.Code, "a", "b", "c")
	if err := os.Rename(filepath.Join(tr.Code, "a"), filepath.Join(tr.Code, "a.old")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(tr.Private, "x"), filepath.Join(tr.Code, "a")); err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]Verdict{"Probe": Probe(deep), "ProbeRoot": ProbeRoot(deep, tr.Code).Verdict, "ProbeRootAlone": ProbeRootAlone(deep).Verdict} {
		if v.Project || v.Availability != local.Missing {
			t.Errorf("%s below an ancestor swapped for a symlink: %+v", name, v)
		}
	}
	if w != nil {
		if seen := w.Seen(); len(seen) > 0 {
			t.Errorf("the private tree was read: %q", seen)
		}
	}
	// A file where the root was.
	if err := os.Remove(proj); err != nil {
		t.Fatal(err)
	}
	fixture.Write(t, proj, "a file")
	if v := Probe(proj); v.Project || v.Availability != local.Missing {
		t.Errorf("a file as root: %+v", v)
	}
	if v := ProbeRootAlone(proj).Verdict; v.Project || v.Availability != local.Missing {
		t.Errorf("ProbeRootAlone of a file as root: %+v", v)
	}
}

func TestProbeMarkerRules(t *testing.T) {
	base := fixture.Canon(t, t.TempDir())
	real := filepath.Join(base, "real")
	fixture.Project(t, real)
	mk := func(name string, setup func(dir string)) string {
		dir := filepath.Join(base, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		setup(dir)
		return dir
	}
	symlink := func(target, name string) {
		if err := os.Symlink(target, name); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name  string
		dir   string
		avail local.Availability
		state local.IndexState
		why   string
	}{
		{"no marker", mk("none", func(string) {}), local.Present, local.MarkerMissing, ".codegraph is gone"},
		{"marker is a symlink", mk("cglink", func(d string) { symlink(filepath.Join(real, ".codegraph"), filepath.Join(d, ".codegraph")) }),
			local.Present, local.MarkerMissing, ".codegraph is not a directory"},
		{"database is a symlink", mk("dblink", func(d string) {
			os.Mkdir(filepath.Join(d, ".codegraph"), 0o755)
			symlink(filepath.Join(real, ".codegraph", "codegraph.db"), filepath.Join(d, ".codegraph", "codegraph.db"))
		}), local.Present, local.MarkerMissing, ".codegraph/codegraph.db is not a regular file"},
		{"no database", mk("nodb", func(d string) { fixture.Write(t, filepath.Join(d, ".codegraph", "daemon.pid"), "1") }),
			local.Present, local.MarkerMissing, ".codegraph/codegraph.db is gone"},
		{"database is a directory", mk("dbdir", func(d string) { os.MkdirAll(filepath.Join(d, ".codegraph", "codegraph.db"), 0o755) }),
			local.Present, local.MarkerMissing, ".codegraph/codegraph.db is not a regular file"},
		{"too small", mk("small", func(d string) {
			fixture.Write(t, filepath.Join(d, ".codegraph", "codegraph.db"), "SQLite format 3\x00")
		}),
			local.Present, local.MarkerMissing, ".codegraph/codegraph.db is too small to be an index (16 bytes; an SQLite file has at least 100)"},
		{"not SQLite", mk("notsql", func(d string) {
			fixture.Write(t, filepath.Join(d, ".codegraph", "codegraph.db"), strings.Repeat("x", 200))
		}),
			local.Present, local.MarkerMissing, ".codegraph/codegraph.db is not an SQLite file (its first bytes are not the SQLite header)"},
		{"root gone", filepath.Join(base, "gone"), local.Missing, local.MarkerMissing, "project root is gone"},
	}
	for _, tt := range tests {
		for name, v := range map[string]Verdict{"Probe": Probe(tt.dir), "ProbeRoot": ProbeRoot(tt.dir, base).Verdict} {
			if v.Project || v.Availability != tt.avail || v.IndexState != tt.state || v.Why != tt.why {
				t.Errorf("%s: %s: %+v, want %s %s %q", tt.name, name, v, tt.avail, tt.state, tt.why)
			}
			// A codegraph.db that is there but is no index is named as
			// rejected (scan, doctor and config check say so); a
			// .codegraph without one, or no .codegraph, is not.
			if want := strings.HasPrefix(tt.why, ".codegraph/codegraph.db is not") || strings.HasPrefix(tt.why, ".codegraph/codegraph.db is too small"); v.Rejected != want {
				t.Errorf("%s: %s: rejected %v, want %v", tt.name, name, v.Rejected, want)
			}
		}
	}
}

// TestProbeRootSeesBindMountAlias: a bind mount of a private directory
// inside a discovery root has a path no rule can tell from a real one; the
// ancestors' identities name the private directory. Needs root (mount).
func TestProbeRootSeesBindMountAlias(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("bind mounts need root")
	}
	tr := fixture.NewSwapTree(t)
	mirror := filepath.Join(tr.Code, "mirror")
	if err := os.Mkdir(mirror, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "--bind", tr.Private, mirror).CombinedOutput(); err != nil {
		t.Skipf("mount --bind not allowed here: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", mirror).Run() })
	c := ProbeRoot(filepath.Join(mirror, "secretproj"), tr.Code)
	if !c.Project {
		t.Fatalf("verdict %+v", c.Verdict)
	}
	if private := fileID(t, tr.Private); !slices.Contains(c.Ancestors, private) {
		t.Errorf("ancestors %v lack the private directory's identity %v", c.Ancestors, private)
	}
	if c.ID != fileID(t, filepath.Join(tr.Private, "secretproj")) {
		t.Errorf("root id %v is not the private project's", c.ID)
	}
}

// TestProbeNeedsOnlySearchPermission: like a path lookup, a probe needs to
// search the root, not to list it.
func TestProbeNeedsOnlySearchPermission(t *testing.T) {
	if fixture.RunUnprivileged(t) {
		return
	}
	if os.Geteuid() == 0 {
		t.Skip("cannot drop privileges here")
	}
	base := fixture.Canon(t, t.TempDir())
	proj := filepath.Join(base, "proj")
	fixture.Project(t, proj)
	if err := os.Chmod(proj, 0o311); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(proj, 0o755)
	if v := Probe(proj); !v.Project {
		t.Errorf("search-only root: %+v", v)
	}
	if c := ProbeRoot(proj, base); !c.Project || c.ID.IsZero() {
		t.Errorf("search-only root: %+v", c)
	}
}

// An absent discovery root, or an empty one (a bare mount point), is an
// offline volume; one with anything in it is not.
func TestOfflineRoot(t *testing.T) {
	base := fixture.Canon(t, t.TempDir())
	empty := filepath.Join(base, "mnt")
	full := filepath.Join(base, "code")
	fixture.Project(t, filepath.Join(full, "p"))
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		root string
		want bool
	}{{filepath.Join(base, "unplugged"), true}, {empty, true}, {full, false}, {"", false}} {
		if why, got := Offline(tt.root); got != tt.want || got && why == "" {
			t.Errorf("Offline(%q) = %v %q, want %v", tt.root, got, why, tt.want)
		}
	}
}
