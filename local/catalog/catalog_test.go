package catalog

import (
	"context"
	"os"
	"testing"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/ids"
	"github.com/cgcat/cgcat/local/store"
)

// A data dir deleted (or replaced) under a running reader: the reader
// notices the other store and reloads from scratch — it never lists a
// project twice (old id and new id) or keeps ids nobody else knows.
func TestDataDirReplacedReloads(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	old := &local.Project{ID: ids.NewProjectID(), Root: "/code/a", Meta: local.Metadata{Name: "alpha"}, RecordRevision: 1}
	if err := st.Update(ctx, func(tx *store.Tx) error { return tx.PutProject(old) }); err != nil {
		t.Fatal(err)
	}
	cat, err := Load(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if cat.Get(old.ID) == nil {
		t.Fatal("record not loaded")
	}
	oldStore := cat.StoreID()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	st2, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	again := &local.Project{ID: ids.NewProjectID(), Root: "/code/a", Meta: local.Metadata{Name: "alpha"}, RecordRevision: 1}
	if err := st2.Update(ctx, func(tx *store.Tx) error { return tx.PutProject(again) }); err != nil {
		t.Fatal(err)
	}
	if err := cat.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if cat.StoreID() == oldStore {
		t.Fatal("the reader did not notice the new store")
	}
	if cat.Get(old.ID) != nil || cat.Get(again.ID) == nil || cat.Len() != 1 {
		t.Fatalf("want only the new store's record: old=%v new=%v len=%d", cat.Get(old.ID) != nil, cat.Get(again.ID) != nil, cat.Len())
	}
	pol := Policy{Discovery: []string{"/code"}, Share: []string{"/code"}}
	if hits := cat.Search("alpha", pol); len(hits) != 1 {
		t.Fatalf("search lists %d alphas, want 1", len(hits))
	}
}

// A forgotten record leaves every reader's view and search.
func TestForgottenRecordLeavesTheView(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, _ := store.Open(ctx, dir)
	p := &local.Project{ID: ids.NewProjectID(), Root: "/code/gone", Meta: local.Metadata{Name: "zircon"}, RecordRevision: 1}
	st.Update(ctx, func(tx *store.Tx) error { return tx.PutProject(p) })
	cat, _ := Load(ctx, st)
	if err := st.Update(ctx, func(tx *store.Tx) error { return tx.DeleteProject(p.ID) }); err != nil {
		t.Fatal(err)
	}
	cat.Sync(ctx)
	pol := Policy{Discovery: []string{"/code"}, Share: []string{"/code"}}
	if cat.Get(p.ID) != nil || len(cat.Search("zircon", pol)) != 0 || len(cat.List(pol)) != 0 {
		t.Fatal("a forgotten record is still visible")
	}
}
