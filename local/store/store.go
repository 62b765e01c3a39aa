// Package store is the durable catalog: a LevelDB database in the data dir
// that binds stable project ids to canonical roots and keeps the scan queue,
// the change log and (for the outbox package) pending GBrain cards.
//
// Several processes share one data dir (R27) while goleveldb allows one
// opener at a time, so no process keeps the database open: every Update or
// View opens it, does one short batch, and closes it, retrying while another
// process holds it. Every committed change bumps catalogRevision, logs which
// records changed, and rewrites a tiny revision file that other processes
// watch with one stat. The store never touches a project's files.
package store

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/pathid"
	"github.com/syndtr/goleveldb/leveldb"
	lerrors "github.com/syndtr/goleveldb/leveldb/errors"
	"github.com/syndtr/goleveldb/leveldb/opt"
	"github.com/syndtr/goleveldb/leveldb/util"
)

// FormatVersion is the on-disk format this binary writes. A store with a
// newer format is refused, never misread.
const FormatVersion = 1

// Key prefixes. Records and bindings are JSON; numbers are big-endian so
// keys sort in numeric order.
const (
	keyFormat    = "meta/format"
	keyMachineID = "meta/machineId"
	keyRevision  = "meta/catalogRevision"
	keySecret    = "meta/secret"
	prefixProj   = "p/"   // p/<id> → local.Project
	prefixRoot   = "r/"   // r/<pathid.Key(root)> → id
	prefixLog    = "log/" // log/<rev BE> → []id changed at that revision
	prefixFence  = "fence/"
	// keepLog is how many revisions of change log are kept; a reader further
	// behind reloads everything.
	keepLog = 20000
)

var (
	// ErrNewerFormat means the data dir was written by a newer cgcat.
	ErrNewerFormat = errors.New("store was written by a newer cgcat")
	// ErrFenced means a lease holder's fencing number is stale: another
	// process took the lease over, so this one must stop writing.
	ErrFenced = errors.New("lease was taken over by another process")
	// ErrBusy means the database stayed locked by other processes for the
	// whole wait budget.
	ErrBusy = errors.New("catalog store stayed busy")
)

// CorruptError says the database is damaged and how to recover it.
type CorruptError struct {
	Dir string
	Err error
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("catalog store %s is damaged (%v); run `cgcat store recover` to rebuild it from what is readable (records are kept; a fresh scan refills anything lost)", e.Dir, e.Err)
}
func (e *CorruptError) Unwrap() error { return e.Err }

// Store is a handle on a data dir; it holds no open database.
type Store struct {
	dataDir string
	dbDir   string
	// Wait bounds how long Update/View wait for other processes.
	Wait time.Duration
	// machineID is cached: it never changes for a data dir.
	machineID string
}

