package nofollow

import (
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// lookupFlag opens a directory that is only looked into: O_SEARCH needs
// search permission only, like a path lookup.
const lookupFlag = unix.O_SEARCH

// noFollowAny is set once O_NOFOLLOW_ANY turned out to be unknown (before
// macOS 11): from then on every open takes the component walk.
var noFollowAny atomic.Bool

// openPath opens the absolute, clean directory path p with flags (plus
// O_DIRECTORY and O_CLOEXEC), refusing a symlink in any component.
func openPath(p string, flags int) (int, error) {
	if !noFollowAny.Load() {
		fd, err := openAt(unix.AT_FDCWD, p, flags|unix.O_DIRECTORY|unix.O_NOFOLLOW_ANY)
		switch err {
		case nil:
			return fd, nil
		case unix.ELOOP:
			return -1, pathErr("open", p, ErrSymlink)
		case unix.ENOTDIR:
			// A file, or a symlink refused by O_DIRECTORY first: the walk
			// tells which.
			return walkPath(p, flags)
		case unix.EINVAL:
			noFollowAny.Store(true)
		default:
			return -1, pathErr("open", p, err)
		}
	}
	return walkPath(p, flags)
}

// openBeneath opens rel below dirfd in one call with O_NOFOLLOW_ANY.
func openBeneath(dirfd int, rel string, flags int) (fd int, err error, ok bool) {
	if noFollowAny.Load() {
		return -1, nil, false
	}
	fd, err = openAt(dirfd, rel, flags|unix.O_NOFOLLOW_ANY)
	switch err {
	case nil:
		return fd, nil, true
	case unix.ELOOP:
		return -1, ErrSymlink, true
	case unix.EINVAL, unix.ENOTDIR:
		// ENOTDIR: a file or a symlink; the walk tells which.
		return -1, nil, false
	}
	return -1, err, true
}
