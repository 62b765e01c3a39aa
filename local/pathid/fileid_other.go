//go:build !unix && !windows

package pathid

import (
	"errors"
	"io/fs"
)

func fileID(p string) (ID, error) {
	return ID{}, &fs.PathError{Op: "fileid", Path: p, Err: errors.ErrUnsupported}
}

// IDOf reports false: this platform has no file ids we know how to read.
func IDOf(fs.FileInfo) (ID, bool) { return ID{}, false }
