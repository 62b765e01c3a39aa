// Package lease gives one process at a time a named job (scanning,
// projecting cards to GBrain) through an advisory lock on a file in the data
// dir. The job's owner names the file (scan.LeasePath,
// projection.LeasePath); this package owns only the mechanism: take, wait
// for, refresh, steal and release a lease, and say who holds one.
//
// The kernel drops a dead process's lock, so take-over after a crash is
// automatic. A live holder refreshes the file's mtime every few seconds
// from its own goroutine; a holder that stopped refreshing for StaleAfter is
// frozen (SIGSTOP, a hung volume) and its lease may be stolen: the file is
// replaced, the new holder locks the new file.
//
// A holder whose own goroutine keeps beating is not necessarily working: a
// scan stuck in a system call (a hung network mount, a file that blocks)
// would keep every later scan waiting for ever. Such a holder asks for the
// progress rule (RequireProgress) and calls Progress whenever its work
// moves (the scan: every directory read and every commit). Its heartbeat
// then sets the file's mtime to the time of its last progress, never to
// now, so the mtime is what every other process judges: a holder that made
// no progress for StaleAfter is stuck, whatever its heartbeat does, and its
// lease may be stolen like a frozen one's. Fencing stops it if it wakes.
//
// A lease only says who should write; it never stops a write by itself.
// The fencing number in the store (store.Tx.CheckFence) is what stops a
// frozen holder that wakes up after a steal, so every writer that holds a
// lease must also check its fence in the batch it commits.
package lease

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cgcat/cgcat/local/nofollow"
)

// ErrHeld means another process holds the lease right now.
var ErrHeld = errors.New("lease is held by another process")

// StaleAfter is how long a holder may go without refreshing its lease file
// before another process may steal the lease. CGCAT_LEASE_STALE_AFTER (a Go
// duration) overrides it, for tests.
var StaleAfter = 30 * time.Second

func init() {
	if v := os.Getenv("CGCAT_LEASE_STALE_AFTER"); v != "" {
		if d, err := time.ParseDuration(v); err == nil && d > 0 {
			StaleAfter = d
		}
	}
}

// Lease is a held lock. Release it, or exit: either frees it.
type Lease struct {
	Path string

	mu   sync.Mutex
	f    *os.File
	stop chan struct{}
	done chan struct{}

	// progress is the time of the holder's last Progress (Unix
	// nanoseconds); 0 when the holder never asked for the progress rule:
	// then the heartbeat refreshes to now.
	progress atomic.Int64
	// touched is the mtime the heartbeat last set (heartbeat goroutine
	// and touch under mu).
	touched int64
}

// RequireProgress puts the lease under the progress rule (see the package
// doc): from now on, only Progress keeps it fresh.
func (l *Lease) RequireProgress() { l.Progress() }

// Progress records that the holder's work moved just now. It costs one
// atomic store; the heartbeat writes it to the file.
func (l *Lease) Progress() {
	if l != nil {
		l.progress.Store(time.Now().UnixNano())
	}
}

// TryAcquire takes the lease at path without waiting. It returns ErrHeld if
// a live process holds it, and steals it from a frozen one.
func TryAcquire(path string) (*Lease, error) {
	l, err := tryLock(path)
	if !errors.Is(err, ErrHeld) {
		return l, err
	}
	if !stale(path) {
		return nil, ErrHeld
	}
	return steal(path)
}

// tryLock locks the file at path, making sure the locked file is still the
// one at path (a steal may have replaced it between open and lock).
func tryLock(path string) (*Lease, error) {
	for range 5 {
		f, err := openLeaseFile(path)
		if err != nil {
			return nil, err
		}
		if err := lockFile(f); err != nil {
			f.Close()
			return nil, err
		}
		if sameFile(f, path) {
			l := &Lease{Path: path, f: f, stop: make(chan struct{}), done: make(chan struct{})}
			l.touch()
			go l.heartbeat()
			return l, nil
		}
		_ = unlockFile(f)
		f.Close()
	}
	return nil, ErrHeld
}

// openLeaseFile opens (creating) a lease file without waiting on what
// stands there (openNonBlock), and refuses anything but a regular file: a
// FIFO or a device put in its place would otherwise be locked, written
// and waited on.
func openLeaseFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|openNonBlock, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open lease file: %w", err)
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("lease file %s is not a regular file; remove it (cgcat makes a new one)", path)
	}
	return f, nil
}

