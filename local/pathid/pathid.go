// Package pathid is the one place where paths are canonicalised and compared.
// Discovery, sharing and deny checks, revalidation, resolve and workspace
// hints all go through it, so "is A inside B" has a single answer.
//
// It owns:
//   - Canonical: the absolute, symlink-free path as the file system spells
//     it (on-disk case and Unicode form), which is what we hand out;
//   - Rules: when two spellings are the same path (case folding and Unicode
//     normalisation per platform, Windows drive/UNC/\\?\ syntax) and
//     containment by whole segments (/code/lib does not contain
//     /code/library);
//   - FileID: device and inode (volume serial and file id on Windows), to
//     notice a root replaced behind our back and to catch aliases (bind
//     mounts, firmlinks, \\localhost\C$) that no string rule can see;
//   - home and file-system root detection (no project may sit there, R8).
//
// The package-level functions use DefaultRules, the rules of the running
// platform. Comparisons are only as good as their inputs: canonicalise
// first, then compare.
//
// It only answers questions about paths: it looks at directory listings and
// file identities, never at a file's contents; it never creates, moves or
// removes anything, and never decides what is shared or denied (package
// catalog asks it). Nothing else in cgcat compares two paths by their
// strings.
package pathid

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
)

// ErrNotAbsolute is returned for a path that is not absolute.
var ErrNotAbsolute = errors.New("path is not absolute")

// Canonical returns the cleaned, symlink-resolved, absolute form of p as the
// file system spells it: each name as its directory lists it, so a root
// configured as /Users/me/Code/café comes back as /Users/me/code/café in
// whatever case and Unicode form is on disk. p must already be absolute and
// must exist. ".." is taken after the symlink before it, as the kernel does
// (/a/link/.. is the parent of link's target), except on Windows, where
// Win32 removes ".." lexically before the file system sees the path. On
// Windows junctions are resolved too and the result has no \\?\ prefix.
//
// Cost: one lstat per segment, plus up to four more per segment that has
// case or Unicode variants, plus a directory read per segment that lives in
// a case- or normalisation-insensitive directory (every lettered segment on
// macOS and Windows fallbacks). Fine for roots and the few projects
// re-checked per answer; not meant for every directory of a walk, whose
// names already come from listings.
func Canonical(p string) (string, error) {
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("%q: %w", p, ErrNotAbsolute)
	}
	return canonical(p)
}

// Key is the form of p used for comparisons under DefaultRules. It is an
// opaque key, never a path to hand out. Keys are persisted (the store
// indexes roots by them), so changing Rules or the folding is a format
// change. On Linux a key is filepath.Clean(p).
func Key(p string) string { return DefaultRules.Key(p) }

// Within reports whether p is root or lies below root, by whole segments,
// under DefaultRules. Both should be canonical; relative paths are never
// within anything.
func Within(root, p string) bool { return DefaultRules.Within(root, p) }

// MayBeWithin is Within widened to every case folding and normalisation a
// file system might apply, and true when either path is relative. Use it for
// deny roots: over-hiding is safe, leaking is not.
func MayBeWithin(root, p string) bool { return DefaultRules.MayBeWithin(root, p) }

// Same reports whether a and b name the same path under DefaultRules.
func Same(a, b string) bool { return DefaultRules.Same(a, b) }

// IsFSRoot reports whether p is a file-system root ("/", "C:\",
// "\\server\share").
func IsFSRoot(p string) bool { return DefaultRules.IsFSRoot(p) }

// IsHome reports whether p is the user's home directory, as configured or
// canonicalised (a home reached through a symlink counts either way), under
// DefaultRules.
func IsHome(p string) bool { return DefaultRules.isHome(p) }

// HomeDir returns the canonical home directory.
func HomeDir() (string, error) {
	h, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return Canonical(h)
}

func (r Rules) isHome(p string) bool {
	h, err := os.UserHomeDir()
	if err != nil || h == "" || !r.IsAbs(h) {
		return false
	}
	if r.Same(h, p) {
		return true
	}
	c, ok := canonicalHome(h)
	return ok && r.Same(c, p)
}

// homeCache keeps the last home canonicalised, so that a walker asking
// IsHome per directory does not re-read the home's parents every time.
var homeCache atomic.Pointer[[2]string]

func canonicalHome(h string) (string, bool) {
	if e := homeCache.Load(); e != nil && e[0] == h {
		return e[1], true
	}
	c, err := Canonical(h)
	if err != nil {
		return "", false
	}
	homeCache.Store(&[2]string{h, c})
	return c, true
}