// Open prepares the data dir and the database (format version, machine id).
func Open(ctx context.Context, dataDir string) (*Store, error) {
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return nil, writeErr(dataDir, fmt.Errorf("create data dir: %w", err))
	}
	s := &Store{dataDir: dataDir, dbDir: filepath.Join(dataDir, "catalog.db"), Wait: 15 * time.Second}
	// An initialised store is opened without writing anything, so a full
	// disk or a read-only data dir still serves the catalog as it is.
	if _, err := os.Stat(filepath.Join(s.dbDir, "CURRENT")); err == nil {
		err := s.View(ctx, func(r *Reader) error {
			id, err := r.get(keyMachineID)
			s.machineID = string(id)
			if err == nil && len(r.Secret()) == 0 {
				err = leveldb.ErrNotFound
			}
			return err
		})
		if err == nil {
			return s, nil
		}
		if !errors.Is(err, leveldb.ErrNotFound) {
			return nil, err
		}
	}
	err := s.Update(ctx, func(tx *Tx) error {
		if _, err := tx.get(keyFormat); errors.Is(err, leveldb.ErrNotFound) {
			tx.put(keyFormat, []byte(strconv.Itoa(FormatVersion)))
		} else if err != nil {
			return err
		}
		if _, err := tx.get(keyMachineID); errors.Is(err, leveldb.ErrNotFound) {
			tx.put(keyMachineID, []byte("m_"+randomToken(10)))
		}
		if _, err := tx.get(keySecret); errors.Is(err, leveldb.ErrNotFound) {
			b := make([]byte, 32)
			_, _ = rand.Read(b)
			tx.put(keySecret, b)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = s.View(ctx, func(r *Reader) error {
		id, err := r.get(keyMachineID)
		s.machineID = string(id)
		return err
	})
	return s, err
}

// WriteError says the store could not be written (a full disk, a read-only
// data dir) and what to do. Nothing was half-written: a batch commits whole
// or not at all.
type WriteError struct {
	Dir string
	Err error
}

func (e *WriteError) Error() string {
	what := "free some space or fix the data dir's permissions"
	switch {
	case errors.Is(e.Err, syscall.ENOSPC):
		what = "free some space on that disk"
	case errors.Is(e.Err, syscall.EROFS):
		what = "the data dir is on a read-only file system: point dataDir at a writable directory"
	case errors.Is(e.Err, syscall.EACCES), errors.Is(e.Err, syscall.EPERM):
		what = "make the data dir writable for this user"
	}
	return fmt.Sprintf("cannot write the catalog store in %s (%v); %s — until then cgcat answers from the catalog as it was", e.Dir, e.Err, what)
}
func (e *WriteError) Unwrap() error { return e.Err }

func writeErr(dir string, err error) error {
	for _, errno := range []error{syscall.ENOSPC, syscall.EROFS, syscall.EACCES, syscall.EPERM, syscall.EDQUOT} {
		if errors.Is(err, errno) {
			return &WriteError{Dir: dir, Err: errno}
		}
	}
	return err
}

// DataDir is the directory the store lives in.
func (s *Store) DataDir() string { return s.dataDir }

// MachineID is generated once per data dir.
func (s *Store) MachineID() string { return s.machineID }

// RevisionFile is the file other processes stat to notice new commits.
func (s *Store) RevisionFile() string { return filepath.Join(s.dataDir, "revision") }

// ReadRevisionFile returns the last revision announced, 0 if none.
func (s *Store) ReadRevisionFile() uint64 {
	b, err := os.ReadFile(s.RevisionFile())
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	n, _ := strconv.ParseUint(f[0], 10, 64)
	return n
}

// open opens the database, waiting with backoff while another process has
// it. A damaged or newer-format store is an error that says what to do.
func (s *Store) open(ctx context.Context, readOnly bool) (*leveldb.DB, error) {
	b := backoff.NewExponentialBackOff()
	b.InitialInterval = 500 * time.Microsecond
	b.MaxInterval = 20 * time.Millisecond
	b.MaxElapsedTime = s.Wait
	b.RandomizationFactor = 0.5
	var db *leveldb.DB
	err := backoff.Retry(func() error {
		var err error
		db, err = leveldb.OpenFile(s.dbDir, &opt.Options{
			// A reader opens read-only: no manifest or journal is written,
			// so reads are cheaper and still work on a full disk.
			ReadOnly:               readOnly,
			OpenFilesCacheCapacity: 16,
			BlockCacheCapacity:     2 << 20,
			WriteBuffer:            2 << 20,
		})
		if readOnly && err != nil && !isLocked(err) {
			// goleveldb's read-only recovery fails (io.EOF) when more than
			// one journal file is left (a writer killed mid-open, a failed
			// write on a full disk); a normal open repairs that. If that
			// cannot write either, its error says why (no space, read-only).
			if rw, rwErr := leveldb.OpenFile(s.dbDir, &opt.Options{OpenFilesCacheCapacity: 16, BlockCacheCapacity: 2 << 20, WriteBuffer: 2 << 20}); rwErr == nil {
				db, err = rw, nil
			} else {
				err = rwErr
			}
		}
		switch {
		case err == nil:
			return nil
		case isLocked(err):
			return err
		case lerrors.IsCorrupted(err):
			return backoff.Permanent(&CorruptError{Dir: s.dbDir, Err: err})
		default:
			return backoff.Permanent(writeErr(s.dataDir, fmt.Errorf("open catalog store %s: %w", s.dbDir, err)))
		}
	}, backoff.WithContext(b, ctx))
	if err != nil {
		if isLocked(err) {
			return nil, fmt.Errorf("%w for %s: other cgcat processes kept %s locked; try again, or see `cgcat doctor`", ErrBusy, s.Wait, s.dbDir)
		}
		return nil, err
	}
	if v, err := db.Get([]byte(keyFormat), nil); err == nil {
		if n, _ := strconv.Atoi(string(v)); n > FormatVersion {
			db.Close()
			return nil, fmt.Errorf("%w: %s has format %d, this binary understands up to %d; upgrade cgcat or point dataDir elsewhere", ErrNewerFormat, s.dbDir, n, FormatVersion)
		}
	}
	return db, nil
}

func isLocked(err error) bool {
	if errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EWOULDBLOCK) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "resource temporarily unavailable") || strings.Contains(msg, "being used by another process")
}

