package view

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cgcat/cgcat/local"
)

func rec(id, root string) *local.Project {
	return &local.Project{ID: id, Root: root, Meta: local.Metadata{Name: filepath.Base(root)}}
}

// A follower sees a base, then only the deltas after it, in order; a
// follower that starts late reads the newest base and the deltas after it.
func TestFollowBaseThenDeltas(t *testing.T) {
	dir := t.TempDir()
	f := NewFollower(dir)
	if _, err := f.Next(); err != ErrNoView {
		t.Fatalf("nothing published: want ErrNoView, got %v", err)
	}
	ptr, err := PublishBase(dir, &Snapshot{StoreID: "s_a", Seq: 0, Records: []*local.Project{rec("a", "/c/a")}})
	if err != nil {
		t.Fatal(err)
	}
	u, err := f.Next()
	if err != nil || u.Snapshot == nil || len(u.Snapshot.Projects()) != 1 || len(u.Deltas) != 0 {
		t.Fatalf("first read: %+v %v", u, err)
	}
	// Within racyPointer of the write a stat proves nothing (Changed may
	// say yes), but a Next brings nothing new; once the pointer is older,
	// one stat tells.
	if u, err := f.Next(); err != nil || !u.Empty() {
		t.Fatalf("nothing new, yet Next brings %+v %v", u, err)
	}
	old := time.Now().Add(-2 * racyPointer)
	if err := os.Chtimes(PointerFile(dir), old, old); err != nil {
		t.Fatal(err)
	}
	if !f.Changed() {
		t.Fatal("the pointer's times moved, yet not Changed")
	}
	if u, err := f.Next(); err != nil || !u.Empty() {
		t.Fatalf("nothing new, yet Next brings %+v %v", u, err)
	}
	if f.Changed() {
		t.Fatal("nothing new and the pointer is old, yet Changed")
	}
	for seq := uint64(1); seq <= 3; seq++ {
		d := &Delta{StoreID: "s_a", Seq: seq, Revision: seq, Records: []*local.Project{rec(fmt.Sprint("p", seq), fmt.Sprint("/c/p", seq))}}
		if ptr, _, err = PublishDelta(dir, ptr, d); err != nil {
			t.Fatal(err)
		}
	}
	if !f.Changed() {
		t.Fatal("three deltas published, Changed is false")
	}
	u, err = f.Next()
	if err != nil || u.Snapshot != nil || len(u.Deltas) != 3 || u.Deltas[2].Seq != 3 {
		t.Fatalf("deltas: %+v %v", u, err)
	}
	late := NewFollower(dir)
	u, err = late.Next()
	if err != nil || u.Snapshot == nil || len(u.Deltas) != 3 {
		t.Fatalf("a late follower reads the base and every delta: %+v %v", u, err)
	}
}

// Another store in the data dir (deleted and made again, replaced,
// recovered) is a whole new snapshot, never merged with the old one.
func TestNewStoreMeansReload(t *testing.T) {
	dir := t.TempDir()
	if _, err := PublishBase(dir, &Snapshot{StoreID: "s_old", Seq: 5, Records: []*local.Project{rec("old", "/c/x")}}); err != nil {
		t.Fatal(err)
	}
	f := NewFollower(dir)
	if _, err := f.Next(); err != nil {
		t.Fatal(err)
	}
	if _, err := PublishBase(dir, &Snapshot{StoreID: "s_new", Seq: 9, Records: []*local.Project{rec("new", "/c/x")}}); err != nil {
		t.Fatal(err)
	}
	u, err := f.Next()
	if err != nil || u.Snapshot == nil || u.Snapshot.StoreID != "s_new" || len(u.Snapshot.Projects()) != 1 || u.Snapshot.Projects()[0].ID != "new" {
		t.Fatalf("want the new store's snapshot alone: %+v %v", u, err)
	}
	// Even a new store whose sequence is lower.
	if _, err := PublishBase(dir, &Snapshot{StoreID: "s_third", Seq: 0}); err != nil {
		t.Fatal(err)
	}
	if u, err := f.Next(); err != nil || u.Snapshot == nil || u.Snapshot.StoreID != "s_third" {
		t.Fatalf("lower sequence of a new store: %+v %v", u, err)
	}
}

