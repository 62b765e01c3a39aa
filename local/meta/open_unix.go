//go:build unix

package meta

import "syscall"

// openFlags: O_NONBLOCK so a FIFO cannot hang the open, O_NOFOLLOW so a
// symlink put in place after resolve is refused.
const openFlags = syscall.O_NONBLOCK | syscall.O_NOFOLLOW
