package marker

import (
	"errors"
	"io/fs"

	"github.com/cgcat/cgcat/local/nofollow"
)

// Offline reports whether a discovery root looks like a volume that is not
// there: the root is absent (a disk unplugged, a network share not
// mounted), or an empty directory (the bare mount point of a volume that
// is not mounted). Projects under such a root are inaccessible, not
// missing: nothing says they were deleted (seed 000 section 5 keeps an
// offline volume apart from a deletion). A root that is there with
// anything in it is not offline, nor is one that cannot be read (that is
// permission, said apart).
func Offline(root string) (why string, offline bool) {
	if root == "" {
		return "", false
	}
	// Opened with no symlink in its path: a root swapped for a symlink is
	// not offline (the walk says what it is), and nothing behind it is read.
	d, err := nofollow.OpenDir(root)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && !nofollow.IsSymlink(err) {
			return "its discovery root " + root + " is not there (an offline volume?)", true
		}
		return "", false
	}
	defer d.Close()
	empty := true
	if err := d.List(func(string, fs.FileMode) { empty = false }); err != nil || !empty {
		return "", false
	}
	return "its discovery root " + root + " is empty (a volume not mounted there?)", true
}
