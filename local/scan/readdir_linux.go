//go:build linux

package scan

import (
	"io/fs"
	"unsafe"

	"golang.org/x/sys/unix"
)

// listDir lists a directory with raw getdents64: no fcntl, no poller
// registration, no stat per entry (d_type says what each entry is). It is
// about a third cheaper in syscalls than os.ReadDir on large trees.
func listDir(path string, fn func(name string, typ fs.FileMode)) error {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	for err == unix.EINTR {
		fd, err = unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		return &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	buf := make([]byte, 32<<10)
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return &fs.PathError{Op: "getdents", Path: path, Err: err}
		}
		if n <= 0 {
			return nil
		}
		for off := 0; off < n; {
			d := (*unix.Dirent)(unsafe.Pointer(&buf[off]))
			reclen := int(d.Reclen)
			if reclen == 0 || off+reclen > n {
				return nil
			}
			nameBytes := buf[off+int(unsafe.Offsetof(d.Name)) : off+reclen]
			l := 0
			for l < len(nameBytes) && nameBytes[l] != 0 {
				l++
			}
			name := string(nameBytes[:l])
			off += reclen
			if d.Ino == 0 || name == "." || name == ".." {
				continue
			}
			var typ fs.FileMode
			switch d.Type {
			case unix.DT_DIR:
				typ = fs.ModeDir
			case unix.DT_LNK:
				typ = fs.ModeSymlink
			case unix.DT_REG:
				typ = 0
			case unix.DT_UNKNOWN:
				var st unix.Stat_t
				if unix.Lstat(path+"/"+name, &st) != nil {
					continue
				}
				switch st.Mode & unix.S_IFMT {
				case unix.S_IFDIR:
					typ = fs.ModeDir
				case unix.S_IFLNK:
					typ = fs.ModeSymlink
				}
			default:
				typ = fs.ModeIrregular
			}
			fn(name, typ)
		}
	}
}
