//go:build !unix

package view

import "os"

// mapFile reads the whole file: where mapping is not done (Windows), a
// process keeps its own copy, and the file can be removed or replaced while
// it is in use.
func mapFile(f *os.File, size int) (data []byte, release func(), mapped bool, err error) {
	return readFile(f, size)
}

func dropResident([]byte) {}
