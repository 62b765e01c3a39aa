package pathid

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// ID identifies a file on this machine: device and inode on Unix, volume
// serial number and file id on Windows. A root whose ID changed was
// replaced (or its volume remounted: some file systems renumber devices
// across mounts). An equal ID is strong evidence, not proof: inodes are
// reused after deletion. Some file systems (FAT, a few FUSE ones) report
// unstable numbers, so IDs back up the path rules; they never replace them.
type ID struct {
	Dev   uint64 // st_dev; Windows: volume serial number
	Ino   uint64 // st_ino; Windows: file id (low 64 bits)
	InoHi uint64 // Windows ReFS: high 64 bits of the 128-bit file id
}

// FileID returns the ID of the file or directory at p, following symlinks.
func FileID(p string) (ID, error) { return fileID(p) }

// IsZero reports whether id is unset.
func (id ID) IsZero() bool { return id == ID{} }

// String is a stable text form, for storing: "dev:ino" or "dev:inohi:ino"
// in hex.
func (id ID) String() string {
	if id.InoHi != 0 {
		return fmt.Sprintf("%x:%x:%x", id.Dev, id.InoHi, id.Ino)
	}
	return fmt.Sprintf("%x:%x", id.Dev, id.Ino)
}

// ParseID reads the String form back.
func ParseID(s string) (ID, error) {
	parts := strings.Split(s, ":")
	if len(parts) != 2 && len(parts) != 3 {
		return ID{}, fmt.Errorf("file id %q: want dev:ino", s)
	}
	var v [3]uint64
	for i, p := range parts {
		n, err := strconv.ParseUint(p, 16, 64)
		if err != nil {
			return ID{}, fmt.Errorf("file id %q: %w", s, err)
		}
		v[i] = n
	}
	if len(parts) == 3 {
		return ID{Dev: v[0], InoHi: v[1], Ino: v[2]}, nil
	}
	return ID{Dev: v[0], Ino: v[1]}, nil
}

// UnderAnyID reports whether p, or one of its ancestors up to the volume
// root, has one of the IDs in roots. It sees aliases the path rules cannot
// (bind mounts, macOS firmlinks, \\localhost\C$, 8.3 names), so deny checks
// can use it as a second opinion after MayBeWithin. Zero IDs never match.
// An ancestor that cannot be stat-ed stops the walk with its error.
func UnderAnyID(p string, roots []ID) (bool, error) {
	want := make(map[ID]bool, len(roots))
	for _, id := range roots {
		if !id.IsZero() {
			want[id] = true
		}
	}
	if len(want) == 0 {
		return false, nil
	}
	if !filepath.IsAbs(p) {
		return false, fmt.Errorf("%q: %w", p, ErrNotAbsolute)
	}
	for d := filepath.Clean(p); ; {
		id, err := FileID(d)
		if err != nil {
			return false, err
		}
		if want[id] {
			return true, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return false, nil
		}
		d = parent
	}
}
