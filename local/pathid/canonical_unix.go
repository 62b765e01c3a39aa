//go:build !windows

package pathid

import (
	"path/filepath"
	"runtime"
)

// darwinData is where macOS keeps the writable half of the root file
// system; /Users, /Applications and others are firmlinks into it, which
// EvalSymlinks does not see.
const darwinData = "/System/Volumes/Data"

func canonical(p string) (string, error) {
	// No Clean first: EvalSymlinks resolves each symlink before the ".."
	// that follows it, as the kernel does.
	c, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", err
	}
	c = filepath.Clean(c)
	if runtime.GOOS == "darwin" {
		c = preferAlias(c, darwinData, "")
	}
	return onDiskSpelling(osFS{}, c)
}
