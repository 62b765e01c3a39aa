//go:build darwin

package meta

import (
	"os"
	"syscall"
)

// changeTime is fi's status-change time in nanoseconds (0 where unknown).
func changeTime(fi os.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ctimespec.Nano()
	}
	return 0
}
