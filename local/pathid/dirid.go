package pathid

import (
	"fmt"

	"github.com/zeebo/xxh3"
)

// DirID is a directory's identity for remembering it over time: its device
// and inode (a Windows file id) and, where the file system records it, its
// birth time. Inode numbers are reused as soon as a directory is deleted;
// with the birth time, a directory made later in the same inode is not
// mistaken for the one remembered. Two spellings of one directory (a bind
// mount, a symlinked parent, a junction) give the same DirID.
func DirID(p string) (string, error) { return dirID(p) }

// DirKey is DirID folded to 16 hex digits: what records keep for each
// directory on the way to their root (small, and compared only for
// equality).
func DirKey(p string) (string, error) {
	id, err := DirID(p)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%016x", xxh3.HashString(id)), nil
}
