// Package pathid is the one place where paths are canonicalised and compared.
// Discovery, sharing and deny checks, revalidation, resolve and workspace
// hints all go through it, so "is A inside B" has a single answer.
//
// Comparison is by whole path segments: /code/lib does not contain
// /code/library.
package pathid

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrNotAbsolute is returned for a path that is not absolute.
var ErrNotAbsolute = errors.New("path is not absolute")

// Canonical returns the cleaned, symlink-resolved, absolute form of p as the
// file system spells it. p must already be absolute.
func Canonical(p string) (string, error) {
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("%q: %w", p, ErrNotAbsolute)
	}
	c, err := filepath.EvalSymlinks(filepath.Clean(p))
	if err != nil {
		return "", err
	}
	return filepath.Clean(c), nil
}

// Key is the form of p used for comparisons.
func Key(p string) string {
	return filepath.Clean(p)
}

// Within reports whether p is root or lies below root, by whole segments.
// Both must be canonical.
func Within(root, p string) bool {
	r, q := Key(root), Key(p)
	if r == q {
		return true
	}
	if !strings.HasSuffix(r, string(filepath.Separator)) {
		r += string(filepath.Separator)
	}
	return strings.HasPrefix(q, r)
}

// Same reports whether a and b name the same path for comparison purposes.
func Same(a, b string) bool { return Key(a) == Key(b) }

// IsHome reports whether p is the user's home directory.
func IsHome(p string) bool {
	h, err := os.UserHomeDir()
	if err != nil || h == "" {
		return false
	}
	if c, err := filepath.EvalSymlinks(h); err == nil {
		h = c
	}
	return Same(h, p)
}

// IsFSRoot reports whether p is a file-system root ("/", "C:\").
func IsFSRoot(p string) bool {
	c := filepath.Clean(p)
	return filepath.Dir(c) == c
}
