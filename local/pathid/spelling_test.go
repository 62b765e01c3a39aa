package pathid

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"golang.org/x/text/unicode/norm"
)

// fakeFS models a file system's name lookup: it stores names as created (or
// as NFD, like HFS+) and resolves lookups exactly, or folding case and/or
// Unicode form, like APFS, NTFS or an ext4 casefold directory.
type fakeFS struct {
	root       *fakeNode
	lookup     Rules // FoldCase/NormalizeNFC: how lookups match names
	storeNFD   bool  // HFS+: names are stored (and listed) decomposed
	unlistable map[string]bool
}

type fakeNode struct {
	name     string
	children map[string]*fakeNode
}

func newFakeFS(lookup Rules, storeNFD bool) *fakeFS {
	return &fakeFS{root: &fakeNode{name: "/", children: map[string]*fakeNode{}}, lookup: lookup, storeNFD: storeNFD, unlistable: map[string]bool{}}
}

func (f *fakeFS) find(dir *fakeNode, name string) *fakeNode {
	if n, ok := dir.children[name]; ok {
		return n
	}
	want := f.lookup.name(name)
	for stored, n := range dir.children {
		if f.lookup.name(stored) == want {
			return n
		}
	}
	return nil
}

// mkdirAll creates p, reusing components the lookup rules already resolve.
func (f *fakeFS) mkdirAll(p string) {
	cur := f.root
	for _, name := range strings.Split(strings.Trim(p, "/"), "/") {
		n := f.find(cur, name)
		if n == nil {
			stored := name
			if f.storeNFD {
				stored = norm.NFD.String(name)
			}
			n = &fakeNode{name: stored, children: map[string]*fakeNode{}}
			cur.children[stored] = n
		}
		cur = n
	}
}

func (f *fakeFS) walk(p string) (*fakeNode, error) {
	cur := f.root
	for _, name := range strings.Split(strings.Trim(p, "/"), "/") {
		if name == "" {
			continue
		}
		if cur = f.find(cur, name); cur == nil {
			return nil, &fs.PathError{Op: "lstat", Path: p, Err: fs.ErrNotExist}
		}
	}
	return cur, nil
}

func (f *fakeFS) Lstat(p string) (fs.FileInfo, error) {
	n, err := f.walk(p)
	if err != nil {
		return nil, err
	}
	return fakeInfo{n}, nil
}

func (f *fakeFS) SameFile(a, b fs.FileInfo) bool { return a.(fakeInfo).n == b.(fakeInfo).n }

func (f *fakeFS) ReadDirNames(dir string, fn func(string) bool) error {
	if f.unlistable[dir] {
		return &fs.PathError{Op: "open", Path: dir, Err: fs.ErrPermission}
	}
	n, err := f.walk(dir)
	if err != nil {
		return err
	}
	var names []string
	for k := range n.children {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if !fn(k) {
			break
		}
	}
	return nil
}

type fakeInfo struct{ n *fakeNode }

func (i fakeInfo) Name() string       { return i.n.name }
func (i fakeInfo) Size() int64        { return 0 }
func (i fakeInfo) Mode() fs.FileMode  { return fs.ModeDir | 0o755 }
func (i fakeInfo) ModTime() time.Time { return time.Time{} }
func (i fakeInfo) IsDir() bool        { return true }
func (i fakeInfo) Sys() any           { return nil }

func skipOnWindows(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("fake file system uses / paths")
	}
}

