package store

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/ids"
	"github.com/cgcat/cgcat/local/view"
	"github.com/syndtr/goleveldb/leveldb"
	"github.com/zeebo/xxh3"
)

func newestDelta(t *testing.T, dataDir string) string {
	t.Helper()
	ents, _ := os.ReadDir(view.Dir(dataDir))
	var names []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "delta-") {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		t.Fatal("fixture: no delta published")
	}
	sort.Strings(names)
	return filepath.Join(view.Dir(dataDir), names[len(names)-1])
}

func putOne(t *testing.T, s *Store, root string) {
	t.Helper()
	if err := s.Update(context.Background(), func(tx *Tx) error {
		return tx.PutProject(&local.Project{ID: ids.NewProjectID(), Root: root, RecordRevision: 1})
	}); err != nil {
		t.Fatal(err)
	}
}

// A delta emptied after it was published: the next writer does not
// continue that chain but publishes a whole base, even a commit that
// changes nothing readers see; so does Open (every process start).
func TestWriterRepublishesADamagedChain(t *testing.T) {
	for _, via := range []string{"a commit", "a commit that changes nothing", "open"} {
		t.Run(via, func(t *testing.T) {
			dir := t.TempDir()
			s, err := Open(context.Background(), dir)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 3 {
				putOne(t, s, fmt.Sprintf("/code/p%d", i))
			}
			if err := os.Truncate(newestDelta(t, dir), 0); err != nil {
				t.Fatal(err)
			}
			if r := view.Verify(dir); len(r.Problems) == 0 {
				t.Fatal("verify does not see the emptied delta")
			}
			switch via {
			case "a commit":
				putOne(t, s, "/code/p9")
			case "a commit that changes nothing":
				if err := s.Update(context.Background(), func(tx *Tx) error { return nil }); err != nil {
					t.Fatal(err)
				}
			case "open":
				if _, err := Open(context.Background(), dir); err != nil {
					t.Fatal(err)
				}
			}
			r := view.Verify(dir)
			want := 3
			if via == "a commit" {
				want = 4
			}
			if len(r.Problems) > 0 || r.Records != want || r.Deltas != 0 {
				t.Fatalf("after %s: %+v", via, r)
			}
		})
	}
}

