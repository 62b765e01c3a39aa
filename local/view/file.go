package view

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/cgcat/cgcat/local/nofollow"
)

// Files of a data dir are written by cgcat, but anyone with write access to
// the data dir can put something else in their place: a FIFO (an open
// would wait for a writer for ever), a symlink to /dev/zero (a read would
// never end), a file of hundreds of megabytes. Every published file is
// opened without blocking, refused unless it is a regular file, and read
// no further than its kind allows: the pointer and deltas through
// nofollow.ReadRegular, a base (which is mapped, so needs its descriptor)
// through openRegular.

// Bounds on what a reader reads of each kind of file. A writer never
// publishes a delta above maxDeltaFile (it publishes a base instead).
const (
	maxPointerFile = 512
	maxDeltaFile   = 256 << 20
)

// errNotRegular says a published file's name holds something other than a
// regular file.
var errNotRegular = errors.New("not a regular file")

// openRegular opens path for reading without blocking on a FIFO or a
// device, and refuses anything but a regular file.
func openRegular(path string) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openNoBlock, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w (%s)", filepath.Base(path), errNotRegular, fi.Mode().Type())
	}
	return f, fi, nil
}

// readBounded reads a regular file of at most limit bytes whole, through
// nofollow.ReadRegular (no wait on a FIFO, the last name not followed).
func readBounded(path string, limit int64) ([]byte, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	r, err := nofollow.ReadRegular(abs, limit+1, false)
	if err != nil {
		return nil, err
	}
	if int64(len(r.Data)) > limit || !r.Whole() {
		return nil, fmt.Errorf("%s: %w (%d bytes, at most %d expected)", filepath.Base(path), ErrDamaged, r.Info.Size, limit)
	}
	return r.Data, nil
}

// writeFile writes name atomically: a reader sees the whole file or none.
func writeFile(dir, name string, b []byte) error {
	_, err := writeFileFunc(dir, name, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
	return err
}

// writeFileFunc is writeFile with the content streamed by write; it
// returns the size written.
//
// Durable in the order a power cut needs: the file's data and the file
// (fsync), then its name (rename, then fsync of the directory). A caller
// that then points at the file (the pointer) writes that last, the same
// way, so a pointer that survives a crash never names a file that did not.
func writeFileFunc(dir, name string, write func(io.Writer) error) (int64, error) {
	tmp, err := os.CreateTemp(dir, "."+name+".tmp-*")
	if err != nil {
		return 0, err
	}
	werr := write(tmp)
	var size int64
	if werr == nil {
		var fi os.FileInfo
		if fi, werr = tmp.Stat(); werr == nil {
			size = fi.Size()
		}
	}
	if werr == nil {
		werr = fsync(tmp)
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), filepath.Join(dir, name))
		trace("rename", tmp.Name())
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return 0, werr
	}
	return size, syncDir(dir)
}

func fsync(f *os.File) error {
	trace("fsync", f.Name())
	return f.Sync()
}

// syncTrace, set by tests, sees each step that makes a publication durable.
var syncTrace func(op, path string)

func trace(op, path string) {
	if syncTrace != nil {
		syncTrace(op, path)
	}
}