func TestOnDiskSpellingFake(t *testing.T) {
	skipOnWindows(t)
	apfs := Rules{FoldCase: true, NormalizeNFC: true}
	tests := []struct {
		name     string
		lookup   Rules
		storeNFD bool
		create   []string
		in, want string
	}{
		{"apfs case", apfs, false, []string{"/Users/me/Code/Private"},
			"/users/ME/code/private", "/Users/me/Code/Private"},
		{"apfs exact input", apfs, false, []string{"/Users/me/Code"},
			"/Users/me/Code", "/Users/me/Code"},
		{"apfs NFD on disk, NFC asked", apfs, false, []string{"/Users/me/" + cafeNFD},
			"/Users/me/" + cafeNFC, "/Users/me/" + cafeNFD},
		{"apfs NFC on disk, NFD asked", apfs, false, []string{"/Users/me/" + cafeNFC},
			"/Users/me/" + cafeNFD, "/Users/me/" + cafeNFC},
		{"hfs+ stores NFD", apfs, true, []string{"/Users/me/项目/Résumé-工具"},
			"/users/me/项目/RÉSUMÉ-工具", "/Users/me/项目/" + norm.NFD.String("Résumé-工具")},
		{"hfs+ case and form at once", apfs, true, []string{"/Users/me/" + cafeNFC + "/Lib"},
			"/USERS/ME/CAF\u00c9/lib", "/Users/me/" + cafeNFD + "/Lib"},
		{"ntfs folds case only", Rules{FoldCase: true}, false, []string{"/Data/Code"},
			"/data/CODE", "/Data/Code"},
		{"ext4: two dirs differing in case", exact, false, []string{"/x/Code", "/x/code"},
			"/x/code", "/x/code"},
		{"ext4: two dirs differing in form", exact, false, []string{"/x/" + cafeNFC, "/x/" + cafeNFD},
			"/x/" + cafeNFD, "/x/" + cafeNFD},
		{"no letters", apfs, false, []string{"/2024/__"}, "/2024/__", "/2024/__"},
		{"root", apfs, false, nil, "/", "/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeFS(tt.lookup, tt.storeNFD)
			for _, c := range tt.create {
				f.mkdirAll(c)
			}
			got, err := onDiskSpelling(f, tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("onDiskSpelling(%q) = %q (%+q), want %q (%+q)", tt.in, got, got, tt.want, tt.want)
			}
		})
	}
}

func TestOnDiskSpellingFakeErrors(t *testing.T) {
	skipOnWindows(t)
	f := newFakeFS(Rules{FoldCase: true}, false)
	f.mkdirAll("/Home/Me")
	if _, err := onDiskSpelling(f, "/home/you"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing path: err = %v", err)
	}
	if _, err := onDiskSpelling(f, "home/me"); !errors.Is(err, ErrNotAbsolute) {
		t.Errorf("relative path: err = %v", err)
	}
	// A directory we may search but not list keeps the given spelling.
	f.unlistable["/Home"] = true
	got, err := onDiskSpelling(f, "/home/me")
	if err != nil || got != "/Home/me" {
		t.Errorf("unlistable parent: got %q, %v; want /Home/me", got, err)
	}
}

// The deny root is written one way in the config; the walker meets the
// project under the listed spelling. Once the root is canonical, even exact
// Linux rules see the project inside it; folding rules did anyway.
func TestDenyRootCanonicalOnFoldingFS(t *testing.T) {
	skipOnWindows(t)
	for _, storeNFD := range []bool{false, true} {
		f := newFakeFS(Rules{FoldCase: true, NormalizeNFC: true}, storeNFD)
		f.mkdirAll("/Users/me/Code/Privé/app")
		f.mkdirAll("/Users/me/Code/Privé2/app")
		deny, err := onDiskSpelling(f, "/Users/me/code/PRIVE\u0301")
		if err != nil {
			t.Fatal(err)
		}
		// What a walker sees: names from listings.
		walked := "/Users/me/Code/" + listed(t, f, "/Users/me/Code", "Privé") + "/app"
		sibling := "/Users/me/Code/" + listed(t, f, "/Users/me/Code", "Privé2") + "/app"
		for _, r := range []Rules{LinuxRules, DarwinRules, {FoldCase: true}} {
			if !r.Within(deny, walked) {
				t.Errorf("storeNFD=%v %+v: %q escapes deny root %q", storeNFD, r, walked, deny)
			}
			if r.Within(deny, sibling) {
				t.Errorf("storeNFD=%v %+v: sibling %q inside %q", storeNFD, r, sibling, deny)
			}
		}
	}
}

