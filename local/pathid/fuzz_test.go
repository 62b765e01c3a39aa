package pathid

import (
	"strings"
	"testing"
)

// refSegments is the reference reading of a Unix path: split on "/", drop
// empty and "." segments, let ".." pop (never above the root), and apply
// the rules' name transform to each segment on its own.
func refSegments(r Rules, p string) (segs []string, abs bool) {
	if !strings.HasPrefix(p, "/") {
		return nil, false
	}
	for _, s := range strings.Split(p, "/") {
		switch s {
		case "", ".":
		case "..":
			if len(segs) > 0 {
				segs = segs[:len(segs)-1]
			}
		default:
			segs = append(segs, r.name(s))
		}
	}
	return segs, true
}

func refWithin(r Rules, root, p string) bool {
	rs, ra := refSegments(r, root)
	ps, pa := refSegments(r, p)
	if !ra || !pa || len(rs) > len(ps) {
		return false
	}
	for i := range rs {
		if rs[i] != ps[i] {
			return false
		}
	}
	return true
}

func fuzzRules(mode uint8) Rules {
	return Rules{Syntax: Syntax(mode >> 2 & 1), FoldCase: mode&1 != 0, NormalizeNFC: mode&2 != 0}
}

// FuzzWithin checks Within against the segment-list reference (Unix
// syntax) and, for both syntaxes, that nothing panics, that Within implies
// MayBeWithin, that mutual containment is Same, and that a root contains a
// child segment appended to it but never a sibling made by extending its
// last name.
func FuzzWithin(f *testing.F) {
	seeds := []struct {
		root, p string
	}{
		{"/code/lib", "/code/library"},
		{"/code/lib", "/code/lib/x"},
		{"/code/lib/", "/code/lib"},
		{"/", "/x"},
		{"//", "/"},
		{"/a/../b", "/b/c"},
		{"/Code/Private", "/code/private/x"},
		{"/" + cafeNFC, "/" + cafeNFD + "/x"},
		{"/\xff", "/\xfe"},
		{"/a\u0345", "/A\u03b9"},
		{`C:\x`, `c:/X/y`},
		{`\\srv\share`, `\\srv\share2`},
		{`\\?\UNC\srv\share\a`, `\\srv\share\a\b`},
		{`\\localhost\c$\a`, `C:\a\b`},
		{`C:\a.`, `C:\a\b`},
		{"/\xf2\u0344", "/\xf2\u0344/child"}, // norm is inconsistent after invalid bytes
		{`\\.\UNC`, `\\.\UNC\child`},
		{"", ""},
	}
	for _, s := range seeds {
		for mode := uint8(0); mode < 8; mode++ {
			f.Add(s.root, s.p, mode)
		}
	}
	f.Fuzz(func(t *testing.T, root, p string, mode uint8) {
		r := fuzzRules(mode)
		got := r.Within(root, p)
		sep, seps := "/", "/"
		if r.Syntax == WindowsSyntax {
			sep, seps = `\`, `\/`
		} else if want := refWithin(r, root, p); got != want {
			t.Fatalf("%+v.Within(%q, %q) = %v, reference says %v (keys %q %q)", r, root, p, got, want, r.Key(root), r.Key(p))
		}
		if got && !r.MayBeWithin(root, p) {
			t.Fatalf("%+v: Within(%q, %q) but not MayBeWithin", r, root, p)
		}
		if r.IsAbs(root) && r.IsAbs(p) && (got && r.Within(p, root)) != r.Same(root, p) {
			t.Fatalf("%+v: mutual Within(%q, %q) disagrees with Same", r, root, p)
		}
		if !r.IsAbs(root) {
			return
		}
		if !r.Within(root, root) {
			t.Fatalf("%+v: %q not within itself", r, root)
		}
		k := r.Key(root)
		if r.Syntax == UnixSyntax && r.Key(k) != k {
			t.Fatalf("%+v: Key not idempotent on %q: %q then %q", r, root, k, r.Key(k))
		}
		if !r.Within(root, strings.TrimRight(root, seps)+sep+"child") {
			t.Fatalf("%+v: %q does not contain its child", r, root)
		}
		if !r.IsFSRoot(root) && r.Within(root, strings.TrimRight(root, seps)+"x") {
			// Appending to the last name must make a sibling, unless the
			// last segment is one that cleaning drops ("..", ".", or on
			// Windows a trailing-dot form).
			if !strings.HasSuffix(strings.TrimRight(root, seps), ".") && !strings.Contains(root, ":") {
				t.Fatalf("%+v: %q contains sibling %q", r, root, strings.TrimRight(root, seps)+"x")
			}
		}
	})
}
