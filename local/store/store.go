package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/cgcat/cgcat/local/ids"
	"github.com/cgcat/cgcat/local/view"
	"github.com/syndtr/goleveldb/leveldb"
)

// FormatVersion is the on-disk format this binary writes. A store with a
// newer format is refused, never misread.
const FormatVersion = 1

// Store is a handle on a data dir; it holds no open database.
type Store struct {
	dataDir string
	dbDir   string
	// Wait bounds how long Update and View wait for other processes
	// (DefaultWait unless changed).
	Wait   time.Duration
	id     Identity
	damage error
}

// DefaultWait is how long Update and View wait for a running process that
// holds the database (a stopped one is not waited for).
const DefaultWait = 15 * time.Second

// DBDir is the LevelDB directory in a data dir.
func DBDir(dataDir string) string { return filepath.Join(dataDir, "catalog.db") }

// Open prepares a data dir: the database (made complete or not at all), the
// identity file, and a published view of the catalog. It never waits for
// another process: if one holds the database, what it publishes is what
// readers see.
func Open(ctx context.Context, dataDir string) (*Store, error) {
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return nil, writeErr(dataDir, fmt.Errorf("create data dir: %w", err))
	}
	s := &Store{dataDir: dataDir, dbDir: DBDir(dataDir), Wait: DefaultWait}
	if err := s.ensureDB(ctx); err != nil {
		return nil, err
	}
	id, err := ensureIdentity(dataDir, func() (Identity, bool) { return s.legacyIdentity(ctx) })
	if err != nil {
		return nil, err
	}
	s.id = id
	if err := s.ensurePublished(ctx); err != nil {
		// A published catalog still answers when the database cannot be
		// written (a full disk, a read-only data dir) or is damaged: the
		// damage is reported (Damage), and every writer says what is wrong.
		var (
			ce *CorruptError
			we *WriteError
			pe *PublishError
		)
		_, published := view.ReadPointer(dataDir)
		switch {
		case errors.As(err, &pe):
			// Committed, not published: readers read the store itself.
		case published && errors.As(err, &ce):
			s.damage = err
		case published && errors.As(err, &we):
		default:
			return nil, err
		}
	}
	return s, nil
}

// Damage is the damage Open found in the database, if any: readers keep
// answering from the published catalog, writers fail until `cgcat store
// recover`.
func (s *Store) Damage() error { return s.damage }

// DataDir is the directory the store lives in.
func (s *Store) DataDir() string { return s.dataDir }

// Identity is the data dir's machine id and secret.
func (s *Store) Identity() Identity { return s.id }

// MachineID is generated once per data dir.
func (s *Store) MachineID() string { return s.id.MachineID }

// RootKey is the keyed hash of a root key that this machine's cards carry
// (Identity.RootKey).
func (s *Store) RootKey(rootKey string) string { return s.id.RootKey(rootKey) }

// Key is this machine's secret for a purpose (Identity.Key).
func (s *Store) Key(purpose string) []byte { return s.id.Key(purpose) }

// ensureDB makes the database if there is none. It is built under a
// temporary name and renamed into place, so a process killed while making
// it (a host that starts and stops a server at once) leaves no half-made
// store. A directory left that way by an older release (no CURRENT, no
// tables) holds nothing and is replaced.
func (s *Store) ensureDB(ctx context.Context) error {
	switch empty, err := leftoverEmpty(s.dbDir); {
	case err == nil && !empty:
		return nil // a store is there
	case err == nil && empty:
		aside := fmt.Sprintf("%s.empty-%d", s.dbDir, time.Now().UnixNano())
		if err := os.Rename(s.dbDir, aside); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return writeErr(s.dataDir, fmt.Errorf("move aside a half-made catalog store: %w", err))
		}
		os.RemoveAll(aside)
	case !errors.Is(err, fs.ErrNotExist):
		return writeErr(s.dataDir, fmt.Errorf("open catalog store %s: %w", s.dbDir, err))
	}
	tmp, err := os.MkdirTemp(s.dataDir, "catalog.db.new-")
	if err != nil {
		return writeErr(s.dataDir, fmt.Errorf("create catalog store: %w", err))
	}
	defer os.RemoveAll(tmp)
	if err := initDB(tmp); err != nil {
		return writeErr(s.dataDir, fmt.Errorf("create catalog store: %w", err))
	}
	syncDir(tmp)
	if err := os.Rename(tmp, s.dbDir); err != nil {
		if _, serr := os.Stat(filepath.Join(s.dbDir, "CURRENT")); serr == nil {
			return nil // another process made it first: theirs it is
		}
		return writeErr(s.dataDir, fmt.Errorf("create catalog store: %w", err))
	}
	syncDir(s.dataDir)
	return nil
}