// A reader's fallback reads the whole catalog from the database, also
// while another process holds it (no wait for the lock: R39).
func TestReadCatalogWithoutTheLock(t *testing.T) {
	s := open(t)
	for i := range 300 {
		putOne(t, s, fmt.Sprintf("/code/p%03d", i))
	}
	free, err := s.ReadCatalog(context.Background())
	if err != nil || len(free.Records) != 300 || free.StoreID == "" {
		t.Fatalf("with the lock free: %v", err)
	}
	db, err := leveldb.OpenFile(DBDir(s.DataDir()), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	held, err := s.ReadCatalog(context.Background())
	if err != nil {
		t.Fatalf("while another opener holds the store: %v", err)
	}
	if len(held.Records) != 300 || held.StoreID != free.StoreID || held.Seq != free.Seq || held.Revision != free.Revision {
		t.Fatalf("read through a copy: %d records, %s %d %d; want %s %d %d", len(held.Records), held.StoreID, held.Seq, held.Revision, free.StoreID, free.Seq, free.Revision)
	}
	if left, _ := filepath.Glob(filepath.Join(s.DataDir(), ".catalog.db.read-*")); len(left) > 0 {
		t.Fatalf("copies left behind: %v", left)
	}
}

// A commit whose publication fails (here the views directory cannot be
// made) was still committed, and says so — not "cannot write the catalog
// store" — while the cause and what to do stay in the message.
func TestPublishFailureSaysTheChangeWasSaved(t *testing.T) {
	s := open(t)
	os.RemoveAll(view.Dir(s.DataDir()))
	os.Remove(view.PointerFile(s.DataDir()))
	if err := os.WriteFile(view.Dir(s.DataDir()), nil, 0o644); err != nil { // a file where the directory goes
		t.Fatal(err)
	}
	err := s.Update(context.Background(), func(tx *Tx) error {
		return tx.PutProject(&local.Project{ID: ids.NewProjectID(), Root: "/code/a", RecordRevision: 1})
	})
	var pe *PublishError
	if !errors.As(err, &pe) || !pe.Committed {
		t.Fatalf("want a PublishError of a committed change, got %T %v", err, err)
	}
	msg := err.Error()
	if strings.Contains(msg, "cannot write the catalog store") || !strings.Contains(msg, "was saved in the catalog store") {
		t.Fatalf("message: %s", msg)
	}
	n := 0
	_ = s.View(context.Background(), func(r *Reader) error {
		return r.Projects(func(*local.Project) error { n++; return nil })
	})
	if n != 1 {
		t.Fatalf("the change was not committed: %d records", n)
	}
	// On a full disk the publish failure names the cause, not the failed
	// write around it (what to do is cmd/cgcat's: TestStoreErrorsForPeople).
	full := &PublishError{Dir: "/d", Committed: true, Err: &WriteError{Dir: "/d", Err: syscall.ENOSPC}}
	if m := full.Error(); !strings.Contains(m, syscall.ENOSPC.Error()) || strings.Contains(m, "cannot write the catalog store") {
		t.Fatalf("on a full disk: %s", m)
	}
	// A store whose views cannot be published still opens (readers read
	// the store itself).
	if _, err := Open(context.Background(), s.DataDir()); err != nil {
		t.Fatalf("open: %v", err)
	}
}

// `cgcat store recover` on a healthy store: nothing rebuilt, nothing moved
// aside, every record kept; twice the same.
func TestRecoverOfAHealthyStore(t *testing.T) {
	dir := t.TempDir()
	want := fill(t, dir, 600)
	for range 2 {
		rep, err := Recover(context.Background(), dir)
		if err != nil || !rep.Healthy || rep.Aside != "" || rep.Records != len(want) || rep.Republished != "" {
			t.Fatalf("recover of a healthy store: %+v %v", rep, err)
		}
	}
	if aside, _ := filepath.Glob(filepath.Join(dir, "catalog.db.*")); len(aside) > 0 {
		t.Fatalf("left behind: %v", aside)
	}
	// Healthy database, damaged views: the views are published again.
	if err := os.Truncate(newestDelta(t, dir), 3); err != nil {
		t.Fatal(err)
	}
	rep, err := Recover(context.Background(), dir)
	if err != nil || !rep.Healthy || rep.Republished == "" {
		t.Fatalf("recover with damaged views: %+v %v", rep, err)
	}
	if r := view.Verify(dir); len(r.Problems) > 0 || r.Records != len(want) {
		t.Fatalf("views after recover: %+v", r)
	}
}

// A crafted delta (a null record, checksum valid) made `store recover`
// panic like every other command. It is refused as damaged: recover keeps
// what the database and the rest of the views hold.
func TestRecoverWithACraftedDelta(t *testing.T) {
	dir := t.TempDir()
	want := fill(t, dir, 300)
	ptr, ok := view.ReadPointer(dir)
	if !ok {
		t.Fatal("no pointer")
	}
	// A delta file as view writes one: magic, JSON, xxh3 (big-endian).
	crafted := append([]byte("CGVIEW\x00\x01"), `{"storeId":"`+ptr.StoreID+`","seq":`+fmt.Sprint(ptr.Head+1)+`,"records":[null]}`...)
	crafted = binary.BigEndian.AppendUint64(crafted, xxh3.Hash(crafted))
	if err := os.WriteFile(filepath.Join(view.Dir(dir), fmt.Sprintf("delta-%016x.v%d", ptr.Head+1, view.Format)), crafted, 0o644); err != nil {
		t.Fatal(err)
	}
	next := ptr
	next.Head++
	if err := os.WriteFile(view.PointerFile(dir), []byte(next.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	tables, _ := filepath.Glob(filepath.Join(DBDir(dir), "*.ldb"))
	for _, tb := range tables {
		os.Truncate(tb, 100) // damaged: recover must salvage, reading the views
	}
	if _, err := Recover(context.Background(), dir); err != nil {
		t.Fatalf("recover: %v", err)
	}
	got := readAll(t, dir)
	if len(got) != len(want) {
		t.Fatalf("kept %d of %d", len(got), len(want))
	}
}
