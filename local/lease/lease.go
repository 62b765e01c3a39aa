// Package lease gives one process at a time a named job (scanning,
// projecting) through an advisory lock on a file in the data dir. The kernel
// drops a dead process's lock, so take-over after a crash needs no staleness
// rules. Leases say who may write; fencing numbers in the store make sure a
// paused former holder cannot.
package lease

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// ErrHeld means another process holds the lease right now.
var ErrHeld = errors.New("lease is held by another process")

// Lease is a held lock. Release it, or exit: either frees it.
type Lease struct {
	f    *os.File
	Path string
}

// TryAcquire takes the lease at path without waiting; ErrHeld if taken.
func TryAcquire(path string) (*Lease, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open lease file: %w", err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, err
	}
	// Record who holds it, for `cgcat doctor`; the lock, not this text, is the truth.
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return &Lease{f: f, Path: path}, nil
}

// Acquire waits until the lease is free or ctx ends.
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
	if l == nil || l.f == nil {
		return nil
	}
	err := unlockFile(l.f)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	return err
}

// Holder reports whether the lease at path is held and the pid written by its
// holder (0 when unknown). It takes the lock briefly when free.
func Holder(path string) (held bool, pid int) {
	l, err := TryAcquire(path)
	if err == nil {
		_ = l.Release()
		return false, 0
	}
	if !errors.Is(err, ErrHeld) {
		return false, 0
	}
	b, _ := os.ReadFile(path)
	pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	return true, pid
}