func initDB(dir string) error {
	db, err := leveldb.OpenFile(dir, &dbOptions)
	if err != nil {
		return err
	}
	b := new(leveldb.Batch)
	b.Put([]byte(keyFormat), []byte(strconv.Itoa(FormatVersion)))
	b.Put([]byte(keyStoreID), []byte(ids.NewStoreID()))
	werr := db.Write(b, syncWrite)
	if cerr := db.Close(); werr == nil {
		werr = cerr
	}
	return werr
}

// leftoverEmpty reports whether dir is a database directory without a
// CURRENT file and without any data (tables, or a journal with content).
func leftoverEmpty(dir string) (bool, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false, err
	}
	if _, err := os.Stat(filepath.Join(dir, "CURRENT")); err == nil {
		return false, nil
	}
	for _, e := range ents {
		switch filepath.Ext(e.Name()) {
		case ".ldb", ".sst":
			return false, nil
		case ".log":
			if fi, err := e.Info(); err == nil && fi.Size() > 0 && e.Name() != "LOG" {
				return false, nil
			}
		}
	}
	return true, nil
}

// legacyIdentity reads the machine id and secret an older release kept in
// the database.
func (s *Store) legacyIdentity(ctx context.Context) (Identity, bool) {
	var id Identity
	err := s.view(ctx, time.Second, func(r *Reader) error {
		m, _, err := lookup(r, keyLegacyID)
		if err != nil {
			return err
		}
		sec, _, err := lookup(r, keyLegacyKS)
		id = Identity{MachineID: string(m), Secret: sec}
		return err
	})
	return id, err == nil && ids.ValidMachineID(id.MachineID) && len(id.Secret) >= 16
}

// ensurePublished republishes the catalog when the published view may lag
// the database: none yet (a new store, or one from an older release), one of
// another store, or a database written after the view (a writer killed
// between its commit and its publication). It does not wait: a process
// holding the database publishes when it commits.
//
// It also heals: a published chain a reader reported damaged, with a file
// missing or cut short, or with an index built by another version of the
// tokenizer (an upgrade) gets a whole new base.
func (s *Store) ensurePublished(ctx context.Context) error {
	if ptr, ok := view.ReadPointer(s.dataDir); ok && !s.newerThanPointer() && view.NeedsBase(s.dataDir, ptr) == "" {
		return nil
	}
	err := s.update(ctx, 0, func(tx *Tx) error { return nil })
	var be *BusyError
	if errors.As(err, &be) {
		return nil
	}
	return err
}

// newerThanPointer reports whether any database file changed after the
// pointer file was written.
func (s *Store) newerThanPointer() bool {
	pfi, err := os.Stat(view.PointerFile(s.dataDir))
	if err != nil {
		return true
	}
	ents, err := os.ReadDir(s.dbDir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		if e.Name() == "LOCK" || e.Name() == "LOG" || e.Name() == "LOG.old" {
			continue
		}
		// Not After: a file system's clock ticks in milliseconds, and a
		// change in the same tick as the pointer must count.
		if fi, err := e.Info(); err == nil && !fi.ModTime().Before(pfi.ModTime()) {
			return true
		}
	}
	return false
}