// View runs fn against a consistent snapshot of the store.
func (s *Store) View(ctx context.Context, fn func(r *Reader) error) error {
	db, err := s.open(ctx, true)
	if err != nil {
		return err
	}
	defer db.Close()
	snap, err := db.GetSnapshot()
	if err != nil {
		return s.wrap(err)
	}
	defer snap.Release()
	return s.wrap(fn(&Reader{snap: snap, store: s}))
}

// Update runs fn and commits what it wrote in one synced batch. If fn
// changed project records, catalogRevision grows by one and the change log
// records which ids changed.
func (s *Store) Update(ctx context.Context, fn func(tx *Tx) error) error {
	db, err := s.open(ctx, false)
	if err != nil {
		return writeErr(s.dataDir, err)
	}
	defer db.Close()
	snap, err := db.GetSnapshot()
	if err != nil {
		return s.wrap(err)
	}
	defer snap.Release()
	tx := &Tx{Reader: Reader{snap: snap, store: s}, batch: new(leveldb.Batch), staged: map[string][]byte{}}
	tx.rev, err = tx.readRevision()
	if err != nil {
		return s.wrap(err)
	}
	if err := fn(tx); err != nil {
		return s.wrap(err)
	}
	if len(tx.changed) > 0 {
		next := tx.rev + 1
		ids := make([]string, 0, len(tx.changed))
		for id := range tx.changed {
			ids = append(ids, id)
		}
		logv, _ := json.Marshal(ids)
		tx.batch.Put(logKey(next), logv)
		tx.batch.Put([]byte(keyRevision), u64(next))
		if next > keepLog {
			tx.batch.Delete(logKey(next - keepLog))
		}
		tx.rev = next
	}
	if tx.batch.Len() == 0 {
		return nil
	}
	if err := db.Write(tx.batch, &opt.WriteOptions{Sync: true}); err != nil {
		return writeErr(s.dataDir, s.wrap(fmt.Errorf("write catalog store: %w", err)))
	}
	// Announce every commit (scan state and outbox too), so other processes
	// notice coverage changes as well as record changes.
	s.announce(tx.rev)
	return nil
}

// announce rewrites the revision file atomically so other processes notice
// with one stat. The second field makes every commit change the file.
func (s *Store) announce(rev uint64) {
	tmp := fmt.Sprintf("%s.%d.tmp", s.RevisionFile(), os.Getpid())
	body := fmt.Sprintf("%d %d.%d\n", rev, os.Getpid(), time.Now().UnixNano())
	if err := os.WriteFile(tmp, []byte(body), 0o644); err != nil {
		return // readers fall back to their periodic check
	}
	_ = os.Rename(tmp, s.RevisionFile())
}

func (s *Store) wrap(err error) error {
	if err != nil && lerrors.IsCorrupted(err) {
		var ce *CorruptError
		if !errors.As(err, &ce) {
			return &CorruptError{Dir: s.dbDir, Err: err}
		}
	}
	return err
}

// Recover rebuilds a damaged database's manifest from its table files
// (goleveldb's recovery); records in readable tables survive.
func Recover(dataDir string) error {
	dir := filepath.Join(dataDir, "catalog.db")
	db, err := leveldb.RecoverFile(dir, nil)
	if err != nil {
		return fmt.Errorf("recover catalog store %s: %w", dir, err)
	}
	return db.Close()
}

func logKey(rev uint64) []byte { return append([]byte(prefixLog), u64(rev)...) }

func u64(n uint64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, n)
	return b
}

var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

func randomToken(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	return idEncoding.EncodeToString(b)
}

// NewProjectID returns a fresh opaque id: "cg_" and 16 lowercase base32
// characters (80 random bits). Never derived from the path.
func NewProjectID() string { return "cg_" + randomToken(10) }

// ValidProjectID reports whether s has the shape of an id we issue.
func ValidProjectID(s string) bool {
	if len(s) != 19 || !strings.HasPrefix(s, "cg_") {
		return false
	}
	for _, r := range s[3:] {
		if !(r >= 'a' && r <= 'z' || r >= '2' && r <= '7') {
			return false
		}
	}
	return true
}

