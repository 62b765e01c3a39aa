//go:build linux

package pathid

import (
	"fmt"

	"golang.org/x/sys/unix"
)

func dirID(p string) (string, error) {
	var st unix.Statx_t
	err := unix.Statx(unix.AT_FDCWD, p, 0, unix.STATX_INO|unix.STATX_BTIME, &st)
	if err != nil {
		return "", err
	}
	id := ID{Dev: unix.Mkdev(st.Dev_major, st.Dev_minor), Ino: st.Ino}.String()
	if st.Mask&unix.STATX_BTIME != 0 {
		id += fmt.Sprintf(":b%x.%x", st.Btime.Sec, st.Btime.Nsec)
	}
	return id, nil
}
