package nofollow

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
)

// ErrNotRegular is the error (inside an *fs.PathError) when ReadRegular
// finds something other than a regular file: a FIFO, a socket, a device or
// a directory. Nothing was read from it, and the open did not wait.
var ErrNotRegular = errors.New("not a regular file")

// IsNotRegular reports whether err says a file was refused for its type.
func IsNotRegular(err error) bool { return errors.Is(err, ErrNotRegular) }

// Regular is what ReadRegular read.
type Regular struct {
	Data []byte // the first limit bytes at most
	Info Info   // from the descriptor read (fstat), so of the file read
}

// Whole reports whether Data is the whole file as fstat saw it.
func (r Regular) Whole() bool { return int64(len(r.Data)) >= r.Info.Size }

// ReadRegular reads at most limit bytes of the regular file at the absolute
// path p without ever blocking on what stands there: the open does not
// wait (O_NONBLOCK: a FIFO with no writer opens at once; O_NOCTTY: a
// terminal never becomes ours), the type is checked on the opened
// descriptor, and only a regular file is read. It is the one way to read a
// small file in a project or the data dir by path (git files, the config,
// lease files): a file someone else can replace by a FIFO must never hang
// a scan or a serve.
//
// Unlike the rest of this package it resolves symlinks in p's directories.
// With follow false the last name is not followed (a symlink there is
// ErrSymlink); with follow true it is (a config file linked from a dotfiles
// directory).
func ReadRegular(p string, limit int64, follow bool) (Regular, error) {
	clean, err := cleanAbs(p)
	if err != nil {
		return Regular{}, err
	}
	f, err := openRegular(clean, follow)
	if err != nil {
		return Regular{}, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return Regular{}, err
	}
	if !info.IsRegular() {
		return Regular{Info: info}, pathErr("open", clean, fmt.Errorf("%w (%s)", ErrNotRegular, kind(info)))
	}
	want := min(max(limit, 0), info.Size)
	buf := make([]byte, want)
	n, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return Regular{Info: info}, err
	}
	return Regular{Data: buf[:n], Info: info}, nil
}

// kind names a file type for messages.
func kind(i Info) string {
	switch m := i.Mode; {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a plain file"
}
