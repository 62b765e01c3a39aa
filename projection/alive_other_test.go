//go:build !unix

package projection

import "os"

// alive reports whether a process still runs (FindProcess fails for a
// process that is gone on Windows).
func alive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	_ = p.Release()
	return true
}
