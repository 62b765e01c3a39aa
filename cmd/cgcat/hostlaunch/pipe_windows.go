package hostlaunch

import (
	"errors"
	"syscall"
)

// lostPipeOS: a write to a pipe whose reader is gone fails with
// ERROR_BROKEN_PIPE or ERROR_NO_DATA on Windows, not EPIPE.
func lostPipeOS(err error) bool {
	return errors.Is(err, syscall.Errno(109)) || errors.Is(err, syscall.Errno(232))
}
