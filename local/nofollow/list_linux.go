package nofollow

import (
	"encoding/binary"
	"io/fs"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Offsets of struct linux_dirent64's fields (d_ino, d_reclen, d_type,
// d_name), taken from x/sys's layout of it.
const (
	direntIno    = int(unsafe.Offsetof(unix.Dirent{}.Ino))
	direntReclen = int(unsafe.Offsetof(unix.Dirent{}.Reclen))
	direntType   = int(unsafe.Offsetof(unix.Dirent{}.Type))
	direntName   = int(unsafe.Offsetof(unix.Dirent{}.Name))
)

// dirBufs recycles getdents buffers: one 32 KiB buffer per listing would
// otherwise be allocated for every directory of a walk.
var dirBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// List calls fn for every entry of d but "." and "..", with its type from
// the listing (d_type): no stat per entry, except where the file system
// leaves the type unknown, and then an fstatat relative to d, never a path.
// It lists with raw getdents64: no fcntl, no poller registration.
func (d *Dir) List(fn func(name string, typ fs.FileMode)) error {
	if d.lookup {
		return pathErr("getdents", d.path, unix.EBADF)
	}
	if d.listed {
		if _, err := unix.Seek(d.fd, 0, 0); err != nil {
			return pathErr("seek", d.path, err)
		}
	}
	d.listed = true
	bp := dirBufs.Get().(*[]byte)
	defer dirBufs.Put(bp)
	buf := *bp
	for {
		n, err := unix.Getdents(d.fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return pathErr("getdents", d.path, err)
		}
		if n <= 0 {
			return nil
		}
		for off := 0; off < n; {
			// The record is read field by field from the buffer: a
			// *unix.Dirent laid over it would reach past the buffer's end
			// for a short record near it (the struct holds a 256-byte
			// name), which the race detector's pointer checks refuse.
			if off+direntName > n {
				return nil
			}
			rec := buf[off:n]
			reclen := int(binary.NativeEndian.Uint16(rec[direntReclen:]))
			if reclen < direntName || reclen > len(rec) {
				return nil
			}
			ino := binary.NativeEndian.Uint64(rec[direntIno:])
			dtype := rec[direntType]
			nameBytes := rec[direntName:reclen]
			l := 0
			for l < len(nameBytes) && nameBytes[l] != 0 {
				l++
			}
			off += reclen
			if ino == 0 || (l == 1 && nameBytes[0] == '.') || (l == 2 && nameBytes[0] == '.' && nameBytes[1] == '.') {
				continue
			}
			name := string(nameBytes[:l])
			var typ fs.FileMode
			switch dtype {
			case unix.DT_DIR:
				typ = fs.ModeDir
			case unix.DT_LNK:
				typ = fs.ModeSymlink
			case unix.DT_REG:
				typ = 0
			case unix.DT_UNKNOWN:
				var st unix.Stat_t
				if unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
					continue
				}
				typ = infoOf(&st).Mode.Type()
			default:
				typ = fs.ModeIrregular
			}
			fn(name, typ)
		}
	}
}
