package config

import (
	"os"
	"syscall"
)

// fileIdentity is fi's device, inode and status-change time.
func fileIdentity(fi os.FileInfo) (dev, ino uint64, ctime int64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), st.Ino, st.Ctimespec.Nano()
	}
	return 0, 0, 0
}
