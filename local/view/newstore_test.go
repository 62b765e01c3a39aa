package view

import (
	"fmt"
	"testing"

	"github.com/cgcat/cgcat/local"
)

// A new store in the data dir (deleted and made again) whose chain spans
// the sequence the follower is at: its deltas after that sequence belong
// to another history, so the follower must start from the new store's
// base, not apply them on top of the old store's records.
func TestNewStoreSpanningOurHeadMeansReload(t *testing.T) {
	dir := t.TempDir()
	publish := func(store string, base uint64, head uint64) {
		t.Helper()
		ptr, err := PublishBase(dir, &Snapshot{StoreID: store, Seq: base, Records: []*local.Project{rec(store+"-base", "/c/"+store)}})
		if err != nil {
			t.Fatal(err)
		}
		for seq := base + 1; seq <= head; seq++ {
			d := &Delta{StoreID: store, Seq: seq, Revision: seq, Records: []*local.Project{rec(fmt.Sprint(store, "-", seq), fmt.Sprint("/c/", store, seq))}}
			if ptr, _, err = PublishDelta(dir, ptr, d); err != nil {
				t.Fatal(err)
			}
		}
	}
	publish("s_old", 0, 3)
	f := NewFollower(dir)
	if u, err := f.Next(); err != nil || u.Snapshot == nil || len(u.Deltas) != 3 {
		t.Fatalf("old store: %+v %v", u, err)
	}
	publish("s_new", 2, 5) // base 2 <= our head 3 <= its head 5
	u, err := f.Next()
	if err != nil {
		t.Fatal(err)
	}
	if u.Snapshot == nil || u.Snapshot.StoreID != "s_new" {
		t.Fatalf("the new store's deltas were applied over the old store's records: %d deltas, snapshot %v", len(u.Deltas), u.Snapshot != nil)
	}
	var seqs []uint64
	for _, d := range u.Deltas {
		seqs = append(seqs, d.Seq)
	}
	if fmt.Sprint(seqs) != "[3 4 5]" || f.At().StoreID != "s_new" || f.At().Head != 5 {
		t.Fatalf("after the new base: deltas %v, at %+v", seqs, f.At())
	}
}
