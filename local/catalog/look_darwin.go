//go:build darwin

package catalog

import (
	"os"
	"syscall"
	"time"
)

func look(fi os.FileInfo) fileLook {
	l := fileLook{size: fi.Size(), mod: fi.ModTime().UnixNano(), mode: fi.Mode().Type()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		l.ino, l.dev = uint64(st.Ino), uint64(st.Dev)
		l.change = time.Unix(int64(st.Ctimespec.Sec), int64(st.Ctimespec.Nsec)).UnixNano()
	}
	return l
}
