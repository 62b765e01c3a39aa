//go:build unix

package view

import (
	"os"

	"golang.org/x/sys/unix"
)

// mapFile maps f read-only and shared: processes that map the same file
// share one copy of it in the page cache. release unmaps it. Where a file
// system cannot be mapped, the file is read instead.
func mapFile(f *os.File, size int) (data []byte, release func(), mapped bool, err error) {
	data, err = unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return readFile(f, size)
	}
	return data, func() { _ = unix.Munmap(data) }, true, nil
}

// dropResident tells the kernel this process does not need the pages of a
// file mapping it touched to check the file: they stay in the page cache for every process,
// but no longer count in this one's resident set until it reads them.
func dropResident(data []byte) { _ = unix.Madvise(data, unix.MADV_DONTNEED) }
