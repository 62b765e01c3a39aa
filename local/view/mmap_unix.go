//go:build unix

package view

import (
	"os"

	"golang.org/x/sys/unix"
)

// mapFile maps f read-only and shared: processes that map the same file
// share one copy of it in the page cache. release unmaps it.
func mapFile(f *os.File, size int) (data []byte, release func(), err error) {
	data, err = unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return data, func() { _ = unix.Munmap(data) }, nil
}

// dropResident tells the kernel this process does not need the pages it
// touched to check the file: they stay in the page cache for every process,
// but no longer count in this one's resident set until it reads them.
func dropResident(data []byte) { _ = unix.Madvise(data, unix.MADV_DONTNEED) }
