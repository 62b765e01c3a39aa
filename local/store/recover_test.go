package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/ids"
)

// fill writes n records in batches of 250, enough to spill into tables.
func fill(t *testing.T, dir string, n int) map[string]string {
	t.Helper()
	s, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	idList := map[string]string{} // id → root
	for i := 0; i < n; i += 250 {
		err := s.Update(context.Background(), func(tx *Tx) error {
			for j := i; j < min(i+250, n); j++ {
				p := &local.Project{ID: ids.NewProjectID(), Root: fmt.Sprintf("/code/p%05d", j), RecordRevision: 1,
					Meta: local.Metadata{Name: fmt.Sprintf("p%05d", j), Description: strings.Repeat("a description that takes room ", 12)}}
				if err := tx.PutProject(p); err != nil {
					return err
				}
				idList[p.ID] = p.Root
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return idList
}

func largestTable(t *testing.T, dir string) string {
	t.Helper()
	var best string
	var size int64
	ents, _ := os.ReadDir(DBDir(dir))
	for _, e := range ents {
		if fi, _ := e.Info(); filepath.Ext(e.Name()) == ".ldb" && fi.Size() > size {
			best, size = filepath.Join(DBDir(dir), e.Name()), fi.Size()
		}
	}
	if best == "" {
		t.Fatal("no table file: the fixture did not spill")
	}
	return best
}

// readAll opens the store as every command does and reads each record and
// its binding; it must never panic.
func readAll(t *testing.T, dir string) map[string]string {
	t.Helper()
	s, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatalf("open after recover: %v", err)
	}
	got := map[string]string{}
	err = s.View(context.Background(), func(r *Reader) error {
		return r.Projects(func(p *local.Project) error {
			b, err := r.ProjectByRoot(p.Root)
			if err != nil || b == nil || b.ID != p.ID {
				return fmt.Errorf("record %s: binding of %s → %v (%v)", p.ID, p.Root, b, err)
			}
			got[p.ID] = p.Root
			return nil
		})
	})
	if err != nil {
		t.Fatalf("read after recover: %v", err)
	}
	// Every binding has its record.
	_ = s.View(context.Background(), func(r *Reader) error {
		return r.scan(prefixRoot, func(k string, v []byte) bool {
			if _, ok := got[string(v)]; !ok {
				t.Errorf("binding %s → %s has no record", k, v)
			}
			return true
		})
	})
	return got
}

// Damage of every kind, then recover: no panic anywhere after, no binding
// without its record, and every record keeps its id — the published views
// hold every record, so even a lost table costs none.
func TestRecoverKeepsEveryRecord(t *testing.T) {
	if raceEnabled {
		t.Skip("recover of 5,000 records is single-threaded volume work; the run without -race covers it")
	}
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, table string)
	}{
		{"garbled", func(t *testing.T, table string) {
			b, _ := os.ReadFile(table)
			for _, off := range []int{len(b) / 5, len(b) / 2, len(b) * 4 / 5} {
				for i := off; i < min(off+4096, len(b)); i++ {
					b[i] ^= 0x5a
				}
			}
			os.WriteFile(table, b, 0o644)
		}},
		{"truncated", func(t *testing.T, table string) {
			fi, _ := os.Stat(table)
			os.Truncate(table, fi.Size()/3)
		}},
		{"deleted", func(t *testing.T, table string) { os.Remove(table) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			want := fill(t, dir, 5000)
			tc.damage(t, largestTable(t, dir))
			rep, err := Recover(context.Background(), dir)
			if err != nil {
				t.Fatalf("recover: %v", err)
			}
			got := readAll(t, dir)
			kept := 0
			for id, root := range want {
				if got[id] == root {
					kept++
				}
			}
			t.Logf("%s: %d of %d records kept with their ids (%+v)", tc.name, kept, len(want), rep)
			if kept != len(want) {
				t.Fatalf("%s: kept %d of %d records", tc.name, kept, len(want))
			}
			// A second recover of a healthy store changes nothing.
			if _, err := Recover(context.Background(), dir); err != nil {
				t.Fatalf("second recover: %v", err)
			}
			if again := readAll(t, dir); len(again) != len(got) {
				t.Fatalf("second recover: %d records, want %d", len(again), len(got))
			}
		})
	}
}

// Without the views (a data dir of an older release), recover keeps every
// record it can read and still leaves no binding without its record.
func TestRecoverFromTablesAlone(t *testing.T) {
	if raceEnabled {
		t.Skip("recover of 5,000 records is single-threaded volume work; the run without -race covers it")
	}
	dir := t.TempDir()
	want := fill(t, dir, 5000)
	os.RemoveAll(filepath.Join(dir, "views"))
	os.Remove(filepath.Join(dir, "revision"))
	b, _ := os.ReadFile(largestTable(t, dir))
	for i := len(b) / 2; i < len(b)/2+4096; i++ {
		b[i] ^= 0x5a
	}
	os.WriteFile(largestTable(t, dir), b, 0o644)
	if _, err := Recover(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	got := readAll(t, dir)
	t.Logf("tables alone: %d of %d records kept", len(got), len(want))
	if len(got) < len(want)/2 {
		t.Fatalf("only %d of %d records salvaged from tables", len(got), len(want))
	}
	for id, root := range got {
		if want[id] != root {
			t.Fatalf("record %s came back with root %s, want %s", id, root, want[id])
		}
	}
}

// Reading a damaged table that makes goleveldb panic is reported as damage
// naming recover, never a crash.
func TestDamageNeverPanics(t *testing.T) {
	dir := t.TempDir()
	fill(t, dir, 3000)
	table := largestTable(t, dir)
	b, _ := os.ReadFile(table)
	for _, off := range []int{len(b) / 7, len(b) / 3, len(b) / 2, 2 * len(b) / 3} {
		for i := off; i < min(off+4096, len(b)); i++ {
			b[i] = byte(i)
		}
	}
	os.WriteFile(table, b, 0o644)
	s, err := Open(context.Background(), dir)
	if err == nil {
		err = s.View(context.Background(), func(r *Reader) error {
			return r.Projects(func(*local.Project) error { return nil })
		})
	}
	var ce *CorruptError
	if err != nil && !errors.As(err, &ce) {
		t.Fatalf("damage must be a CorruptError (which people are told to recover): %v", err)
	}
}

// A forgotten id stays forgotten through a recover: neither the published
// views nor a card can give it to a record again.
func TestRecoverKeepsForgottenIDs(t *testing.T) {
	dir := t.TempDir()
	idList := fill(t, dir, 3)
	var victim string
	for id := range idList {
		victim = id
		break
	}
	s, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Update(context.Background(), func(tx *Tx) error { return tx.DeleteProject(victim) }); err != nil {
		t.Fatal(err)
	}
	if _, err := Recover(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	got := readAll(t, dir)
	if _, ok := got[victim]; ok || len(got) != 2 {
		t.Fatalf("after recover: %v (forgotten %s)", got, victim)
	}
	s, err = Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.View(context.Background(), func(r *Reader) error {
		if gone, err := r.Forgotten(victim); err != nil || !gone {
			t.Errorf("Forgotten(%s) after recover = %v, %v; want true", victim, gone, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
