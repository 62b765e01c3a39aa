//go:build !unix

package nofollow

import (
	"io/fs"
	"os"
)

// openRegular opens p for ReadRegular. Without FIFOs that block an open,
// a path check before the open is enough here; the type is checked again
// on the opened file.
func openRegular(p string, follow bool) (*File, error) {
	if !follow {
		fi, err := os.Lstat(p)
		if err != nil {
			return nil, err
		}
		if fi.Mode()&(fs.ModeSymlink|fs.ModeIrregular) != 0 {
			return nil, pathErr("open", p, ErrSymlink)
		}
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	return &File{f: f}, nil
}
