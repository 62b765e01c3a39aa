package scan

import (
	"errors"
	"io/fs"
	"syscall"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/nofollow"
)

// openGap is the gap (or nil) for a directory of the walk that could not be
// opened. One that is now a symlink (or no directory at all) was swapped or
// replaced since it was queued: below a root it is nothing to cover, like a
// directory that vanished, and it is never followed; a discovery root that
// became one is a gap.
func openGap(it item, err error) *Gap {
	switch {
	case it.Depth == 0 && errors.Is(err, fs.ErrNotExist):
		return &Gap{Path: it.Path, Kind: local.GapOffline, Why: "discovery root is not reachable (an offline volume, or removed?)"}
	case nofollow.IsSymlink(err) || errors.Is(err, syscall.ENOTDIR):
		if it.Depth == 0 {
			return &Gap{Path: it.Path, Kind: local.GapUnreadable, Why: "a symlink (or a file) now stands in the discovery root's path; it is not followed"}
		}
		return nil
	}
	return gapFor(it.Path, err)
}