func listed(t *testing.T, f *fakeFS, dir, name string) string {
	t.Helper()
	var out string
	loose := Rules{FoldCase: true, NormalizeNFC: true}
	_ = f.ReadDirNames(dir, func(n string) bool {
		if loose.name(n) == loose.name(name) {
			out = n
		}
		return out == ""
	})
	if out == "" {
		t.Fatalf("%s not listed in %s", name, dir)
	}
	return out
}

func TestVariants(t *testing.T) {
	if v := variants("2024_"); len(v) != 0 {
		t.Errorf("variants of a letterless name: %q", v)
	}
	v := variants("Caf\u00e9")
	want := []string{"cAF\u00c9", "cAF\u00e9", "Cafe\u0301"}
	if strings.Join(v, "|") != strings.Join(want, "|") {
		t.Errorf("variants = %+q, want %+q", v, want)
	}
}

// Real file system: symlinks, "..", separators and the spelling Canonical
// hands out.
func TestCanonicalReal(t *testing.T) {
	skipOnWindows(t)
	base := mustCanonical(t, t.TempDir())
	mkdir(t, base, "code/private/app/.codegraph")
	mkdir(t, base, "code/public")
	mkdir(t, base, "elsewhere/deep")
	symlink(t, filepath.Join(base, "code/private"), filepath.Join(base, "alias")) // root that is a symlink
	symlink(t, filepath.Join(base, "code/private/app"), filepath.Join(base, "code/public/applink"))
	symlink(t, filepath.Join(base, "elsewhere/deep"), filepath.Join(base, "code/public/up"))

	priv := filepath.Join(base, "code/private")
	for in, want := range map[string]string{
		base + "/code/private":                      priv,
		base + "/code/private/":                     priv,
		base + "//code///private//":                 priv,
		base + "/code/./private/.":                  priv,
		base + "/code/public/../private":            priv,
		base + "/alias":                             priv,
		base + "/alias/":                            priv,
		base + "/alias/app/..":                      priv,
		base + "/code/public/applink/..":            priv, // ".." after a symlink is the target's parent
		base + "/code/public/up/../deep":            base + "/elsewhere/deep",
		base + "/code/public/up/..":                 base + "/elsewhere",
		base + "/code/public/applink/.codegraph/..": priv + "/app",
	} {
		got, err := Canonical(in)
		if err != nil {
			t.Errorf("Canonical(%q): %v", in, err)
			continue
		}
		if got != want {
			t.Errorf("Canonical(%q) = %q, want %q", in, got, want)
		}
	}
	if _, err := Canonical("code/private"); !errors.Is(err, ErrNotAbsolute) {
		t.Errorf("relative: %v", err)
	}
	if _, err := Canonical(base + "/nope"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
}

// A deny root reached through a symlink, a discovery root that is a symlink
// into the deny root, and a project path spelt with ".." through a symlink:
// after canonicalisation, none escapes.
func TestDenyBypassBySymlink(t *testing.T) {
	skipOnWindows(t)
	base := mustCanonical(t, t.TempDir())
	mkdir(t, base, "code/private/app")
	mkdir(t, base, "code/private2/app")
	mkdir(t, base, "code/public")
	symlink(t, filepath.Join(base, "code/private"), filepath.Join(base, "denylink"))
	symlink(t, filepath.Join(base, "code/private"), filepath.Join(base, "code/public/innocent"))
	symlink(t, filepath.Join(base, "code/private/app"), filepath.Join(base, "code/public/app"))

	deny := mustCanonical(t, filepath.Join(base, "denylink")) // config names the link
	for _, p := range []string{
		base + "/code/private/app",
		base + "/code/public/innocent/app", // discovery root is a link into the deny root
		base + "/code/public/app",          // project root is itself a link
		base + "/code/public/app/../app",   // ".." after the link
		base + "/denylink/app/",
	} {
		c := mustCanonical(t, p)
		if !Within(deny, c) || !MayBeWithin(deny, c) {
			t.Errorf("%q (canonical %q) escapes deny root %q", p, c, deny)
		}
	}
	sib := mustCanonical(t, base+"/code/private2/app")
	if Within(deny, sib) || MayBeWithin(deny, sib) {
		t.Errorf("sibling %q inside deny root %q", sib, deny)
	}
	// The lexical-only reading would have let this one out.
	lexical := filepath.Clean(base + "/code/public/innocent/../innocent/app")
	if !Within(deny, mustCanonical(t, lexical)) {
		t.Errorf("%q escapes", lexical)
	}
}

// On a byte-exact file system an NFD-named directory is handed out as is,
// and the deny check still catches an NFC-written root.
func TestCanonicalKeepsOnDiskUnicode(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs a file system that stores names byte for byte")
	}
	base := mustCanonical(t, t.TempDir())
	nfd := filepath.Join(base, "项目", cafeNFD)
	mkdir(t, base, "项目/"+cafeNFD+"/app")
	got := mustCanonical(t, nfd+"/app")
	if got != nfd+"/app" {
		t.Errorf("Canonical changed the bytes: %+q", got)
	}
	denyWritten := filepath.Join(base, "项目", cafeNFC)
	if !MayBeWithin(denyWritten, got) || !DarwinRules.Within(denyWritten, got) {
		t.Errorf("NFC deny root %q does not catch NFD project %q", denyWritten, got)
	}
	if LinuxRules.Within(denyWritten, got) {
		t.Errorf("exact rules should keep NFC and NFD apart")
	}
}

