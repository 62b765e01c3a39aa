//go:build !linux

package nofollow

import (
	"errors"

	"github.com/cgcat/cgcat/local/pathid"
)

// Times is what an open directory's own inode says about when it last
// changed (see the Linux version). Not read on this platform.
type Times struct {
	ID    pathid.ID
	Mtime int64
	Ctime int64
}

// Times is not available here: callers that cache by it must not cache.
func (d *Dir) Times() (Times, error) { return Times{}, errors.ErrUnsupported }

// FSType is not available here.
func (d *Dir) FSType() (int64, error) { return 0, errors.ErrUnsupported }
