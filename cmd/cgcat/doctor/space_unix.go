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
	if free < lowSpace {
		return []Check{Warnf("free some space on that disk, or point dataDir elsewhere", "only %d KiB free on the data dir's disk (%s): discovery stops when it is full", free>>10, p(dir))}
	}
	return []Check{Infof("%d MiB free on the data dir's disk", free>>20)}
}
