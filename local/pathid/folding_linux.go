//go:build linux

package pathid

import (
	"io/fs"
	"syscall"
)

func stampOf(fi fs.FileInfo) (dirStamp, bool) {
	if fi == nil || !fi.IsDir() {
		return dirStamp{}, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || st == nil {
		return dirStamp{}, false
	}
	return dirStamp{dev: uint64(st.Dev), ino: st.Ino, ctimeS: st.Ctim.Sec, ctimeN: st.Ctim.Nsec}, true
}
