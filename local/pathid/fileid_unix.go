//go:build unix

package pathid

import (
	"io/fs"
	"os"
	"syscall"
)

func fileID(p string) (ID, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return ID{}, err
	}
	id, ok := IDOf(fi)
	if !ok {
		return ID{}, &fs.PathError{Op: "fileid", Path: p, Err: syscall.ENOTSUP}
	}
	return id, nil
}

// IDOf returns the ID held in a FileInfo from os.Stat or os.Lstat (or a
// walk's DirEntry.Info), saving a second stat. It reports false where the
// FileInfo carries none (Windows, fakes).
func IDOf(fi fs.FileInfo) (ID, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || st == nil {
		return ID{}, false
	}
	// Dev and Ino differ in type across Unixes (int32 Dev on darwin).
	return ID{Dev: uint64(st.Dev), Ino: uint64(st.Ino)}, true
}
