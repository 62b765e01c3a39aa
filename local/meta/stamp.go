package meta

import (
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/zeebo/xxh3"
)

// Stamp fingerprints the files Read takes a project's metadata from: each
// manifest, README and hint file in the root, and the git files, by name,
// size and modification time. An unchanged stamp means Read would see the
// same files, so the metadata need not be read again; any change (an edit,
// a new README, a switched branch) changes it. It reads one directory
// listing and stats only the files that matter; 0 means the root could not
// be listed.
func Stamp(root string) uint64 {
	d, err := os.Open(root)
	if err != nil {
		return 0
	}
	defer d.Close()
	var names []string
	for len(names) < MaxStampNames {
		batch, err := d.ReadDir(256)
		for _, e := range batch {
			if IsSource(e.Name()) && len(names) < MaxStampNames {
				names = append(names, e.Name())
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0
		}
	}
	return StampNames(root, names)
}

// MaxStampNames bounds the names a stamp covers: the first this many
// entries (in listing order) that IsSource accepts.
const MaxStampNames = maxEntries

// StampNames is Stamp for a root whose listing the caller already has:
// names are the root's entries that IsSource accepts (in any order), the
// first MaxStampNames of them in listing order. Given
// the listing Stamp would read, it returns what Stamp returns. The git files and the hint file are looked at only
// when the listing holds .git or codegraph (a name that is not there
// stamps as missing, as Stamp's look would).
func StampNames(root string, names []string) uint64 {
	names = slices.Clone(names)
	slices.Sort(names)
	h := xxh3.New()
	add := func(rel string, look bool) {
		var b [8 + 8 + 4]byte
		if look {
			fi, err := os.Lstat(filepath.Join(root, rel))
			// A directory's own time moves with every file in it (.git
			// does on each git command): only its kind counts.
			if err == nil && fi.IsDir() {
				b[16] = 1
			} else if err == nil {
				binary.LittleEndian.PutUint64(b[0:], uint64(fi.Size()))
				binary.LittleEndian.PutUint64(b[8:], uint64(fi.ModTime().UnixNano()))
				binary.LittleEndian.PutUint32(b[16:], uint32(fi.Mode()))
			}
		}
		h.WriteString(rel)
		h.Write(b[:])
	}
	for _, n := range names {
		add(n, true)
	}
	hasGit, hasHint := slices.Contains(names, ".git"), slices.Contains(names, "codegraph")
	add(hintPath, hasHint)
	add(".git/HEAD", hasGit)
	add(".git/config", hasGit)
	if sum := h.Sum64(); sum != 0 {
		return sum
	}
	return 1
}

// IsSource reports whether a root entry is one Read may take metadata from
// (and so one Stamp fingerprints).
func IsSource(name string) bool {
	return isSource(name)
}

// isSource reports whether a root entry is one Read may take metadata from.
func isSource(name string) bool {
	if name == ".git" || name == "codegraph" {
		return true
	}
	for _, k := range kinds {
		if k.file == name || k.match != nil && k.match(name) {
			return true
		}
	}
	lower := strings.ToLower(name)
	if strings.HasPrefix(lower, "build.gradle") || strings.HasPrefix(lower, "settings.gradle") {
		return true
	}
	return slices.Contains(readmeNames, lower)
}
