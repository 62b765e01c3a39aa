//go:build windows

package lease

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/windows"
)

// lockRange is a byte far beyond the file's content: Windows locks are
// mandatory for the locked range, and other processes must still read the
// holder's pid at the start of the file.
func lockRange() *windows.Overlapped { return &windows.Overlapped{OffsetHigh: 1} }

// openNonBlock: nothing in the file system blocks an open here.
const openNonBlock = 0

func lockFile(f *os.File) error {
	ol := lockRange()
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_IO_PENDING) {
		return ErrHeld
	}
	if err != nil {
		return fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	return nil
}

func unlockFile(f *os.File) error {
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, lockRange())
}

func processAlive(pid int) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	var code uint32
	return windows.GetExitCodeProcess(h, &code) == nil && code == 259 // STILL_ACTIVE
}

func processStopped(int) bool { return false }