// Reader reads one consistent snapshot.
type Reader struct {
	snap  *leveldb.Snapshot
	store *Store
}

func (r *Reader) get(key string) ([]byte, error) { return r.snap.Get([]byte(key), nil) }

func (r *Reader) readRevision() (uint64, error) {
	v, err := r.get(keyRevision)
	if errors.Is(err, leveldb.ErrNotFound) {
		return 0, nil
	}
	if err != nil || len(v) != 8 {
		return 0, fmt.Errorf("read catalog revision: %v", err)
	}
	return binary.BigEndian.Uint64(v), nil
}

// Revision is the catalogRevision of this snapshot.
func (r *Reader) Revision() uint64 { n, _ := r.readRevision(); return n }

// Secret is a per-data-dir random key (for signing cursors).
func (r *Reader) Secret() []byte { v, _ := r.get(keySecret); return v }

// Project returns the record with id, or nil.
func (r *Reader) Project(id string) (*local.Project, error) { return projectBy(r.get, id) }

// ProjectByRoot returns the record bound to the canonical root, or nil.
func (r *Reader) ProjectByRoot(root string) (*local.Project, error) { return projectAt(r.get, root) }

// projectBy and projectAt read a record through get, so a snapshot and a
// Tx (which also sees its own staged writes) share one decoding.
func projectBy(get func(string) ([]byte, error), id string) (*local.Project, error) {
	v, err := get(prefixProj + id)
	if errors.Is(err, leveldb.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var p local.Project
	if err := json.Unmarshal(v, &p); err != nil {
		return nil, fmt.Errorf("record %s is unreadable: %w", id, err)
	}
	return &p, nil
}

func projectAt(get func(string) ([]byte, error), root string) (*local.Project, error) {
	id, err := get(prefixRoot + pathid.Key(root))
	if errors.Is(err, leveldb.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return projectBy(get, string(id))
}

// Projects calls fn for every record, in id order.
func (r *Reader) Projects(fn func(p *local.Project) error) error {
	it := r.snap.NewIterator(util.BytesPrefix([]byte(prefixProj)), nil)
	defer it.Release()
	for it.Next() {
		var p local.Project
		if err := json.Unmarshal(it.Value(), &p); err != nil {
			return fmt.Errorf("record %s is unreadable: %w", it.Key(), err)
		}
		if err := fn(&p); err != nil {
			return err
		}
	}
	return it.Error()
}

// ChangedSince returns the ids changed after revision since, and false when
// the log no longer reaches back that far (the caller reloads everything).
func (r *Reader) ChangedSince(since uint64) (ids []string, complete bool, err error) {
	cur := r.Revision()
	if since >= cur {
		return nil, true, nil
	}
	if cur-since > keepLog {
		return nil, false, nil
	}
	seen := map[string]bool{}
	it := r.snap.NewIterator(&util.Range{Start: logKey(since + 1), Limit: logKey(cur + 1)}, nil)
	defer it.Release()
	want := since + 1
	for it.Next() {
		rev := binary.BigEndian.Uint64(it.Key()[len(prefixLog):])
		if rev != want {
			return nil, false, nil
		}
		want++
		var part []string
		if err := json.Unmarshal(it.Value(), &part); err != nil {
			return nil, false, nil
		}
		for _, id := range part {
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	return ids, want == cur+1, it.Error()
}

// Get reads a raw key (for the scan queue and the outbox).
func (r *Reader) Get(key string) ([]byte, bool, error) {
	v, err := r.get(key)
	if errors.Is(err, leveldb.ErrNotFound) {
		return nil, false, nil
	}
	return v, err == nil, err
}

// Scan calls fn for raw keys with prefix in key order until fn returns false.
func (r *Reader) Scan(prefix string, fn func(key string, value []byte) bool) error {
	it := r.snap.NewIterator(util.BytesPrefix([]byte(prefix)), nil)
	defer it.Release()
	for it.Next() {
		if !fn(string(it.Key()), it.Value()) {
			break
		}
	}
	return it.Error()
}

// Fence returns the current fencing number of a lease name.
func (r *Reader) Fence(name string) uint64 {
	v, err := r.get(prefixFence + name)
	if err != nil || len(v) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(v)
}

// Tx is one write batch over a snapshot. Reads see the snapshot plus what
// this Tx staged.
type Tx struct {
	Reader
	batch   *leveldb.Batch
	staged  map[string][]byte // nil value = deleted
	changed map[string]bool
	rev     uint64
}

func (tx *Tx) get(key string) ([]byte, error) {
	if v, ok := tx.staged[key]; ok {
		if v == nil {
			return nil, leveldb.ErrNotFound
		}
		return v, nil
	}
	return tx.Reader.get(key)
}

func (tx *Tx) put(key string, v []byte) {
	if v == nil {
		v = []byte{} // nil marks a deletion in staged
	}
	tx.batch.Put([]byte(key), v)
	tx.staged[key] = v
}

// Put writes a raw key (scan queue, outbox).
func (tx *Tx) Put(key string, v []byte) { tx.put(key, v) }

// Delete removes a raw key.
func (tx *Tx) Delete(key string) {
	tx.batch.Delete([]byte(key))
	tx.staged[key] = nil
}

// Get reads a raw key, seeing this Tx's own writes.
func (tx *Tx) Get(key string) ([]byte, bool, error) {
	v, err := tx.get(key)
	if errors.Is(err, leveldb.ErrNotFound) {
		return nil, false, nil
	}
	return v, err == nil, err
}

// Scan calls fn for raw keys with prefix in key order, seeing this Tx's own
// writes, until fn returns false.
func (tx *Tx) Scan(prefix string, fn func(key string, value []byte) bool) error {
	merged := map[string][]byte{}
	if err := tx.Reader.Scan(prefix, func(k string, v []byte) bool {
		merged[k] = slices.Clone(v)
		return true
	}); err != nil {
		return err
	}
	for k, v := range tx.staged {
		if strings.HasPrefix(k, prefix) {
			if v == nil {
				delete(merged, k)
			} else {
				merged[k] = v
			}
		}
	}
	keys := make([]string, 0, len(merged))
	for k := range merged {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !fn(k, merged[k]) {
			break
		}
	}
	return nil
}

// Project returns the record with id as staged in this Tx, or nil.
func (tx *Tx) Project(id string) (*local.Project, error) { return projectBy(tx.get, id) }

// ProjectByRoot returns the record bound to root as staged in this Tx.
func (tx *Tx) ProjectByRoot(root string) (*local.Project, error) { return projectAt(tx.get, root) }

// NextRevision is the catalogRevision this Tx will commit if it changes a record.
func (tx *Tx) NextRevision() uint64 { return tx.rev + 1 }

// PutProject writes a record and its root binding, and marks it changed.
// A root is bound to one id for ever; binding it to another id is refused.
func (tx *Tx) PutProject(p *local.Project) error {
	if !ValidProjectID(p.ID) {
		return fmt.Errorf("refusing to store a record with malformed id %q", p.ID)
	}
	rk := prefixRoot + pathid.Key(p.Root)
	if id, err := tx.get(rk); err == nil && string(id) != p.ID {
		return fmt.Errorf("root %s is already bound to %s, not %s", p.Root, id, p.ID)
	}
	p.Changed = tx.rev + 1
	v, err := json.Marshal(p)
	if err != nil {
		return err
	}
	tx.put(prefixProj+p.ID, v)
	tx.put(rk, []byte(p.ID))
	if tx.changed == nil {
		tx.changed = map[string]bool{}
	}
	tx.changed[p.ID] = true
	return nil
}

// BumpFence starts a new fencing epoch for a lease name and returns it. Call
// it right after taking the lease.
func (tx *Tx) BumpFence(name string) uint64 {
	n := tx.Fence(name) + 1
	tx.put(prefixFence+name, u64(n))
	return n
}

// Fence returns the fencing number as staged in this Tx.
func (tx *Tx) Fence(name string) uint64 {
	v, err := tx.get(prefixFence + name)
	if err != nil || len(v) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(v)
}

// CheckFence fails with ErrFenced when epoch is no longer the current one.
// Because the database is held exclusively for the whole Update, checking
// here and writing in the same batch cannot interleave with another holder.
func (tx *Tx) CheckFence(name string, epoch uint64) error {
	if cur := tx.Fence(name); cur != epoch {
		return fmt.Errorf("%w (%s epoch %d, ours %d)", ErrFenced, name, cur, epoch)
	}
	return nil
}
