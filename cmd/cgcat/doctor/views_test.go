package doctor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/ids"
	"github.com/cgcat/cgcat/local/store"
	"github.com/cgcat/cgcat/local/view"
	"github.com/syndtr/goleveldb/leveldb"
)

func viewsFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	st, err := store.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		if err := st.Update(context.Background(), func(tx *store.Tx) error {
			return tx.PutProject(&local.Project{ID: ids.NewProjectID(), Root: fmt.Sprintf("/code/p%d", i), RecordRevision: 1})
		}); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func one(t *testing.T, cs []Check) Check {
	t.Helper()
	if len(cs) == 0 {
		t.Fatal("no check")
	}
	return cs[0]
}

// The published-catalog check: verified when whole; damage named, and
// healed at once when the store is free (a warning), a problem with the
// fix when another process holds it; nothing published and no store is
// information only.
func TestViewsCheck(t *testing.T) {
	ctx := context.Background()
	dir := viewsFixture(t)
	if c := one(t, Views(ctx, dir)); c.Status != OK || !strings.Contains(c.What, "verified end to end: 4 records") {
		t.Fatalf("whole: %+v", c)
	}
	ptr, _ := view.ReadPointer(dir)
	delta := filepath.Join(view.Dir(dir), fmt.Sprintf("delta-%016x.v%d", ptr.Head, view.Format))
	if err := os.Truncate(delta, 0); err != nil {
		t.Fatal(err)
	}
	db, err := leveldb.OpenFile(store.DBDir(dir), nil)
	if err != nil {
		t.Fatal(err)
	}
	if c := one(t, Views(ctx, dir)); c.Status != Fail || !strings.Contains(c.What, "published catalog is damaged") || !strings.Contains(c.What, "delta-") || c.Fix == "" {
		t.Fatalf("damaged, store held: %+v", c)
	}
	db.Close()
	if c := one(t, Views(ctx, dir)); c.Status != Warn || !strings.Contains(c.What, "published whole again from the store just now (4 records)") {
		t.Fatalf("damaged, store free: %+v", c)
	}
	if c := one(t, Views(ctx, dir)); c.Status != OK {
		t.Fatalf("after the heal: %+v", c)
	}
	// Damage that keeps the size (a byte flipped in place) is seen only
	// by reading: doctor reports it as a reader does, so opening the store
	// publishes again.
	ptr, _ = view.ReadPointer(dir)
	base := filepath.Join(view.Dir(dir), fmt.Sprintf("base-%016x.v%d", ptr.Base, view.Format))
	b, _ := os.ReadFile(base)
	b[len(b)/2] ^= 0x20
	if err := os.WriteFile(base, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if c := one(t, Views(ctx, dir)); c.Status != Warn || !strings.Contains(c.What, "published whole again") {
		t.Fatalf("garbled in place, store free: %+v", c)
	}
	if c := one(t, Views(ctx, t.TempDir())); c.Status != Info {
		t.Fatalf("nothing published, no store: %+v", c)
	}
}
