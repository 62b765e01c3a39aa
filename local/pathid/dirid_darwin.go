//go:build darwin

package pathid

import (
	"fmt"
	"os"
	"syscall"
)

func dirID(p string) (string, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return "", err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "", fmt.Errorf("%s: no file identity", p)
	}
	return fmt.Sprintf("%s:b%x.%x", ID{Dev: uint64(st.Dev), Ino: st.Ino}, st.Birthtimespec.Sec, st.Birthtimespec.Nsec), nil
}
