//go:build !unix

package view

import (
	"io"
	"os"
)

// mapFile reads the whole file: where mapping is not done (Windows), a
// process keeps its own copy, and the file can be removed or replaced while
// it is in use.
func mapFile(f *os.File, size int) (data []byte, release func(), err error) {
	// []uint64 backing: the frozen index needs 8-byte alignment.
	w := make([]uint64, (size+7)/8)
	data = unsafeBytes(w, size)
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, nil, err
	}
	return data, func() {}, nil
}

func dropResident([]byte) {}
