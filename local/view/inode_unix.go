//go:build unix

package view

import (
	"io/fs"
	"syscall"
)

func inode(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}

// fileIdent is what changes when a file is written in place or
// truncated: size, modification time and status-change time (which
// nothing can set back).
type fileIdent struct {
	size         int64
	mtime, ctime int64
}

func identOf(fi fs.FileInfo) fileIdent {
	return fileIdent{size: fi.Size(), mtime: fi.ModTime().UnixNano(), ctime: changeTime(fi)}
}
