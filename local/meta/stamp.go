package meta

import (
	"encoding/binary"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cgcat/cgcat/local/nofollow"
	"github.com/zeebo/xxh3"
)

// Stamp fingerprints the files Read takes a project's metadata from: each
// manifest, README and hint file in the root (and a symlink's target: Read
// follows links inside the root), and the git files (a linked worktree's
// HEAD and its main repository's config too), by name, size, modification
// and status-change time. An unchanged stamp means Read would see the
// same files, so the metadata need not be read again; any change (an edit,
// a new README, a switched branch) changes it. It reads one directory
// listing and stats only the files that matter; 0 means no stamp to keep:
// the root could not be listed, or a file changed too recently (RacyStamp)
// for a later edit in the same clock tick to change the stamp.
func Stamp(root string) uint64 {
	// Opened as the walk opens a root (a FIFO or a symlink put in its
	// place is refused, never waited on or followed).
	d, err := nofollow.OpenDir(root)
	if err != nil {
		return 0
	}
	defer d.Close()
	var names []string
	err = d.List(func(name string, _ fs.FileMode) {
		if IsSource(name) && len(names) < MaxStampNames {
			names = append(names, name)
		}
	})
	if err != nil {
		return 0
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
	// The code that reads metadata is part of what a stamp vouches for
	// (version.go): a stamp made by other code never matches.
	h.Write(binary.LittleEndian.AppendUint64(nil, stampVersion()))
	var newest int64 // the latest modification or status change seen
	add := func(rel string, look bool) {
		h.WriteString(rel)
		if !look {
			h.Write(make([]byte, stampLen))
			return
		}
		p := rel
		if !filepath.IsAbs(p) {
			p = filepath.Join(root, rel)
		}
		fi, err := os.Lstat(p)
		h.Write(stampOf(fi, err))
		if err == nil && !fi.IsDir() {
			newest = max(newest, fi.ModTime().UnixNano(), changeTime(fi))
		}
		if err == nil && fi.Mode()&os.ModeSymlink != 0 {
			// Read follows a link that stays in the root (README.md ->
			// docs/README.md): an edit of its target is an edit. A link
			// out of the root is not followed (Read refuses it, and a
			// stat there could hang on a dead mount).
			if to, err := os.Readlink(p); err == nil && !filepath.IsAbs(to) {
				if t := filepath.Join(filepath.Dir(p), to); strings.HasPrefix(t, filepath.Clean(root)+string(filepath.Separator)) {
					h.Write(stampOf(os.Stat(t)))
				}
			}
		}
	}
	for _, n := range names {
		add(n, true)
	}
	hasGit, hasHint := slices.Contains(names, ".git"), slices.Contains(names, "codegraph")
	add(hintPath, hasHint)
	add(".git/HEAD", hasGit)
	add(".git/config", hasGit)
	if hasGit {
		// A linked worktree (.git is a file naming its git directory):
		// Read takes HEAD from that directory and the config from the
		// main repository's (commondir), so those are what can change.
		if gitDir := worktreeGitDir(root); gitDir != "" {
			add(filepath.Join(gitDir, "HEAD"), true)
			add(filepath.Join(gitDir, "commondir"), true)
			if b, ok := readSmall(filepath.Join(gitDir, "commondir")); ok {
				c := strings.TrimSpace(firstLine(b))
				if c != "" && !filepath.IsAbs(c) {
					c = filepath.Join(gitDir, c)
				}
				if c != "" {
					add(filepath.Join(c, "config"), true)
				}
			}
		}
	}
	if time.Now().UnixNano()-newest < RacyStamp.Nanoseconds() {
		// A file changed within the file system's clock tick of now: an
		// edit later in the same tick that keeps the size would leave
		// every part of the stamp as it is. Such a stamp is not kept, so
		// the next pass reads the metadata again (git's racy-index rule).
		return 0
	}
	if sum := h.Sum64(); sum != 0 {
		return sum
	}
	return 1
}

// stampVersion is Derivation (tests stand in another).
var stampVersion = Derivation

// RacyStamp is how recent a change makes a stamp untrustworthy: longer
// than any local file system's timestamp tick (ext4's follows the kernel's
// coarse clock, a few milliseconds; FAT's is two seconds). Tests may
// shorten it.
var RacyStamp = 2 * time.Second

// stampLen is the size of one file's part of a stamp.
const stampLen = 8 + 8 + 8 + 4

// stampOf is one file's part of a stamp: size, modification time,
// status-change time (which nothing can set back: an edit that keeps the
// size and puts the mtime back, as touch -r, cp -p and rsync -t do, still
// moves it) and mode; a directory by its kind only (its times move with
// every file in it: .git does on each git command); zeros when missing.
func stampOf(fi os.FileInfo, err error) []byte {
	b := make([]byte, stampLen)
	switch {
	case err != nil:
	case fi.IsDir():
		b[24] = 1
	default:
		binary.LittleEndian.PutUint64(b[0:], uint64(fi.Size()))
		binary.LittleEndian.PutUint64(b[8:], uint64(fi.ModTime().UnixNano()))
		binary.LittleEndian.PutUint64(b[16:], uint64(changeTime(fi)))
		binary.LittleEndian.PutUint32(b[24:], uint32(fi.Mode()))
	}
	return b
}

// worktreeGitDir is the git directory a .git file in root names (a linked
// worktree, a submodule), absolute; "" when .git is not such a file.
func worktreeGitDir(root string) string {
	p := filepath.Join(root, ".git")
	if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	b, ok := readSmall(p)
	if !ok {
		return ""
	}
	d := gitdirLine(b)
	if d != "" && !filepath.IsAbs(d) {
		d = filepath.Join(root, d)
	}
	return d
}

// readSmall reads the start of a small file (a .git or commondir file). A
// project owns these files, so they may be anything: a FIFO (whose plain
// open would wait for ever for a writer), a device, a symlink. The open
// never waits, the last name is not followed, and only a regular file is
// read, at most smallFile bytes.
func readSmall(p string) ([]byte, bool) {
	r, err := nofollow.ReadRegular(p, smallFile, false)
	if err != nil {
		return nil, false
	}
	return r.Data, len(r.Data) > 0
}

// smallFile bounds readSmall: a .git file or commondir is one line.
const smallFile = 4096

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
