package pathid

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// ErrNoProbe is returned by ProbeCaseInsensitive when a directory holds no
// name whose case can be swapped, so nothing can be learnt read-only.
var ErrNoProbe = errors.New("no entry to probe case sensitivity with")

// OnDiskSpelling returns p (absolute, clean, symlink-free) with each name
// spelled as its directory lists it. EvalSymlinks keeps the caller's
// spelling, so on a case- or normalisation-insensitive file system
// /users/ME/Cafe\u0301 would otherwise be handed out next to the walker's
// /Users/me/Café and compare as a different root.
//
// A name is looked up in its directory's listing only when it has a case or
// Unicode variant that the file system resolves to the same file; on a
// case-sensitive file system that costs a failed lstat or two per name. If a
// directory cannot be listed (searchable but not readable) the given
// spelling is kept.
func OnDiskSpelling(p string) (string, error) {
	return onDiskSpelling(osFS{}, p)
}

// dirFS is the part of the file system OnDiskSpelling needs; tests inject
// case-folding and NFD-listing fakes.
type dirFS interface {
	Lstat(name string) (fs.FileInfo, error)
	SameFile(a, b fs.FileInfo) bool
	// ReadDirNames calls fn for the names in dir until fn returns false.
	ReadDirNames(dir string, fn func(name string) bool) error
}

type osFS struct{}

func (osFS) Lstat(name string) (fs.FileInfo, error) { return os.Lstat(name) }
func (osFS) SameFile(a, b fs.FileInfo) bool         { return os.SameFile(a, b) }

