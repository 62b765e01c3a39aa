package nofollow

import (
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// lookupFlag opens a directory that is only looked into: O_PATH needs
// search permission only, like a path lookup.
const lookupFlag = unix.O_PATH

// noOpenat2 is set once openat2 turned out to be unavailable (ENOSYS on
// kernels before 5.6; EPERM, EINVAL or E2BIG under some seccomp filters and
// sandboxes): from then on every open takes the component walk.
var noOpenat2 atomic.Bool

const resolveFlags = unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS

// maxRetries bounds retries of an interrupted or raced openat2.
const maxRetries = 16

// openPath opens the absolute, clean directory path p with flags (plus
// O_DIRECTORY and O_CLOEXEC), refusing a symlink in any component.
func openPath(p string, flags int) (int, error) {
	if !noOpenat2.Load() {
		how := unix.OpenHow{Flags: uint64(flags | unix.O_DIRECTORY | unix.O_CLOEXEC), Resolve: resolveFlags}
		for try := 0; ; try++ {
			fd, err := unix.Openat2(unix.AT_FDCWD, p, &how)
			switch err {
			case nil:
				return fd, nil
			case unix.EINTR, unix.EAGAIN:
				if try < maxRetries {
					continue
				}
				return -1, pathErr("open", p, err)
			case unix.ELOOP:
				return -1, pathErr("open", p, ErrSymlink)
			case unix.ENOSYS, unix.EINVAL, unix.E2BIG:
				noOpenat2.Store(true)
			case unix.EPERM:
				// A seccomp filter, or a real EPERM: the walk tells.
				fd, werr := walkPath(p, flags)
				if werr == nil {
					noOpenat2.Store(true)
				}
				return fd, werr
			default:
				return -1, pathErr("open", p, err)
			}
			break
		}
	}
	return walkPath(p, flags)
}

// openBeneath opens rel (already checked by names) below dirfd in one
// openat2 call with no symlink allowed in any component. ok is false when
// openat2 is unavailable and the caller must walk.
func openBeneath(dirfd int, rel string, flags int) (fd int, err error, ok bool) {
	if noOpenat2.Load() {
		return -1, nil, false
	}
	// No O_NOFOLLOW: RESOLVE_NO_SYMLINKS covers the last component too and
	// says ELOOP, where O_NOFOLLOW with O_DIRECTORY would say ENOTDIR.
	how := unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC), Resolve: resolveFlags | unix.RESOLVE_BENEATH}
	for try := 0; ; try++ {
		fd, err := unix.Openat2(dirfd, rel, &how)
		switch err {
		case nil:
			return fd, nil, true
		case unix.EINTR, unix.EAGAIN:
			// EAGAIN: a rename or mount raced the lookup; it may be retried.
			if try < maxRetries {
				continue
			}
		case unix.ELOOP:
			return -1, ErrSymlink, true
		case unix.ENOSYS, unix.EINVAL, unix.E2BIG, unix.EPERM:
			// EPERM: let the walk decide whether it was openat2 itself.
			return -1, nil, false
		}
		return -1, err, true
	}
}
