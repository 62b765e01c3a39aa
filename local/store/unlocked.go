package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cgcat/cgcat/local/view"
	"github.com/syndtr/goleveldb/leveldb"
	"github.com/syndtr/goleveldb/leveldb/opt"
)

// Handle is a store handle on dataDir that opens, makes and publishes
// nothing on its own: for reading a data dir as it is (doctor).
func Handle(dataDir string) *Store {
	return &Store{dataDir: dataDir, dbDir: DBDir(dataDir), Wait: 15 * time.Second}
}

// ReadCatalog reads the whole catalog from the database, as a published
// base would hold it, without waiting for another process: what a reader
// answers from when the published files cannot be used (view.Follower's
// fallback). R39: readers never need the lock. When another process holds
// the database, its files are read through a copy (readCopy).
func (s *Store) ReadCatalog(ctx context.Context) (*view.Snapshot, error) {
	var vs *view.Snapshot
	read := func(r *Reader) error {
		seq, _, err := lookup(r, keyViewSeq)
		if err != nil {
			return err
		}
		vs, err = s.snapshotOf(r, r.StoreID(), ReadU64(seq))
		return err
	}
	err := s.view(ctx, 0, read)
	var be *BusyError
	if errors.As(err, &be) {
		err = s.readCopy(ctx, read)
	}
	if err != nil {
		return nil, err
	}
	if vs.StoreID == "" {
		return nil, view.ErrNoView
	}
	return vs, nil
}

// readCopy runs fn over a copy of the database taken while another process
// holds it: its table files hard-linked (they never change once written),
// its manifest and journal copied, into a directory of its own opened
// read-only. A writer may replace the manifest or remove tables meanwhile
// (a copy that then misses a file does not open): a few tries, each on a
// fresh copy.
func (s *Store) readCopy(ctx context.Context, fn func(r *Reader) error) error {
	var err error
	for try := 0; try < 8; try++ {
		if try > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Duration(try) * 5 * time.Millisecond):
			}
		}
		if err = s.readCopyOnce(fn); err == nil {
			return nil
		}
	}
	return fmt.Errorf("read the catalog store while another process writes it: %w", err)
}

func (s *Store) readCopyOnce(fn func(r *Reader) error) (err error) {
	dir, err := os.MkdirTemp(s.dataDir, ".catalog.db.read-")
	if err != nil {
		if dir, err = os.MkdirTemp("", "cgcat-catalog-read-"); err != nil {
			return err
		}
	}
	defer os.RemoveAll(dir)
	if err := copyDB(s.dbDir, dir); err != nil {
		return err
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("reading a copy failed: %v", r)
		}
	}()
	o := &opt.Options{ReadOnly: true, ErrorIfMissing: true, OpenFilesCacheCapacity: 16}
	db, err := leveldb.OpenFile(dir, o)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		// goleveldb's read-only recovery trips over more than one journal;
		// the copy is ours, so a normal open may repair it.
		o.ReadOnly = false
		db, err = leveldb.OpenFile(dir, o)
	}
	if err != nil {
		return err
	}
	defer db.Close()
	snap, err := db.GetSnapshot()
	if err != nil {
		return err
	}
	defer snap.Release()
	return fn(&Reader{snap: snap, store: s})
}

// copyDB puts the database's files into dir: CURRENT first (it names the
// manifest), then tables linked (or copied), the rest copied.
func copyDB(src, dir string) error {
	cur, err := os.ReadFile(filepath.Join(src, "CURRENT"))
	if err != nil {
		return err
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range ents {
		name := e.Name()
		if name == "LOCK" || name == "CURRENT" || strings.HasPrefix(name, "LOG") || !e.Type().IsRegular() {
			continue
		}
		from, to := filepath.Join(src, name), filepath.Join(dir, name)
		if ext := filepath.Ext(name); ext == ".ldb" || ext == ".sst" {
			if os.Link(from, to) == nil {
				continue
			}
		}
		if err := copyFile(from, to); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "CURRENT"), cur, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "LOCK"), nil, 0o644)
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}
