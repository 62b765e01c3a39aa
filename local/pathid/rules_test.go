package pathid

import (
	"strings"
	"testing"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

var (
	exact  = Rules{}
	fold   = Rules{FoldCase: true}
	nfc    = Rules{NormalizeNFC: true}
	darwin = DarwinRules
	win    = WindowsRules
	winCS  = Rules{Syntax: WindowsSyntax} // NTFS directory with case sensitivity switched on
)

const (
	cafeNFC = "caf\u00e9"  // é precomposed
	cafeNFD = "cafe\u0301" // e + combining acute
)

func TestRulesFor(t *testing.T) {
	for goos, want := range map[string]Rules{
		"linux": LinuxRules, "freebsd": LinuxRules, "darwin": DarwinRules, "ios": DarwinRules, "windows": WindowsRules,
	} {
		if got := RulesFor(goos); got != want {
			t.Errorf("RulesFor(%q) = %+v, want %+v", goos, got, want)
		}
	}
}

func TestKeyUnix(t *testing.T) {
	tests := []struct {
		r       Rules
		in, out string
	}{
		{exact, "/", "/"},
		{exact, "//", "/"},
		{exact, "/code/lib/", "/code/lib"},
		{exact, "/code//lib///", "/code/lib"},
		{exact, "/code/./lib/.", "/code/lib"},
		{exact, "/code/x/../lib", "/code/lib"},
		{exact, "/../code", "/code"},
		{exact, "/Code/Lib", "/Code/Lib"},
		{exact, "/" + cafeNFD, "/" + cafeNFD},
		{exact, "/a\\b", "/a\\b"}, // a backslash is a name byte on Unix
		{exact, "rel/../x", "x"},
		{exact, "", "."},
		{fold, "/Code/Lib", "/CODE/LIB"},
		{fold, "/code/lib", "/CODE/LIB"},
		{fold, "/stra\u00dfe", "/STRA\u00dfE"},               // ß has no simple upper case
		{fold, "/\u212aelvin", "/KELVIN"},                    // Kelvin sign folds with k
		{fold, "/bad\xffname", "/BAD\xffNAME"},               // invalid bytes survive
		{fold, "/\u03a3\u03c3\u03c2", "/\u03a3\u03a3\u03a3"}, // all sigmas
		{nfc, "/" + cafeNFD, "/" + cafeNFC},
		{nfc, "/" + cafeNFC, "/" + cafeNFC},
		{darwin, "/Users/Me/CAFE\u0301", "/USERS/ME/CAF\u00c9"},
		{darwin, "/users/me/caf\u00e9", "/USERS/ME/CAF\u00c9"},
		{darwin, "/项目/R\u00e9sum\u00e9", "/项目/R\u00c9SUM\u00c9"},
		{darwin, "/项目/Re\u0301sume\u0301", "/项目/R\u00c9SUM\u00c9"},
	}
	for _, tt := range tests {
		if got := tt.r.Key(tt.in); got != tt.out {
			t.Errorf("%+v.Key(%q) = %q, want %q", tt.r, tt.in, got, tt.out)
		}
	}
}

func TestKeyWindows(t *testing.T) {
	tests := []struct {
		r       Rules
		in, out string
	}{
		{win, `C:\`, `C:\`},
		{win, `c:\`, `C:\`},
		{win, `c:`, `C:`},
		{win, `c:/`, `C:\`},
		{win, `C:\Users\Me\`, `C:\USERS\ME`},
		{win, `C:/Users//Me/./x/..`, `C:\USERS\ME`},
		{win, `C:\..\..\x`, `C:\X`},
		{win, `\\?\C:\Users\me`, `C:\USERS\ME`},
		{win, `\\?\c:\Users\me`, `C:\USERS\ME`},
		{win, `\\.\C:\Users\me`, `C:\USERS\ME`},
		{win, `\??\C:\Users\me`, `C:\USERS\ME`},
		{win, `//?/C:/Users/me`, `C:\USERS\ME`},
		{win, `\\server\share`, `\\SERVER\SHARE\`},
		{win, `\\Server\Share\`, `\\SERVER\SHARE\`},
		{win, `\\server\share\Dir\x`, `\\SERVER\SHARE\DIR\X`},
		{win, `//server/share/dir`, `\\SERVER\SHARE\DIR`},
		{win, `\\?\UNC\server\share\dir`, `\\SERVER\SHARE\DIR`},
		{win, `\\?\unc\server\share\dir`, `\\SERVER\SHARE\DIR`},
		{win, `\\server\share\..\..\other`, `\\SERVER\SHARE\OTHER`}, // .. never leaves the share
		{win, `\\localhost\c$\Users`, `C:\USERS`},
		{win, `\\127.0.0.1\C$\Users`, `C:\USERS`},
		{win, `\\?\UNC\localhost\c$\Users`, `C:\USERS`},
		{win, `\\?\Volume{AbC}\x`, `\\?\VOLUME{ABC}\X`},
		{win, `C:\Private.\x`, `C:\PRIVATE\X`},
		{win, `C:\Private. .`, `C:\PRIVATE`},
		{win, `\\?\C:\Private.`, `C:\PRIVATE.`}, // verbatim: the dot is part of the name
		{win, `C:\Private::$INDEX_ALLOCATION\x`, `C:\PRIVATE\X`},
		{win, `C:\...\x`, `C:\...\X`},
		{win, `C:x\y`, `C:X\Y`},
		{win, `\x\y`, `\X\Y`},
		{win, `x\..\..\y`, `..\Y`},
		{win, `C:\` + cafeNFD, `C:\CAFE` + "\u0301"}, // NTFS does not normalise
		{winCS, `c:\Users\Me`, `C:\Users\Me`},        // drive letters fold even so
		{winCS, `\\srv\shr\Me`, `\\SRV\SHR\Me`},      // and so do server and share
	}
	for _, tt := range tests {
		if got := tt.r.Key(tt.in); got != tt.out {
			t.Errorf("%+v.Key(%q) = %q, want %q", tt.r, tt.in, got, tt.out)
		}
	}
}

func TestIsAbsAndFSRoot(t *testing.T) {
	tests := []struct {
		r           Rules
		p           string
		abs, fsRoot bool
	}{
		{exact, "/", true, true},
		{exact, "//", true, true},
		{exact, "/.", true, true},
		{exact, "/..", true, true},
		{exact, "/x/..", true, true},
		{exact, "/x", true, false},
		{exact, "x", false, false},
		{exact, "", false, false},
		{exact, `C:\`, false, false},
		{win, `C:\`, true, true},
		{win, `c:/`, true, true},
		{win, `C:\x\..`, true, true},
		{win, `C:`, false, false},
		{win, `C:x`, false, false},
		{win, `\x`, false, false},
		{win, `/x`, false, false},
		{win, `\\srv`, false, false},
		{win, `\\srv\`, false, false},
		{win, `\\srv\share`, true, true},
		{win, `\\srv\share\`, true, true},
		{win, `\\srv\share\x`, true, false},
		{win, `\\?\C:\`, true, true},
		{win, `\\?\UNC\srv\share`, true, true},
		{win, `\\?\Volume{x}\`, true, true},
		{win, `\\?\`, false, false},
		{win, `x`, false, false},
	}
	for _, tt := range tests {
		if got := tt.r.IsAbs(tt.p); got != tt.abs {
			t.Errorf("%+v.IsAbs(%q) = %v, want %v", tt.r, tt.p, got, tt.abs)
		}
		if got := tt.r.IsFSRoot(tt.p); got != tt.fsRoot {
			t.Errorf("%+v.IsFSRoot(%q) = %v, want %v", tt.r, tt.p, got, tt.fsRoot)
		}
	}
}

type withinCase struct {
	root, p string
	want    bool
}

func checkWithin(t *testing.T, r Rules, cases []withinCase) {
	t.Helper()
	for _, c := range cases {
		if got := r.Within(c.root, c.p); got != c.want {
			t.Errorf("%+v.Within(%q, %q) = %v, want %v", r, c.root, c.p, got, c.want)
		}
		// Whatever Within admits, the deny check admits too.
		if c.want && !r.MayBeWithin(c.root, c.p) {
			t.Errorf("%+v.MayBeWithin(%q, %q) = false though Within holds", r, c.root, c.p)
		}
	}
}

func TestWithinSegments(t *testing.T) {
	cases := []withinCase{
		{"/code/lib", "/code/lib", true},
		{"/code/lib", "/code/lib/", true},
		{"/code/lib/", "/code/lib", true},
		{"/code/lib", "/code/lib/x/y", true},
		{"/code/lib", "/code/library", false},
		{"/code/lib", "/code/lib-2/x", false},
		{"/code/lib", "/code/li", false},
		{"/code/lib", "/code", false},
		{"/code/lib", "/", false},
		{"/", "/anything/at/all", true},
		{"/", "/", true},
		{"//", "/x", true},
		{"/code/lib", "/code/lib/../library", false},
		{"/code/lib", "/code/library/../lib/x", true},
		{"/code/lib", "code/lib/x", false}, // relative: never within
		{"code/lib", "code/lib/x", false},
		{"/code/lib", "/code/Lib/x", false}, // exact bytes on Linux
	}
	checkWithin(t, exact, cases)
}

func TestWithinWindows(t *testing.T) {
	checkWithin(t, win, []withinCase{
		{`C:\`, `C:\x`, true},
		{`C:\`, `c:\x\y`, true},
		{`C:\`, `D:\x`, false},
		{`C:\code\lib`, `C:\code\library`, false},
		{`C:\code\lib`, `c:/CODE/lib/x`, true},
		{`\\srv\share`, `\\srv\share\x`, true},
		{`\\srv\share`, `\\SRV\Share`, true},
		{`\\srv\share`, `\\srv\share2\x`, false},
		{`\\srv\share`, `\\srv\share2`, false},
		{`\\srv\share`, `\\srv2\share\x`, false},
		{`\\srv\share\a`, `\\srv\share\ab`, false},
		{`\\srv`, `\\srv\share\x`, false}, // no share: not a root at all
		{`C:\x`, `C:x\y`, false},          // drive-relative
		{`C:\x`, `\x\y`, false},           // rooted without drive
		{`C:\code`, `\\?\C:\code\x`, true},
		{`\\?\UNC\srv\share`, `\\srv\share\x`, true},
	})
}

// TestDenyBypass tries to get a path that is inside a deny root judged to be
// outside it (or a sibling judged inside), per platform rules.
func TestDenyBypass(t *testing.T) {
	type tc struct {
		p      string
		denied bool
	}
	sets := []struct {
		name  string
		r     Rules
		deny  string
		cases []tc
	}{
		{"darwin", darwin, "/Users/me/Code/Private", []tc{
			{"/Users/me/Code/Private/x", true},
			{"/Users/me/code/private/x", true},           // case
			{"/USERS/ME/CODE/PRIVATE", true},             // case, the root itself
			{"/Users/me/Code/Private/", true},            // trailing separator
			{"/Users/me/Code//Private//x", true},         // repeated separators
			{"/Users/me/Code/./Private/x", true},         // dot
			{"/Users/me/Code/Public/../Private/x", true}, // dot-dot
			{"/Users/me/Code/Private/../Private/x", true},
			{"/Users/me/Code/PrivateX/x", false}, // sibling by prefix
			{"/Users/me/Code/Priv", false},
			{"/Users/me/Code", false},
			{"/Users/me/Code/Private/../Public", false},
		}},
		{"darwin-unicode", darwin, "/Users/me/项目/" + cafeNFC, []tc{
			{"/Users/me/项目/" + cafeNFD + "/x", true},
			{"/Users/me/项目/" + strings.ToUpper(cafeNFD) + "/x", true},
			{"/Users/me/项目/" + cafeNFC + "s/x", false},
			{"/Users/me/项目/cafe/x", false},
		}},
		{"linux", exact, "/home/me/code/private", []tc{
			{"/home/me/code/private/x", true},
			{"/home/me/code/private/", true},
			{"/home/me/code//private", true},
			{"/home/me/code/public/../private/x", true},
			{"/home/me/code/privateer", false},
			{"/home/me/code", false},
		}},
		{"windows", win, `C:\Users\me\Private`, []tc{
			{`C:\Users\me\Private\x`, true},
			{`c:\users\ME\private\x`, true},
			{`C:/Users/me/Private/x`, true},
			{`C:\Users\me\Private\`, true},
			{`C:\Users\\me\Private`, true},
			{`\\?\C:\Users\me\Private\x`, true},
			{`\\?\c:\users\me\private`, true},
			{`\\.\C:\Users\me\Private\x`, true},
			{`C:\Users\me\Private.\x`, true},
			{`C:\Users\me\Private \x`, true},
			{`C:\Users\me\Private::$INDEX_ALLOCATION\x`, true},
			{`C:\Users\me\Public\..\Private\x`, true},
			{`\\localhost\C$\Users\me\Private\x`, true},
			{`\\?\UNC\localhost\c$\Users\me\Private`, true},
			{`C:\Users\me\PrivateX\x`, false},
			{`D:\Users\me\Private\x`, false},
			{`C:\Users\me`, false},
		}},
		{"windows-unc", win, `\\srv\share`, []tc{
			{`\\srv\share\x`, true},
			{`\\SRV\SHARE`, true},
			{`//srv/share/x`, true},
			{`\\?\UNC\srv\share\x`, true},
			{`\\srv\share\..\share2\x`, true}, // .. cannot climb out of a share
			{`\\srv\share2\x`, false},
			{`\\srv\shar`, false},
		}},
	}
	for _, s := range sets {
		for _, c := range s.cases {
			if got := s.r.Within(s.deny, c.p); got != c.denied {
				t.Errorf("%s: Within(%q, %q) = %v, want %v", s.name, s.deny, c.p, got, c.denied)
			}
			if c.denied && !s.r.MayBeWithin(s.deny, c.p) {
				t.Errorf("%s: MayBeWithin(%q, %q) = false, a denied path leaks", s.name, s.deny, c.p)
			}
		}
	}
}

// On Linux, Code/Private and code/private are two directories; Within keeps
// them apart, the deny check does not.
func TestMayBeWithinIsWider(t *testing.T) {
	for _, c := range []struct {
		root, p string
		within  bool
		maybe   bool
	}{
		{"/code/Private", "/code/private/x", false, true},
		{"/code/" + cafeNFC, "/code/" + cafeNFD, false, true},
		{"/code/" + cafeNFC, "/code/CAFE\u0301/x", false, true},
		{"/code/private", "/code/privatex", false, false},
		{"/code/private", "rel/x", false, true}, // cannot judge: deny
		{"rel", "/code/x", false, true},
	} {
		if got := exact.Within(c.root, c.p); got != c.within {
			t.Errorf("Within(%q, %q) = %v", c.root, c.p, got)
		}
		if got := exact.MayBeWithin(c.root, c.p); got != c.maybe {
			t.Errorf("MayBeWithin(%q, %q) = %v", c.root, c.p, got)
		}
	}
}

func TestSame(t *testing.T) {
	for _, c := range []struct {
		r    Rules
		a, b string
		want bool
	}{
		{exact, "/a/b/", "/a//b", true},
		{exact, "/a/B", "/a/b", false},
		{fold, "/a/B", "/A/b", true},
		{exact, "/" + cafeNFC, "/" + cafeNFD, false},
		{nfc, "/" + cafeNFC, "/" + cafeNFD, true},
		{darwin, "/CAF\u00c9", "/" + cafeNFD, true},
		{win, `C:\A`, `c:/a/`, true},
		{win, `C:\A`, `D:\A`, false},
		{winCS, `C:\A`, `c:\a`, false},
	} {
		if got := c.r.Same(c.a, c.b); got != c.want {
			t.Errorf("%+v.Same(%q, %q) = %v, want %v", c.r, c.a, c.b, got, c.want)
		}
	}
}

// foldRune must pick one member per simple folding orbit, so that key
// equality is exactly strings.EqualFold. Checked for every rune.
func TestFoldRuneOrbits(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		f := foldRune(r)
		if g := foldRune(unicode.SimpleFold(r)); g != f {
			t.Fatalf("foldRune(%U) = %U but foldRune(SimpleFold) = %U", r, f, g)
		}
		inOrbit := f == r
		for o := unicode.SimpleFold(r); o != r && !inOrbit; o = unicode.SimpleFold(o) {
			inOrbit = o == f
		}
		if !inOrbit {
			t.Fatalf("foldRune(%U) = %U is not in its orbit", r, f)
		}
		if r < 0x80 && f != unicode.ToUpper(r) {
			t.Fatalf("ASCII %q folds to %q, want upper case", r, f)
		}
	}
}

func TestKeyIdempotentOnSamples(t *testing.T) {
	samples := []string{"/", "/Users/me/" + cafeNFD, "/ΑΙ/ᾳ/αι", "/Straße/STRASSE", "/ǅ/ǆ/Ǆ", "/\u0345x", "/x/\u1fbc"}
	for _, r := range []Rules{exact, fold, nfc, darwin} {
		for _, s := range samples {
			k := r.Key(s)
			if k2 := r.Key(k); k2 != k {
				t.Errorf("%+v: Key(%q) = %q but Key of that = %q", r, s, k, k2)
			}
			if r.NormalizeNFC && !norm.NFC.IsNormalString(k) {
				t.Errorf("%+v: Key(%q) = %q is not NFC", r, s, k)
			}
		}
	}
}

func TestPackageLevelUseDefaultRules(t *testing.T) {
	saved := DefaultRules
	t.Cleanup(func() { DefaultRules = saved })
	DefaultRules = DarwinRules
	if !Within("/Users/me/Code/Private", "/users/me/code/PRIVATE/"+cafeNFD) || !Same("/A", "/a") || Key("/a") != "/A" {
		t.Error("package-level functions ignore DefaultRules")
	}
	DefaultRules = LinuxRules
	if Within("/Users/me/Code/Private", "/users/me/code/private/x") || Same("/A", "/a") {
		t.Error("Linux rules should compare exact bytes")
	}
	if !MayBeWithin("/Users/me/Code/Private", "/users/me/code/private/x") {
		t.Error("MayBeWithin should fold on Linux too")
	}
	if !IsFSRoot("/") || IsFSRoot("/x") {
		t.Error("IsFSRoot")
	}
}
