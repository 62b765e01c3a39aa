//go:build unix

package nofollow

import "golang.org/x/sys/unix"

// openRegular opens p for ReadRegular: never waiting for a FIFO's writer,
// never taking a terminal, the last name not followed unless follow.
func openRegular(p string, follow bool) (*File, error) {
	flags := unix.O_RDONLY | unix.O_NONBLOCK | unix.O_NOCTTY | unix.O_CLOEXEC
	if !follow {
		flags |= unix.O_NOFOLLOW
	}
	for {
		fd, err := unix.Open(p, flags, 0)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.ELOOP && !follow:
			return nil, pathErr("open", p, ErrSymlink)
		case err != nil:
			return nil, pathErr("open", p, err)
		}
		return &File{fd: fd, name: p}, nil
	}
}
