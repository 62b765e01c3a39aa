package pathid

import (
	"path"
	"runtime"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Syntax is how a platform spells paths.
type Syntax uint8

const (
	// UnixSyntax: "/" is the only separator and "/" the only root.
	UnixSyntax Syntax = iota
	// WindowsSyntax: "\" and "/" separate; roots are drive letters ("C:\"),
	// UNC shares ("\\server\share") and \\?\ or \\.\ device paths.
	WindowsSyntax
)

// Rules say when two spellings name the same path. They are pure string
// logic (no path/filepath, which follows the build's GOOS), so every
// platform's rules can be tested anywhere.
type Rules struct {
	Syntax Syntax
	// FoldCase compares names case-insensitively (simple Unicode case
	// folding, as NTFS and APFS/HFS+ in their default modes do).
	FoldCase bool
	// NormalizeNFC compares names after Unicode normalisation, because
	// macOS file systems treat NFC and NFD spellings as one name.
	NormalizeNFC bool
}

// The rules of the platforms we ship for. Linux (and other Unixes) compare
// exact bytes: ext4, xfs and btrfs are case- and normalisation-sensitive.
// Case-insensitive directories there (ext4 casefold, vfat, ntfs3) are
// handled by Canonical returning the listed spelling, and by MayBeWithin.
var (
	LinuxRules   = Rules{Syntax: UnixSyntax}
	DarwinRules  = Rules{Syntax: UnixSyntax, FoldCase: true, NormalizeNFC: true}
	WindowsRules = Rules{Syntax: WindowsSyntax, FoldCase: true}
)

// DefaultRules are the rules of the running platform; the package-level
// functions use them. Tests may swap them; nothing else should.
var DefaultRules = RulesFor(runtime.GOOS)

// RulesFor returns the rules for a GOOS value.
func RulesFor(goos string) Rules {
	switch goos {
	case "darwin", "ios":
		return DarwinRules
	case "windows":
		return WindowsRules
	default:
		return LinuxRules
	}
}

// Loose returns r with case folding and normalisation switched on: the
// widest notion of "same name" any supported file system uses.
func (r Rules) Loose() Rules {
	return Rules{Syntax: r.Syntax, FoldCase: true, NormalizeNFC: true}
}

// IsAbs reports whether p is absolute under r's syntax. On Windows, "C:x"
// and "\x" are not absolute (they depend on the current drive/directory),
// nor is a UNC path without a share.
func (r Rules) IsAbs(p string) bool {
	if r.Syntax == WindowsSyntax {
		_, abs, _ := winParse(p)
		return abs
	}
	return strings.HasPrefix(p, "/")
}

// Key is an opaque comparison key for p: cleaned (repeated and trailing
// separators, "." and ".." removed lexically), volume names upper-cased on
// Windows, and names folded and normalised as r says. Two paths are the
// same under r exactly when their keys are equal. A key is never a path to
// hand out.
func (r Rules) Key(p string) string {
	if r.Syntax == WindowsSyntax {
		return r.winKey(p)
	}
	// path.Clean is pure "/" logic; separators survive folding and
	// normalisation unchanged, so the whole string can be transformed.
	return r.name(path.Clean(p))
}

// Same reports whether a and b name the same path under r.
func (r Rules) Same(a, b string) bool { return r.Key(a) == r.Key(b) }

// Within reports whether p is root or lies below root, by whole segments
// (/code/lib does not contain /code/library; \\srv\share does not contain
// \\srv\share2). Both must be absolute; otherwise the answer is false.
// Inputs should be canonical (see Canonical): ".." is resolved lexically.
func (r Rules) Within(root, p string) bool {
	if !r.IsAbs(root) || !r.IsAbs(p) {
		return false
	}
	return keyWithin(r.Key(root), r.Key(p), r.sep())
}

// MayBeWithin reports whether p is, or on some case- or
// normalisation-insensitive file system could be, root or below it. Use it
// for deny roots, where a false "inside" only hides a project and a false
// "outside" leaks one. A relative root or p cannot be judged and counts as
// inside.
func (r Rules) MayBeWithin(root, p string) bool {
	if !r.IsAbs(root) || !r.IsAbs(p) {
		return true
	}
	l := r.Loose()
	return keyWithin(l.Key(root), l.Key(p), r.sep())
}

// IsFSRoot reports whether p is a volume root: "/", "C:\", "\\srv\share".
func (r Rules) IsFSRoot(p string) bool {
	if r.Syntax == WindowsSyntax {
		_, abs, segs := winParse(p)
		return abs && len(segs) == 0
	}
	return path.Clean(p) == "/"
}

func (r Rules) sep() byte {
	if r.Syntax == WindowsSyntax {
		return '\\'
	}
	return '/'
}

// keyWithin is segment containment on two keys of absolute paths. Volume
// root keys end in the separator; all others do not.
func keyWithin(kr, kp string, sep byte) bool {
	if kr == kp {
		return true
	}
	if !strings.HasPrefix(kp, kr) {
		return false
	}
	return kr[len(kr)-1] == sep || kp[len(kr)] == sep
}

// name applies r's folding and normalisation to a name (or to a whole
// path: separators pass through unchanged).
func (r Rules) name(s string) string {
	switch {
	case r.FoldCase && r.NormalizeNFC:
		// Fold the decomposed form so that a cased base letter folds the
		// same whether or not its accent was precomposed.
		return normalize(norm.NFC, foldString(normalize(norm.NFD, s)))
	case r.FoldCase:
		return foldString(s)
	case r.NormalizeNFC:
		return normalize(norm.NFC, s)
	}
	return s
}

// normalize applies f to each run of valid UTF-8 in s and keeps invalid
// bytes as they are. Linux names may hold any bytes, and norm does not
// treat text after an invalid byte consistently (its result for "x\xf2\u0344"
// changes when "/y" is appended), which would break segment containment.
func normalize(f norm.Form, s string) string {
	if utf8.ValidString(s) {
		return f.String(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	for len(s) > 0 {
		i := 0
		for i < len(s) {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				break
			}
			i += n
		}
		b.WriteString(f.String(s[:i]))
		if i < len(s) {
			b.WriteByte(s[i])
			i++
		}
		s = s[i:]
	}
	return b.String()
}

// foldString maps every rune to one representative of its simple case
// folding orbit, so foldString(a) == foldString(b) exactly when
// strings.EqualFold(a, b) for valid UTF-8. Invalid bytes are kept as they
// are: on Linux they are legal and distinct names.
func foldString(s string) string {
	i := 0
	for ; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf || 'a' <= c && c <= 'z' {
			break
		}
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(s[:i])
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			b.WriteByte(c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteByte(c)
		} else {
			b.WriteRune(foldRune(r))
		}
		i += n
	}
	return b.String()
}

// foldRune returns the smallest member of r's simple folding orbit that is
// not a combining mark (ASCII letters fold to upper case, as NTFS does).
// Skipping marks keeps U+0345 from standing in for the letter iota.
func foldRune(r rune) rune {
	best, bestMark := r, unicode.Is(unicode.Mn, r)
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		mark := unicode.Is(unicode.Mn, f)
		if bestMark && !mark || mark == bestMark && f < best {
			best, bestMark = f, mark
		}
	}
	return best
}
