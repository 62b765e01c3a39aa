// Package nofollow opens directories and files so that no symlink is ever
// followed: a directory is opened by its absolute path only if no component
// of that path is a symlink, and everything below it is reached relative to
// the opened directory, one name at a time, each refused if it is a
// symlink. A directory swapped for a symlink between two system calls (or
// between two scan slices) therefore cannot lead a caller anywhere else: the
// open fails instead.
//
// It owns only that mechanism; what to do about a refusal (a gap, a
// problem, a missing project) is the caller's decision. It never follows a
// symlink, never resolves one (callers that allow links inside a tree read
// them with Readlink and decide), and never writes.
//
// Platforms:
//   - Linux: openat2 with RESOLVE_NO_SYMLINKS and RESOLVE_NO_MAGICLINKS (one
//     system call per path); where openat2 is unavailable (kernels before
//     5.6, ENOSYS, or a seccomp filter's EPERM) a walk from "/" that opens
//     each component with openat(O_NOFOLLOW|O_DIRECTORY) relative to the
//     previous one (O_PATH for the ancestors, so only search permission is
//     needed, as for a path lookup). Listing is getdents64 on the opened
//     descriptor.
//   - macOS: open with O_NOFOLLOW_ANY (macOS 11 and later; Go needs 12), with
//     the same component walk as a fallback.
//   - other Unixes: the component walk.
//   - Windows and other platforms: best effort, by path: every component is
//     Lstat-ed and refused if it is a symlink, junction or other reparse
//     point, then opened by path. A swap between that check and the open is
//     not caught there; identities come from pathid.FileID.
//
// Identity (device and inode, Windows volume serial and file id) is read
// from the opened descriptor (fstat), so it is the identity of the
// directory actually opened, not of whatever the path names a moment later.
package nofollow

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/cgcat/cgcat/local/pathid"
)

// ErrSymlink is the error (inside an *fs.PathError) when a component of a
// path is a symlink, a junction or another reparse point.
var ErrSymlink = errors.New("a symlink stands in the path; it is not followed")

// IsSymlink reports whether err says a symlink was refused.
func IsSymlink(err error) bool { return errors.Is(err, ErrSymlink) }

// Info is what Lstat and File.Stat report.
type Info struct {
	Mode fs.FileMode // type bits and permissions
	Size int64
	ID   pathid.ID // zero where the platform gives none for this call
	// Mtime and Ctime are the modification and status-change times in
	// nanoseconds since the epoch; zero where the platform gives none
	// (they are read on Linux only).
	Mtime, Ctime int64
}

// IsDir reports a directory.
func (i Info) IsDir() bool { return i.Mode.IsDir() }

// IsRegular reports a regular file.
func (i Info) IsRegular() bool { return i.Mode.IsRegular() }

// IsSymlink reports a symlink (on Windows: any reparse point, junctions
// included).
func (i Info) IsSymlink() bool { return i.Mode&fs.ModeSymlink != 0 }

// names splits a relative, slash-separated path into its names. It refuses
// absolute paths and "", "." and ".." components: a relative path given to
// a Dir must stay below it by construction.
func names(rel string) ([]string, error) {
	if rel == "" || strings.HasPrefix(rel, "/") || filepath.IsAbs(rel) || filepath.VolumeName(rel) != "" {
		return nil, errBadName
	}
	parts := strings.Split(rel, "/")
	for _, p := range parts {
		if p == "" || p == "." || p == ".." || strings.ContainsRune(p, filepath.Separator) {
			return nil, errBadName
		}
	}
	return parts, nil
}

var (
	errBadName  = errors.New("not a plain relative path below the directory")
	errNotBelow = errors.New("not below the given top directory")
)

// oneName reports whether name is a single entry name.
func oneName(name string) bool {
	parts, err := names(name)
	return err == nil && len(parts) == 1
}

// cleanAbs checks that p is absolute and returns it cleaned (without
// allocating when it already is).
func cleanAbs(p string) (string, error) {
	if !filepath.IsAbs(p) {
		return "", pathErr("open", p, pathid.ErrNotAbsolute)
	}
	return filepath.Clean(p), nil
}

// splitAbs checks that p is absolute and returns it cleaned with its
// volume (or "/") and the names below it.
func splitAbs(p string) (clean, vol string, parts []string, err error) {
	if !filepath.IsAbs(p) {
		return "", "", nil, pathid.ErrNotAbsolute
	}
	clean = filepath.Clean(p)
	vol = filepath.VolumeName(clean)
	rest := strings.TrimLeft(clean[len(vol):], `/\`)
	vol += string(filepath.Separator)
	if rest == "" {
		return clean, vol, nil, nil
	}
	return clean, vol, strings.Split(rest, string(filepath.Separator)), nil
}

// below returns the names of p below top, both cleaned absolute paths, by
// whole segments and exact spelling; ok is false when p is not top or below
// it.
func below(top, p string) (parts []string, ok bool) {
	if p == top {
		return nil, true
	}
	prefix := top
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	rest, ok := strings.CutPrefix(p, prefix)
	if !ok || rest == "" {
		return nil, false
	}
	return strings.Split(rest, string(filepath.Separator)), true
}

func pathErr(op, path string, err error) error {
	return &fs.PathError{Op: op, Path: path, Err: err}
}

// join appends a relative slash path to a directory path for messages and
// Path().
func join(dir, rel string) string { return filepath.Join(dir, filepath.FromSlash(rel)) }
