//go:build unix

package view

import (
	"os"
	"syscall"
)

// openNoBlock: an open of a FIFO returns at once instead of waiting for a
// writer (the file is then refused as not regular); O_NOFOLLOW refuses a
// published name that is a symlink (cgcat never makes one).
const openNoBlock = syscall.O_NONBLOCK | syscall.O_NOFOLLOW

// syncDir makes the names in dir durable (a rename is not until then).
func syncDir(dir string) error {
	trace("fsync-dir", dir)
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
