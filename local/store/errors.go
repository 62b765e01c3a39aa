package store

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
)

// The errors of this package say what happened, never what a person should
// run or do about it: that advice is cmd/cgcat's (errors_for_people.go),
// which knows the commands.

var (
	// ErrNewerFormat means the data dir was written by a newer cgcat.
	ErrNewerFormat = errors.New("store was written by a newer cgcat")
	// ErrFenced means a lease holder's fencing number is stale: another
	// process took the lease over, so this one must stop writing.
	ErrFenced = errors.New("lease was taken over by another process")
	// ErrBusy means the database stayed locked by another process for the
	// whole wait budget.
	ErrBusy = errors.New("catalog store stayed busy")
	// ErrRecoverBusy means a recovery found the store open in another
	// process.
	ErrRecoverBusy = errors.New("another cgcat process has the catalog store open")
)

// CorruptError says the database is damaged.
type CorruptError struct {
	Dir string
	Err error
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("catalog store %s is damaged (%v)", e.Dir, e.Err)
}
func (e *CorruptError) Unwrap() error { return e.Err }

// BusyError is ErrBusy with who holds the store, when known.
type BusyError struct {
	Dir    string
	Wait   string
	Holder Holder
}

func (e *BusyError) Error() string {
	who := "another cgcat process"
	if e.Holder.PID > 0 {
		who = fmt.Sprintf("process %d", e.Holder.PID)
		if e.Holder.Stopped {
			who += " (stopped)"
		}
	}
	return fmt.Sprintf("%v for %s: %s kept %s locked", ErrBusy, e.Wait, who, e.Dir)
}
func (e *BusyError) Unwrap() error { return ErrBusy }

// WriteError says the store could not be written (a full disk, a read-only
// data dir; Err is the errno). Nothing was half-written: a batch commits
// whole or not at all.
type WriteError struct {
	Dir string
	Err error
}

func (e *WriteError) Error() string {
	return fmt.Sprintf("cannot write the catalog store in %s (%v)", e.Dir, e.Err)
}
func (e *WriteError) Unwrap() error { return e.Err }

func writeErr(dir string, err error) error {
	if err == nil {
		return nil
	}
	var we *WriteError
	if errors.As(err, &we) {
		return err
	}
	for _, errno := range []syscall.Errno{syscall.ENOSPC, syscall.EROFS, syscall.EACCES, syscall.EPERM, syscall.EDQUOT} {
		// goleveldb words some failures without wrapping them
		// ("newManifest error: write …: no space left on device").
		if errors.Is(err, errno) || strings.Contains(err.Error(), errno.Error()) {
			return &WriteError{Dir: dir, Err: errno}
		}
	}
	return err
}

// PublishError says a change was committed to the store (Committed) but
// could not be published for the other processes (their views): nothing is
// lost, and other processes answer from the store until the next writer
// publishes it.
type PublishError struct {
	Dir       string
	Committed bool
	Err       error
}

func (e *PublishError) Error() string {
	if e.Committed {
		return fmt.Sprintf("the change was saved in the catalog store, but publishing it for other cgcat processes in %s failed (%v)", e.Dir, e.cause())
	}
	return fmt.Sprintf("publishing the catalog for other cgcat processes in %s failed (%v)", e.Dir, e.cause())
}

func (e *PublishError) cause() error {
	var we *WriteError
	if errors.As(e.Err, &we) {
		return we.Err
	}
	return e.Err
}

// Unwrap gives the cause (a WriteError when the disk is full or read-only).
func (e *PublishError) Unwrap() error { return e.Err }
