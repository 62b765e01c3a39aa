//go:build unix

package doctor

import "golang.org/x/sys/unix"

// freeSpace warns when the data dir's disk is nearly full: a full disk
// stops discovery (answers keep coming from the catalog as it was).
func freeSpace(dir string) []Check {
	var fs unix.Statfs_t
	if err := unix.Statfs(dir, &fs); err != nil {
		return nil
	}
	free := uint64(fs.Bavail) * uint64(fs.Bsize)
	fix := "free some space on that disk, or point dataDir elsewhere; answers keep coming from the catalog as it was"
	switch {
	case free < 1<<20:
		return []Check{Failf(fix, "the data dir's disk is full (%d KiB free space left on %s): discovery cannot write the catalog", free>>10, p(dir))}
	case free < lowSpace:
		return []Check{Warnf(fix, "the data dir's disk is low on space: %d MiB free on %s; discovery stops when it is full", free>>20, p(dir))}
	}
	return []Check{Infof("%d MiB free space on the data dir's disk", free>>20)}
}