// A damaged file is refused by its checksum, and the follower keeps where
// it was (its caller keeps the last good view).
func TestDamagedFilesAreRefused(t *testing.T) {
	dir := t.TempDir()
	ptr, _ := PublishBase(dir, &Snapshot{StoreID: "s_a", Seq: 0, Records: []*local.Project{rec("a", "/c/a")}})
	f := NewFollower(dir)
	if _, err := f.Next(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := PublishDelta(dir, ptr, &Delta{StoreID: "s_a", Seq: 1, Records: []*local.Project{rec("b", "/c/b")}}); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(Dir(dir), deltaName(1))
	b, _ := os.ReadFile(name)
	b[len(b)/2] ^= 0xff
	os.WriteFile(name, b, 0o644)
	if _, err := f.Next(); err == nil {
		t.Fatal("a garbled delta was accepted")
	}
	if f.At().Head != 0 {
		t.Fatalf("the follower moved past a file it could not read: %+v", f.At())
	}
	os.WriteFile(name, b[:10], 0o644) // truncated
	if _, err := f.Next(); err == nil {
		t.Fatal("a truncated delta was accepted")
	}
}

// Deltas pile up to a new base; files no reader needs any more go, and a
// follower behind the removed ones starts again from the new base.
func TestCompactionAndCleanup(t *testing.T) {
	dir := t.TempDir()
	ptr, _ := PublishBase(dir, &Snapshot{StoreID: "s_a", Seq: 0})
	slow := NewFollower(dir)
	if _, err := slow.Next(); err != nil {
		t.Fatal(err)
	}
	var due bool
	var err error
	seq := uint64(0)
	for !due {
		seq++
		if seq > 10*maxDeltas {
			t.Fatal("no base ever became due")
		}
		ptr, due, err = PublishDelta(dir, ptr, &Delta{StoreID: "s_a", Seq: seq, Records: []*local.Project{rec(fmt.Sprint("p", seq), fmt.Sprint("/c/p", seq))}})
		if err != nil {
			t.Fatal(err)
		}
	}
	var all []*local.Project
	for i := uint64(1); i <= seq; i++ {
		all = append(all, rec(fmt.Sprint("p", i), fmt.Sprint("/c/p", i)))
	}
	if ptr, err = PublishBase(dir, &Snapshot{StoreID: "s_a", Seq: seq, Records: all}); err != nil {
		t.Fatal(err)
	}
	// A second base removes what came before the first one's successor.
	if _, err = PublishBase(dir, &Snapshot{StoreID: "s_a", Seq: seq, Records: all}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(Dir(dir), deltaName(1))); !os.IsNotExist(err) {
		t.Fatalf("old deltas were kept after two bases: %v", err)
	}
	u, err := slow.Next()
	if err != nil || u.Snapshot == nil || len(u.Snapshot.Projects()) != int(seq) {
		t.Fatalf("a follower behind removed deltas must read the new base: %+v %v", u, err)
	}
}

// A pointer rewritten within the same clock tick can look exactly as it
// did to a stat (same size, same time, a freed inode number reused): a
// follower that read it within racyPointer of its write reads it again,
// and so never stays behind. (The lifecycle test under load: a serve kept
// an older catalog after a settle, while a CLI run saw the newer one.)
func TestPointerRewrittenInTheSameTickIsSeen(t *testing.T) {
	dir := t.TempDir()
	ptr, err := PublishBase(dir, &Snapshot{StoreID: "s_a", Seq: 0, Records: []*local.Project{rec("a", "/c/a")}})
	if err != nil {
		t.Fatal(err)
	}
	f := NewFollower(dir)
	if u, err := f.Next(); err != nil || u.Snapshot == nil {
		t.Fatalf("first read: %+v %v", u, err)
	}
	fi, err := os.Stat(PointerFile(dir))
	if err != nil {
		t.Fatal(err)
	}
	// The next delta and a pointer that stats exactly as the old one: same
	// inode (written in place), same size, the old time put back.
	d := &Delta{StoreID: "s_a", Seq: 1, Revision: 1, Records: []*local.Project{rec("b", "/c/b")}}
	if err := writeFile(Dir(dir), deltaName(1), mustEncodeDelta(t, d)); err != nil {
		t.Fatal(err)
	}
	next := ptr
	next.Head, next.Revision = 1, 1
	b := []byte(next.String())
	if len(b) != int(fi.Size()) {
		t.Skipf("fixture: the new pointer is %d bytes, the old %d", len(b), fi.Size())
	}
	if err := os.WriteFile(PointerFile(dir), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(PointerFile(dir), fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if !f.Changed() {
		t.Fatal("a pointer rewritten within the racy window with the same stat: not Changed")
	}
	u, err := f.Next()
	if err != nil || len(u.Deltas) != 1 || u.Deltas[0].Seq != 1 {
		t.Fatalf("the delta behind the rewritten pointer was not read: %+v %v", u, err)
	}
}

func mustEncodeDelta(t *testing.T, d *Delta) []byte {
	t.Helper()
	b, err := encodeDelta(d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