func sameFile(f *os.File, path string) bool {
	a, err1 := f.Stat()
	b, err2 := os.Stat(path)
	return err1 == nil && err2 == nil && os.SameFile(a, b)
}

func stale(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && time.Since(fi.ModTime()) > StaleAfter
}

// steal replaces a frozen holder's lease file and locks the new one. Steals
// are serialised by a second lock so two stealers cannot both win.
func steal(path string) (*Lease, error) {
	sf, err := openLeaseFile(path + ".steal")
	if err != nil {
		return nil, err
	}
	defer sf.Close()
	if err := lockFile(sf); err != nil {
		return nil, ErrHeld
	}
	defer unlockFile(sf)
	if !stale(path) { // refreshed, or already stolen by someone else
		return nil, ErrHeld
	}
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return nil, fmt.Errorf("replace stale lease file: %w", err)
	}
	return tryLock(path)
}

// touch records the holder's pid and refreshes the file's mtime.
func (l *Lease) touch() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return
	}
	at := time.Now()
	if p := l.progress.Load(); p != 0 {
		// The progress rule: the file says when the work last moved.
		if p <= l.touched {
			return
		}
		at = time.Unix(0, p)
	}
	b := []byte(strconv.Itoa(os.Getpid()) + "\n")
	_ = l.f.Truncate(int64(len(b)))
	_, _ = l.f.WriteAt(b, 0)
	_ = os.Chtimes(l.f.Name(), at, at)
	l.touched = at.UnixNano()
}

func (l *Lease) heartbeat() {
	defer close(l.done)
	t := time.NewTicker(max(StaleAfter/5, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
			if l.Lost() {
				return // never refresh a file that is no longer ours
			}
			l.touch()
		}
	}
}

// Lost reports whether the lease was stolen (the file at Path is not the
// one this holder locked). A holder that lost its lease must stop writing;
// fencing enforces it anyway.
func (l *Lease) Lost() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f == nil || !sameFile(l.f, l.Path)
}

// Acquire waits until the lease is free (or stale) or ctx ends.
func Acquire(ctx context.Context, path string, poll time.Duration) (*Lease, error) {
	for {
		l, err := TryAcquire(path)
		if !errors.Is(err, ErrHeld) {
			return l, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(poll):
		}
	}
}

// Release frees the lease.
func (l *Lease) Release() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	f := l.f
	l.f = nil
	l.mu.Unlock()
	if f == nil {
		return nil
	}
	close(l.stop)
	<-l.done
	// An empty file says "free" to Active without taking the lock.
	if sameFile(f, l.Path) {
		_ = f.Truncate(0)
	}
	err := unlockFile(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Holder reports whether the lease at path is held and the pid written by its
// holder (0 when unknown). It takes the lock briefly when free.
func Holder(path string) (held bool, pid int) {
	l, err := tryLock(path)
	if err == nil {
		_ = l.Release()
		return false, 0
	}
	if !errors.Is(err, ErrHeld) {
		return false, 0
	}
	r, _ := nofollow.ReadRegular(path, 4<<10, true) // never waits on a FIFO
	pid, _ = strconv.Atoi(strings.TrimSpace(string(r.Data)))
	return true, pid
}

// Active reports, without taking the lock, whether a live process holds the
// lease at path and refreshes it: its file names a pid that is alive, and
// was refreshed within StaleAfter. A holder that froze (its heartbeat
// stopped) or died, or a lease released, is not active.
func Active(path string) (pid int, ok bool) {
	fi, err := os.Stat(path)
	if err != nil || time.Since(fi.ModTime()) > StaleAfter {
		return 0, false
	}
	r, err := nofollow.ReadRegular(path, 4<<10, true) // never waits on a FIFO
	if err != nil {
		return 0, false
	}
	pid, _ = strconv.Atoi(strings.TrimSpace(string(r.Data)))
	if live, stopped := Process(pid); !live || stopped {
		return 0, false
	}
	return pid, true
}

// Process reports whether pid is a live process, and whether it is stopped
// (SIGSTOP, Ctrl-Z; known where /proc tells).
func Process(pid int) (alive, stopped bool) {
	if pid <= 0 || !processAlive(pid) {
		return false, false
	}
	return true, processStopped(pid)
}
