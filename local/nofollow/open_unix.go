//go:build unix && !linux && !darwin

package nofollow

import "golang.org/x/sys/unix"

// lookupFlag: without a portable search-only open flag, ancestors are opened
// for reading (a directory we may search but not read is refused here).
const lookupFlag = unix.O_RDONLY

// openPath opens the absolute, clean directory path p with flags (plus
// O_DIRECTORY and O_CLOEXEC), refusing a symlink in any component.
func openPath(p string, flags int) (int, error) { return walkPath(p, flags) }

// openBeneath: no one-call form here; the caller walks.
func openBeneath(int, string, int) (int, error, bool) { return -1, nil, false }