func TestIsHome(t *testing.T) {
	skipOnWindows(t)
	base := mustCanonical(t, t.TempDir())
	mkdir(t, base, "real/Home")
	symlink(t, filepath.Join(base, "real/Home"), filepath.Join(base, "homelink"))
	t.Setenv("HOME", base+"/homelink/")
	home := base + "/real/Home"
	for p, want := range map[string]bool{
		home:                  true,
		home + "/":            true,
		base + "/homelink":    true,
		home + "/x":           false,
		base + "/real":        false,
		base + "/real/Home2":  false,
		base + "/real/home":   false, // exact rules
		base + "/real/./Home": true,
	} {
		if got := LinuxRules.isHome(p); got != want {
			t.Errorf("isHome(%q) = %v, want %v", p, got, want)
		}
	}
	if !DarwinRules.isHome(base + "/REAL/home") {
		t.Error("darwin rules: home in other case not recognised")
	}
	if h, err := HomeDir(); err != nil || h != home {
		t.Errorf("HomeDir() = %q, %v; want %q", h, err, home)
	}
	t.Setenv("HOME", "")
	if IsHome("/") {
		t.Error("no home: nothing is home")
	}
}

func TestPreferAlias(t *testing.T) {
	skipOnWindows(t)
	// Model a firmlink with a symlink: base/Users is base/data/Users.
	base := mustCanonical(t, t.TempDir())
	mkdir(t, base, "data/Users/me")
	mkdir(t, base, "data/only")
	symlink(t, filepath.Join(base, "data/Users"), filepath.Join(base, "Users"))
	if got := preferAlias(base+"/data/Users/me", base+"/data", base); got != base+"/Users/me" {
		t.Errorf("preferAlias = %q", got)
	}
	if got := preferAlias(base+"/data/only", base+"/data", base); got != base+"/data/only" {
		t.Errorf("no alias: preferAlias = %q", got)
	}
	if got := preferAlias(base+"/database", base+"/data", base); got != base+"/database" {
		t.Errorf("prefix by bytes, not segments: preferAlias = %q", got)
	}
}

func mustCanonical(t *testing.T, p string) string {
	t.Helper()
	c, err := Canonical(p)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mkdir(t *testing.T, base, rel string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(base, rel), 0o755); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
}
