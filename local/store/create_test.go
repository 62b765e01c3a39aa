package store

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/ids"
	"github.com/cgcat/cgcat/local/view"
)

// A database directory left half-made by a killed first start (LOCK, LOG, an
// empty MANIFEST, no CURRENT) holds nothing: the next start replaces it
// instead of calling the store damaged, and leaves no temporary directory.
func TestHalfMadeStoreIsReplaced(t *testing.T) {
	dir := t.TempDir()
	db := DBDir(dir)
	os.MkdirAll(db, 0o755)
	for _, f := range []string{"LOCK", "LOG", "MANIFEST-000000"} {
		os.WriteFile(filepath.Join(db, f), nil, 0o644)
	}
	s, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatalf("a half-made store must be replaced, not refused: %v", err)
	}
	if err := s.Update(context.Background(), func(tx *Tx) error {
		return tx.PutProject(&local.Project{ID: ids.NewProjectID(), Root: "/c/a", RecordRevision: 1})
	}); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".new-") || strings.Contains(e.Name(), ".empty-") {
			t.Fatalf("left behind: %s", e.Name())
		}
	}
	if _, ok := view.ReadPointer(dir); !ok {
		t.Fatal("nothing published for readers")
	}
}

// A store with data but no CURRENT is damage (never silently emptied).
func TestStoreWithTablesButNoCurrentIsDamage(t *testing.T) {
	dir := t.TempDir()
	s, _ := Open(context.Background(), dir)
	for i := 0; i < 50; i++ {
		s.Update(context.Background(), func(tx *Tx) error {
			return tx.PutProject(&local.Project{ID: ids.NewProjectID(), Root: "/c/" + ids.NewProjectID(), RecordRevision: 1})
		})
	}
	os.Remove(filepath.Join(DBDir(dir), "CURRENT"))
	s2, err := Open(context.Background(), dir)
	if err == nil {
		err = s2.View(context.Background(), func(*Reader) error { return nil })
	}
	var ce *CorruptError
	if !asCorrupt(err, &ce) {
		t.Fatalf("want a CorruptError (which people are told to recover), got %v", err)
	}
}

// The identity outlives the database: a deleted catalog keeps the machine
// id, and a store of an older release gives its own to the new file.
func TestIdentityOutlivesTheDatabase(t *testing.T) {
	dir := t.TempDir()
	a, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(DBDir(dir))
	b, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if a.MachineID() != b.MachineID() || string(a.Identity().Secret) != string(b.Identity().Secret) {
		t.Fatalf("machine changed with the database: %s → %s", a.MachineID(), b.MachineID())
	}
	if a.Identity().RootKey("/c/a") != b.Identity().RootKey("/c/a") || a.Identity().RootKey("/c/a") == a.Identity().RootKey("/c/b") {
		t.Fatal("root keys must be stable per root and differ between roots")
	}

	// An older release: machine id and secret inside the database only.
	old := t.TempDir()
	if err := initDB(DBDir(old)); err != nil {
		t.Fatal(err)
	}
	s := &Store{dataDir: old, dbDir: DBDir(old)}
	if err := s.update(context.Background(), 0, func(tx *Tx) error {
		tx.put(keyLegacyID, []byte("m_abcdefghijklmnop"))
		tx.put(keyLegacyKS, []byte("0123456789abcdef0123456789abcdef"))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	up, err := Open(context.Background(), old)
	if err != nil {
		t.Fatal(err)
	}
	if up.MachineID() != "m_abcdefghijklmnop" {
		t.Fatalf("upgrade must keep the machine id, got %s", up.MachineID())
	}
}

func asCorrupt(err error, ce **CorruptError) bool {
	for e := err; e != nil; {
		if c, ok := e.(*CorruptError); ok {
			*ce = c
			return true
		}
		u, ok := e.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		e = u.Unwrap()
	}
	return false
}
