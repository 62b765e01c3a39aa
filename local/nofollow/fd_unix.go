//go:build unix

package nofollow

// Fd is the directory's open descriptor, for a caller that must name
// exactly this directory to the kernel (an inotify watch added through
// /proc/self/fd/N watches the directory that was opened, not whatever its
// path names a moment later). It stays owned by d: never close it.
func (d *Dir) Fd() int { return d.fd }
