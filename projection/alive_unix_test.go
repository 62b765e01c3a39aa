//go:build unix

package projection

import "syscall"

// alive reports whether a process still runs.
func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }
