//go:build !linux && !darwin

package catalog

import "os"

// look without inode numbers: size, times and mode only (a replaced root
// with identical times and size is checked in full after recheckTTL).
func look(fi os.FileInfo) fileLook {
	return fileLook{size: fi.Size(), mod: fi.ModTime().UnixNano(), mode: fi.Mode().Type()}
}
