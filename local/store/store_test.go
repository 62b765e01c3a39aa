package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/ids"
	"github.com/cgcat/cgcat/local/view"
	"github.com/syndtr/goleveldb/leveldb"
)

func open(t *testing.T) *Store {
	t.Helper()
	s, err := Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestMachineIDStableAcrossOpens(t *testing.T) {
	dir := t.TempDir()
	a, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if a.MachineID() == "" || a.MachineID() != b.MachineID() {
		t.Fatalf("machine id changed: %q vs %q", a.MachineID(), b.MachineID())
	}
}

func TestRevisionAndChangeLog(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	p := &local.Project{ID: ids.NewProjectID(), Root: "/code/a", RecordRevision: 1}
	q := &local.Project{ID: ids.NewProjectID(), Root: "/code/b", RecordRevision: 1}
	if err := s.Update(ctx, func(tx *Tx) error { return tx.PutProject(p) }); err != nil {
		t.Fatal(err)
	}
	if err := s.Update(ctx, func(tx *Tx) error { tx.put("scan/x", []byte("y")); return nil }); err != nil {
		t.Fatal(err)
	}
	if err := s.Update(ctx, func(tx *Tx) error { return tx.PutProject(q) }); err != nil {
		t.Fatal(err)
	}
	if ptr, ok := view.ReadPointer(s.DataDir()); !ok || ptr.Revision != 2 {
		t.Fatalf("published pointer says %+v, want revision 2 (raw writes do not bump the catalog revision)", ptr)
	}
	err := s.View(ctx, func(r *Reader) error {
		if r.Revision() != 2 {
			t.Fatalf("revision %d, want 2", r.Revision())
		}
		got, err := r.ProjectByRoot("/code/b/")
		if err != nil || got == nil || got.ID != q.ID || got.Changed != 2 {
			t.Fatalf("ProjectByRoot = %+v %v", got, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestRootBindingIsForever(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	p := &local.Project{ID: ids.NewProjectID(), Root: "/code/a"}
	if err := s.Update(ctx, func(tx *Tx) error { return tx.PutProject(p) }); err != nil {
		t.Fatal(err)
	}
	other := &local.Project{ID: ids.NewProjectID(), Root: "/code/a"}
	err := s.Update(ctx, func(tx *Tx) error { return tx.PutProject(other) })
	if err == nil || !strings.Contains(err.Error(), "already bound") {
		t.Fatalf("binding a bound root to a second id must fail, got %v", err)
	}
}

func TestFailedUpdateWritesNothing(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	boom := errors.New("boom")
	err := s.Update(ctx, func(tx *Tx) error {
		if err := tx.PutProject(&local.Project{ID: ids.NewProjectID(), Root: "/x"}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("got %v", err)
	}
	_ = s.View(ctx, func(r *Reader) error {
		n := 0
		_ = r.Projects(func(*local.Project) error { n++; return nil })
		if n != 0 || r.Revision() != 0 {
			t.Fatalf("a failed update left %d records, revision %d", n, r.Revision())
		}
		return nil
	})
}

func TestFencing(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	var old, cur uint64
	_ = s.Update(ctx, func(tx *Tx) error { old = tx.BumpFence("scan"); return nil })
	_ = s.Update(ctx, func(tx *Tx) error { cur = tx.BumpFence("scan"); return nil })
	err := s.Update(ctx, func(tx *Tx) error {
		if err := tx.CheckFence("scan", old); err != nil {
			return err
		}
		tx.put("scan/x", []byte("stale"))
		return nil
	})
	if !errors.Is(err, ErrFenced) {
		t.Fatalf("stale epoch %d (current %d) must be fenced, got %v", old, cur, err)
	}
	if err := s.Update(ctx, func(tx *Tx) error { return tx.CheckFence("scan", cur) }); err != nil {
		t.Fatalf("current epoch refused: %v", err)
	}
}

func TestWaitsWhileAnotherOpenerHoldsIt(t *testing.T) {
	s := open(t)
	db, err := leveldb.OpenFile(filepath.Join(s.DataDir(), "catalog.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	// The update can open the database only after the other opener let
	// go, which it marks first.
	var released atomic.Bool
	go func() {
		time.Sleep(150 * time.Millisecond) // let the update meet the lock
		released.Store(true)
		db.Close()
	}()
	if err := s.Update(context.Background(), func(tx *Tx) error { tx.put("k", []byte("v")); return nil }); err != nil {
		t.Fatalf("update while locked should wait and succeed: %v", err)
	}
	if !released.Load() {
		t.Fatal("update did not wait for the other opener")
	}

	db, err = leveldb.OpenFile(filepath.Join(s.DataDir(), "catalog.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s.Wait = 100 * time.Millisecond
	err = s.Update(context.Background(), func(tx *Tx) error { return nil })
	// What to do (`cgcat doctor`) is cmd/cgcat's to say: TestStoreErrorsForPeople.
	var be *BusyError
	if !errors.Is(err, ErrBusy) || !errors.As(err, &be) || !strings.Contains(err.Error(), filepath.Join(s.DataDir(), "catalog.db")) {
		t.Fatalf("want a clear busy error naming the store, got %v", err)
	}
}

func TestNewerFormatRefused(t *testing.T) {
	s := open(t)
	_ = s.Update(context.Background(), func(tx *Tx) error { tx.put(keyFormat, []byte("99")); return nil })
	_, err := Open(context.Background(), s.DataDir())
	if !errors.Is(err, ErrNewerFormat) || !strings.Contains(err.Error(), "format 99") {
		t.Fatalf("want newer-format refusal, got %v", err)
	}
}

func TestCorruptStoreNamesRecovery(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	for i := range 50 {
		_ = s.Update(ctx, func(tx *Tx) error {
			return tx.PutProject(&local.Project{ID: ids.NewProjectID(), Root: filepath.Join("/code", string(rune('a'+i%26)), "p", time.Now().String())})
		})
	}
	dbDir := filepath.Join(s.DataDir(), "catalog.db")
	m, _ := filepath.Glob(filepath.Join(dbDir, "MANIFEST-*"))
	if len(m) == 0 {
		t.Fatal("no manifest")
	}
	if err := os.WriteFile(m[0], []byte("garbage that is not a manifest"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Readers keep answering from the published catalog; the damage is
	// reported, and a writer is refused with the recovery command.
	damaged, err := Open(ctx, s.DataDir())
	if err != nil {
		t.Fatalf("a damaged store with a published catalog must still open for readers: %v", err)
	}
	var ce *CorruptError
	if derr := damaged.Damage(); !errors.As(derr, &ce) {
		t.Fatalf("Open must report the damage it found, got %v", derr)
	}
	err = damaged.Update(ctx, func(*Tx) error { return nil })
	// The way out (`cgcat store recover`) is cmd/cgcat's to say, from the
	// type: TestStoreErrorsForPeople.
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), dbDir) {
		t.Fatalf("want a corruption error naming the store, got %v", err)
	}
	if _, err := Recover(context.Background(), s.DataDir()); err != nil {
		t.Fatalf("recover: %v", err)
	}
	s2, err := Open(ctx, s.DataDir())
	if err != nil {
		t.Fatalf("open after recover: %v", err)
	}
	n := 0
	_ = s2.View(ctx, func(r *Reader) error { return r.Projects(func(*local.Project) error { n++; return nil }) })
	if n != 50 {
		t.Fatalf("recovery kept %d of 50 records", n)
	}
}
