//go:build !linux

package scan

import (
	"io/fs"
	"os"
)

// listDir lists a directory; the entry types come from the listing where
// the platform provides them.
func listDir(path string, fn func(name string, typ fs.FileMode)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	entries, err := f.ReadDir(-1)
	f.Close()
	for _, e := range entries {
		fn(e.Name(), e.Type())
	}
	if err != nil && len(entries) == 0 {
		return err
	}
	return nil
}
