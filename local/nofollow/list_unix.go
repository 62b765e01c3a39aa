//go:build unix && !linux

package nofollow

import (
	"errors"
	"io"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// List calls fn for every entry of d but "." and "..", with its type from
// the listing where the platform gives one. It lists a fresh descriptor of
// the same directory (openat(d, ".")), so a second List starts over.
func (d *Dir) List(fn func(name string, typ fs.FileMode)) error {
	if d.lookup {
		return pathErr("readdir", d.path, unix.EBADF)
	}
	fd, err := openAt(d.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return pathErr("open", d.path, err)
	}
	f := os.NewFile(uintptr(fd), d.path)
	defer f.Close()
	for {
		entries, err := f.ReadDir(1024)
		for _, e := range entries {
			fn(e.Name(), e.Type())
		}
		if errors.Is(err, io.EOF) || (err == nil && len(entries) == 0) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
