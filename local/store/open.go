package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/cgcat/cgcat/local/lease"
	"github.com/cgcat/cgcat/local/nofollow"
	"github.com/syndtr/goleveldb/leveldb"
	lerrors "github.com/syndtr/goleveldb/leveldb/errors"
	"github.com/syndtr/goleveldb/leveldb/opt"
	"github.com/syndtr/goleveldb/leveldb/storage"
)

var dbOptions = opt.Options{
	OpenFilesCacheCapacity: 16,
	BlockCacheCapacity:     2 << 20,
	WriteBuffer:            2 << 20,
}

// openDB opens the database, waiting with backoff while another process
// has it (wait <= 0: no waiting). A damaged or newer-format store is an
// error that says what to do. goleveldb panics on some damage instead of
// failing; that is caught here and reported as damage too.
func (s *Store) openDB(ctx context.Context, readOnly bool, wait time.Duration) (db *leveldb.DB, err error) {
	b := backoff.NewExponentialBackOff()
	b.InitialInterval = 500 * time.Microsecond
	b.MaxInterval = 20 * time.Millisecond
	b.MaxElapsedTime = max(wait, time.Nanosecond)
	b.RandomizationFactor = 0.5
	var policy backoff.BackOff = b
	if wait <= 0 {
		policy = &backoff.StopBackOff{}
	}
	err = backoff.Retry(func() error {
		var err error
		db, err = s.openOnce(readOnly)
		switch {
		case err == nil:
			return nil
		case isLocked(err) && s.Holder().Stopped:
			// A stopped holder lets go only when someone resumes it:
			// waiting is pointless, saying who it is is not.
			return backoff.Permanent(err)
		case isLocked(err):
			return err
		default:
			return backoff.Permanent(err)
		}
	}, backoff.WithContext(policy, ctx))
	if err != nil {
		if isLocked(err) {
			return nil, &BusyError{Dir: s.dbDir, Wait: wait.String(), Holder: s.Holder()}
		}
		return nil, err
	}
	if v, gerr := guardGet(db, keyFormat); gerr == nil {
		if n, _ := strconv.Atoi(string(v)); n > FormatVersion {
			db.Close()
			return nil, fmt.Errorf("%w: %s has format %d, this binary understands up to %d", ErrNewerFormat, s.dbDir, n, FormatVersion)
		}
	} else if !errors.Is(gerr, leveldb.ErrNotFound) {
		db.Close()
		return nil, s.wrap(gerr)
	}
	return db, nil
}

func (s *Store) openOnce(readOnly bool) (db *leveldb.DB, err error) {
	defer func() {
		if r := recover(); r != nil {
			db, err = nil, s.panicErr(r)
		}
	}()
	if _, err := os.Stat(filepath.Join(s.dbDir, "CURRENT")); err != nil {
		if _, derr := os.Stat(s.dbDir); derr != nil {
			return nil, writeErr(s.dataDir, fmt.Errorf("open catalog store %s: %w", s.dbDir, derr))
		}
		return nil, &CorruptError{Dir: s.dbDir, Err: errors.New("its CURRENT file is missing")}
	}
	o := dbOptions
	// A reader opens read-only: nothing is written, so it is cheaper and
	// works on a full disk.
	o.ReadOnly = readOnly
	db, err = leveldb.OpenFile(s.dbDir, &o)
	if readOnly && err != nil && !isLocked(err) && !lerrors.IsCorrupted(err) {
		// goleveldb's read-only recovery fails (io.EOF) when more than one
		// journal is left (a writer killed mid-open, a failed write on a
		// full disk); a normal open repairs that. If it cannot write
		// either, its error says why (no space, read-only).
		db, err = leveldb.OpenFile(s.dbDir, &dbOptions)
	}
	switch {
	case err == nil:
		return db, nil
	case isLocked(err):
		return nil, err
	case lerrors.IsCorrupted(err), errors.Is(err, os.ErrNotExist):
		// A missing table is damage too: "open 000143.ldb: no such file".
		return nil, &CorruptError{Dir: s.dbDir, Err: err}
	default:
		return nil, writeErr(s.dataDir, fmt.Errorf("open catalog store %s: %w", s.dbDir, err))
	}
}

func isLocked(err error) bool {
	if errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EWOULDBLOCK) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "resource temporarily unavailable") || strings.Contains(msg, "being used by another process")
}

// panicErr turns a goleveldb panic (it panics on some malformed tables,
// e.g. "leveldb: internal key ..., invalid length") into damage.
func (s *Store) panicErr(r any) error {
	if os.Getenv("CGCAT_DEBUG_PANIC") == "1" {
		fmt.Fprintf(os.Stderr, "store panic: %v\n%s", r, debug.Stack())
	}
	return &CorruptError{Dir: s.dbDir, Err: fmt.Errorf("reading it failed: %v", r)}
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

func guardGet(db *leveldb.DB, key string) (v []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = lerrors.NewErrCorrupted(storage.FileDesc{}, fmt.Errorf("%v", r))
		}
	}()
	return db.Get([]byte(key), nil)
}

// Holder says which process holds the database open for writing, as far as
// its writer file tells (a process that died leaves a file naming a dead
// pid: that is no holder).
type Holder struct {
	PID     int
	Since   time.Time
	Stopped bool // the process is stopped (SIGSTOP, Ctrl-Z)
}

func (s *Store) writerFile() string { return filepath.Join(s.dataDir, "store.writer") }

// markWriter records this process as the writer while it holds the lock.
func (s *Store) markWriter() {
	_ = os.WriteFile(s.writerFile(), []byte(fmt.Sprintf("%d %d\n", os.Getpid(), time.Now().UnixNano())), 0o644)
}

func (s *Store) unmarkWriter() {
	if h := readHolder(s.writerFile()); h.PID == os.Getpid() {
		os.Remove(s.writerFile())
	}
}

// Holder is the process that last took the write lock and is still alive,
// or the zero Holder.
func (s *Store) Holder() Holder {
	h := readHolder(s.writerFile())
	alive, stopped := lease.Process(h.PID)
	if !alive {
		return Holder{}
	}
	h.Stopped = stopped
	return h
}

func readHolder(path string) Holder {
	r, err := nofollow.ReadRegular(path, 4<<10, true) // never waits on a FIFO
	if err != nil {
		return Holder{}
	}
	b := r.Data
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return Holder{}
	}
	pid, _ := strconv.Atoi(f[0])
	ns, _ := strconv.ParseInt(f[1], 10, 64)
	return Holder{PID: pid, Since: time.Unix(0, ns)}
}
