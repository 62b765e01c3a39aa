//go:build unix

package scan

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/fixture"
)

// TestUnreadableDirectoryIsAGap: a directory we may not read is a coverage
// gap, never "all gone": a project seen before inside it stays, marked
// inaccessible only by a direct re-check.
func TestUnreadableDirectoryIsAGap(t *testing.T) {
	if fixture.RunUnprivileged(t) {
		return
	}
	if os.Geteuid() == 0 {
		t.Skip("cannot drop privileges here")
	}
	root := canon(t, t.TempDir())
	mkProject(t, filepath.Join(root, "open", "p"))
	mkProject(t, filepath.Join(root, "locked", "q"))
	st := newStore(t)
	first := scanAll(t, st, testOptions(root))
	if len(presentRoots(first)) != 2 {
		t.Fatalf("want 2 projects first, got %v", presentRoots(first))
	}
	locked := filepath.Join(root, "locked")
	if err := os.Chmod(locked, 0); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(locked, 0o755)
	after := scanAll(t, st, testOptions(root))
	q := after[filepath.Join(locked, "q")]
	if q == nil || q.ID != first[filepath.Join(locked, "q")].ID {
		t.Fatalf("record under an unreadable directory must be kept: %+v", q)
	}
	if q.Availability != local.Inaccessible || q.Why == "" {
		t.Fatalf("want inaccessible with a reason, got %s %q", q.Availability, q.Why)
	}
	if p := after[filepath.Join(root, "open", "p")]; p.Availability != local.Present {
		t.Fatalf("readable project changed: %+v", p)
	}
	s := readStateT(t, st)
	if covOf(s).Coverage != CoveragePartial || covOf(s).GapCount != 1 || covOf(s).Gaps[0].Path != locked || covOf(s).Gaps[0].Why != "permission denied" {
		t.Fatalf("want one permission gap recorded, got %+v", s)
	}
	// Readable again: the gap closes and the project is present again, same id.
	if err := os.Chmod(locked, 0o755); err != nil {
		t.Fatal(err)
	}
	again := scanAll(t, st, testOptions(root))
	if q2 := again[filepath.Join(locked, "q")]; q2.Availability != local.Present || q2.ID != q.ID {
		t.Fatalf("after access returns: %+v", q2)
	}
	if s := readStateT(t, st); covOf(s).Coverage != CoverageComplete || covOf(s).GapCount != 0 {
		t.Fatalf("coverage should be complete again: %+v", s)
	}
}

// TestVanishedRootIsAGap: a root that is gone (an unplugged volume) leaves
// the catalog as it was, with the gap recorded.
func TestVanishedRootIsAGap(t *testing.T) {
	base := canon(t, t.TempDir())
	vol := filepath.Join(base, "volume")
	mkProject(t, filepath.Join(vol, "p"))
	st := newStore(t)
	first := scanAll(t, st, testOptions(vol))
	if len(first) != 1 {
		t.Fatal("want 1 project")
	}
	if err := os.Rename(vol, vol+"-unplugged"); err != nil {
		t.Fatal(err)
	}
	after := scanAll(t, st, testOptions(vol))
	p := after[filepath.Join(vol, "p")]
	if p == nil || p.ID != first[filepath.Join(vol, "p")].ID {
		t.Fatalf("record must be kept: %+v", p)
	}
	// The whole root is gone: an offline volume, recorded as inaccessible,
	// not as a deleted project, and never deleted.
	if p.Availability != local.Inaccessible || p.Why == "" {
		t.Fatalf("want inaccessible (offline root) after a direct re-check, got %s %q", p.Availability, p.Why)
	}
	if s := readStateT(t, st); covOf(s).Coverage != CoveragePartial || covOf(s).GapCount == 0 {
		t.Fatalf("an unreachable root must be a coverage gap: %+v", s)
	}
}