func (osFS) ReadDirNames(dir string, fn func(string) bool) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	for {
		names, err := f.Readdirnames(256)
		for _, n := range names {
			if !fn(n) {
				return nil
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// OnDiskSpellingBelow is OnDiskSpelling for the names of p below top, an
// ancestor of p by exact spelling that the caller knows to be spelled as
// listed: top is kept as given and only the names below it are looked at.
func OnDiskSpellingBelow(top, p string) (string, error) {
	if !filepath.IsAbs(p) || !filepath.IsAbs(top) {
		return "", ErrNotAbsolute
	}
	top, p = filepath.Clean(top), filepath.Clean(p)
	rel, err := filepath.Rel(top, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.Join(top, rel) != p {
		return "", fmt.Errorf("%s is not below %s", p, top)
	}
	if rel == "." {
		return p, nil
	}
	fsys := osFS{}
	ti, err := fsys.Lstat(top)
	if err != nil {
		return "", err
	}
	return spellFrom(fsys, top, ti, rel)
}

func onDiskSpelling(fsys dirFS, p string) (string, error) {
	if !filepath.IsAbs(p) {
		return "", ErrNotAbsolute
	}
	p = filepath.Clean(p)
	vol := filepath.VolumeName(p)
	return spellFrom(fsys, vol+string(filepath.Separator), nil, p[len(vol):])
}

// spellFrom spells the names of rel below out (whose lstat is dirInfo, or
// nil), each as its directory lists it.
func spellFrom(fsys dirFS, out string, dirInfo fs.FileInfo, rel string) (string, error) {
	for _, name := range strings.Split(rel, string(filepath.Separator)) {
		if name == "" {
			continue
		}
		spelled, fi, err := spellIn(fsys, out, dirInfo, name)
		if err != nil {
			return "", err
		}
		out, dirInfo = filepath.Join(out, spelled), fi
	}
	return out, nil
}

// spellIn returns the listed spelling of name in dir (whose lstat is
// dirInfo, or nil) and name's own lstat.
func spellIn(fsys dirFS, dir string, dirInfo fs.FileInfo, name string) (string, fs.FileInfo, error) {
	full := filepath.Join(dir, name)
	fi, err := fsys.Lstat(full)
	if err != nil {
		return "", nil, err
	}
	var insensitive bool
	if known, ok := asciiFolding.known(dirInfo, name); ok {
		insensitive = known
	} else {
		for _, a := range variants(name) {
			if ai, err := fsys.Lstat(filepath.Join(dir, a)); err == nil && fsys.SameFile(ai, fi) {
				insensitive = true
				break
			}
		}
		asciiFolding.learn(dirInfo, name, insensitive)
	}
	if !insensitive {
		return name, fi, nil // only the exact spelling resolves: it is the listed one
	}
	name, err = listedSpelling(fsys, dir, name, fi)
	return name, fi, err
}

// listedSpelling finds name's spelling in dir's listing, for a directory
// that resolves other spellings to fi too.
func listedSpelling(fsys dirFS, dir, name string, fi fs.FileInfo) (string, error) {
	loose := Rules{FoldCase: true, NormalizeNFC: true}
	want := loose.name(name)
	exact := false
	var cands []string
	err := fsys.ReadDirNames(dir, func(n string) bool {
		if n == name {
			exact = true
			return false
		}
		if loose.name(n) == want {
			cands = append(cands, n)
		}
		return true
	})
	if exact || err != nil {
		return name, nil
	}
	for _, c := range cands {
		if ci, err := fsys.Lstat(filepath.Join(dir, c)); err == nil && fsys.SameFile(ci, fi) {
			return c, nil
		}
	}
	return name, nil
}

// variants returns the other spellings of name a case- or
// normalisation-insensitive file system would resolve to the same entry:
// every letter's case swapped, only ASCII letters swapped (for file systems
// that fold ASCII only), and the other Unicode normal forms.
func variants(name string) []string {
	var out []string
	add := func(s string) {
		if s == name {
			return
		}
		for _, o := range out {
			if o == s {
				return
			}
		}
		out = append(out, s)
	}
	add(swapCase(name, false))
	add(swapCase(name, true))
	if !isASCII(name) {
		add(normalize(norm.NFC, name))
		add(normalize(norm.NFD, name))
	}
	return out
}

func swapCase(s string, asciiOnly bool) string {
	return strings.Map(func(r rune) rune {
		if asciiOnly && r >= utf8.RuneSelf {
			return r
		}
		switch {
		case unicode.IsUpper(r):
			return unicode.ToLower(r)
		case unicode.IsLower(r):
			return unicode.ToUpper(r)
		}
		return r
	}, s)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// ProbeCaseInsensitive reports whether lookups in dir ignore case, by
// lstat-ing one listed entry under a case-swapped name. It reads at most
// 64 names and makes two lstats; it writes nothing. Use it to explain or
// test behaviour (ext4 casefold and vfat on Linux, case-sensitive APFS
// volumes on macOS): Canonical already adapts per name without it. It
// returns ErrNoProbe when no listed name has letters.
func ProbeCaseInsensitive(dir string) (bool, error) {
	f, err := os.Open(dir)
	if err != nil {
		return false, err
	}
	names, err := f.Readdirnames(64)
	f.Close()
	if err != nil && err != io.EOF {
		return false, err
	}
	for _, n := range names {
		s := swapCase(n, false)
		if s == n {
			continue
		}
		fi, err := os.Lstat(filepath.Join(dir, n))
		if err != nil {
			continue
		}
		si, err := os.Lstat(filepath.Join(dir, s))
		if err != nil {
			return false, nil
		}
		return os.SameFile(fi, si), nil
	}
	return false, ErrNoProbe
}

// preferAlias returns top+rest for p = data+rest when that path is the
// same directory, so /System/Volumes/Data/Users/me and /Users/me get one
// canonical form. top is "" except in tests.
func preferAlias(p, data, top string) string {
	rest, ok := strings.CutPrefix(p, data)
	if !ok || !strings.HasPrefix(rest, "/") {
		return p
	}
	a, err1 := os.Stat(p)
	b, err2 := os.Stat(top + rest)
	if err1 == nil && err2 == nil && os.SameFile(a, b) {
		return top + rest
	}
	return p
}
