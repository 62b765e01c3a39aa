//go:build !linux

package pathid

import "io/fs"

// Elsewhere every name is probed (the memo would need the platform's
// change time).
func stampOf(fs.FileInfo) (dirStamp, bool) { return dirStamp{}, false }
