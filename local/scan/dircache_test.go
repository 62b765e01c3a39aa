//go:build unix

package scan

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/fixture"
	"github.com/cgcat/cgcat/local/nofollow"
	"github.com/cgcat/cgcat/local/pathid"
	"github.com/cgcat/cgcat/local/store"
	"github.com/zeebo/xxh3"
)

// passResult is one whole pass of a fresh scanner (as `cgcat scan` runs
// one, or a serve's round): the records after it, the state, and how many
// directories it listed rather than took from the directory cache.
type passResult struct {
	recs    map[string]*local.Project
	found   []string // the projects the walk found, sorted
	state   State
	listed  int64
	commits int
}

// runPass runs one pass on st with a new scanner; tune adjusts the scanner
// before its first slice.
func runPass(t testing.TB, st *store.Store, opt Options, tune func(*Scanner)) passResult {
	t.Helper()
	ctx := context.Background()
	s, err := Start(ctx, st, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if tune != nil {
		tune(s)
	}
	var res passResult
	s.Progress = func(State) { res.commits++ }
	s.onFound = func(root string) { res.found = append(res.found, root) }
	for {
		r, err := s.RunRound(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if r.Finished {
			break
		}
	}
	res.recs, res.state, res.listed = records(t, st), readStateT(t, st), s.listings.Load()
	slices.Sort(res.found)
	return res
}

// uncached is a pass of a scanner without the directory cache on a fresh
// store: what a walk of the tree as it is now finds.
func uncached(t testing.TB, opt Options) passResult {
	t.Helper()
	return runPass(t, newStore(t), opt, func(s *Scanner) { s.cache = nil })
}

// margin makes the racy margin short, so listings of directories changed
// a moment ago are kept (the tests sleep past it before each pass).
func margin(d time.Duration) func(*Scanner) {
	return func(s *Scanner) { setMargin(s, d) }
}

// needCache skips a test about the cache where the file system under dir
// gives it no times to trust (an overlay or network /tmp).
func needCache(t *testing.T, dir string) {
	t.Helper()
	d, err := nofollow.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if ty, err := d.FSType(); err != nil || !timedFS[ty] || bootID() == "" {
		t.Skipf("the directory cache is off on this file system (type %#x, %v)", ty, err)
	}
}

// sameFindings compares what two passes found: the projects, the gaps and
// the number of directories read; and every project the walk without the
// cache shows is present in got's catalog too (got may hold more: records
// are kept, and one in a part no longer walked stays as it was).
func sameFindings(t testing.TB, what string, got, want passResult) {
	t.Helper()
	if !slices.Equal(got.found, want.found) {
		t.Fatalf("%s: the projects found differ from a walk without the cache\n got  %q\n want %q", what, got.found, want.found)
	}
	for _, root := range presentRoots(want.recs) {
		p, w := got.recs[root], want.recs[root]
		if p == nil || p.Availability != local.Present {
			t.Fatalf("%s: %s is not present (%+v)", what, root, p)
		}
		// What the record says of the project is what a walk without the
		// cache reads now: its database, the identities of the folders
		// above it (deny roots are matched against them), its metadata.
		if p.DBID != w.DBID || !slices.Equal(p.Lineage, w.Lineage) || p.MetaHash != w.MetaHash || p.MetaStamp != w.MetaStamp || p.IndexState != w.IndexState {
			t.Fatalf("%s: the record of %s differs from a walk without the cache\n got  db %s lineage %v meta %x stamp %x %s\n want db %s lineage %v meta %x stamp %x %s",
				what, root, p.DBID, p.Lineage, p.MetaHash, p.MetaStamp, p.IndexState, w.DBID, w.Lineage, w.MetaHash, w.MetaStamp, w.IndexState)
		}
	}
	if g, w := gapList(got.state), gapList(want.state); !slices.Equal(g, w) {
		t.Fatalf("%s: gaps differ from a walk without the cache\n got  %q\n want %q", what, g, w)
	}
	if got.state.PassDirs != want.state.PassDirs {
		t.Fatalf("%s: the pass read %d directories, a walk without the cache %d", what, got.state.PassDirs, want.state.PassDirs)
	}
}

func gapList(s State) []string {
	var out []string
	for _, g := range s.PassGaps {
		out = append(out, string(g.Kind)+" "+g.Path+" "+g.Why)
	}
	slices.Sort(out)
	return out
}

// cacheTree is a small tree of projects at several depths.
func cacheTree(t testing.TB) string {
	root := canon(t, t.TempDir())
	for _, p := range []string{"a/p1", "a/b/p2", "a/b/c/p3", "d/p4", "d/e/f/g", "h"} {
		if strings.Contains(p, "p") {
			mkProject(t, filepath.Join(root, p))
		} else if err := os.MkdirAll(filepath.Join(root, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(root, "a", "p1", "package.json"), `{"name":"p1","description":"first words"}`)
	return root
}

// cacheEntries is how many directories the cache file of st holds.
func cacheEntries(t testing.TB, st *store.Store, opt Options) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(st.DataDir(), cacheName))
	if err != nil {
		t.Fatal(err)
	}
	body, n, ok := parseCache(b, opt.cacheKey(), bootID())
	if !ok {
		t.Fatal("the cache file does not parse")
	}
	f := &cacheFile{body: string(body), n: n}
	f.index()
	if f.ix == nil || len(f.offs) != n {
		t.Fatalf("the cache file holds %d well-formed entries, its header says %d", len(f.offs), n)
	}
	return n
}

// wantEntries: after a pass, the cache holds one entry per directory the
// pass read: the new ones, and none of those it no longer met.
func wantEntries(t testing.TB, st *store.Store, opt Options, r passResult, unreadable int) {
	t.Helper()
	if n, want := cacheEntries(t, st, opt), r.state.PassDirs-unreadable; n != want {
		t.Fatalf("the cache holds %d directories, the pass read %d", n, want)
	}
}

// TestDirCacheSeesEveryChange makes one kind of change at a time to a tree
// whose directories the cache holds, and checks after each that a pass
// finds what a walk without the cache finds, and that it listed only the
// directories the change touched (the rest came from the cache).
func TestDirCacheSeesEveryChange(t *testing.T) {
	noRacyStamps(t) // passes made at different moments are compared, stamps too
	const m = 40 * time.Millisecond
	cases := []struct {
		name string
		// change alters the tree; it returns the most directories the next
		// pass may list.
		change func(t *testing.T, root string) int64
		// want says what the pass must find (beyond matching an uncached
		// walk).
		want func(t *testing.T, root string, r passResult)
	}{
		{"nothing", func(t *testing.T, root string) int64 { return 0 }, nil},
		{"new directory deep down", func(t *testing.T, root string) int64 {
			mkProject(t, filepath.Join(root, "a", "b", "c", "new1", "new2"))
			return 3 // c, new1, new2
		}, func(t *testing.T, root string, r passResult) {
			wantPresent(t, r, filepath.Join(root, "a/b/c/new1/new2"))
		}},
		{"directory deleted", func(t *testing.T, root string) int64 {
			rm(t, filepath.Join(root, "a", "b", "c"))
			return 1 // b
		}, func(t *testing.T, root string, r passResult) {
			wantGone(t, r, filepath.Join(root, "a/b/c/p3"))
		}},
		{"directory renamed", func(t *testing.T, root string) int64 {
			mv(t, filepath.Join(root, "a", "b"), filepath.Join(root, "d", "b2"))
			// a and d changed; b2 and below were listed under a that
			// did not change, but b2's own ctime moved with the rename on
			// most file systems, so it may be listed again.
			return 3
		}, func(t *testing.T, root string, r passResult) {
			wantPresent(t, r, filepath.Join(root, "d/b2/p2"), filepath.Join(root, "d/b2/c/p3"))
			wantGone(t, r, filepath.Join(root, "a/b/p2"))
		}},
		{"database created in an existing .codegraph", func(t *testing.T, root string) int64 {
			os.Remove(filepath.Join(root, "d", "p4", ".codegraph", "codegraph.db"))
			return -1 // set up below, then measured
		}, nil},
		{"database removed", func(t *testing.T, root string) int64 {
			rm(t, filepath.Join(root, "a", "p1", ".codegraph", "codegraph.db"))
			return 0 // only .codegraph changed, and it is never listed
		}, func(t *testing.T, root string, r passResult) {
			wantGone(t, r, filepath.Join(root, "a/p1"))
		}},
		{"directory swapped for a symlink", func(t *testing.T, root string) int64 {
			mv(t, filepath.Join(root, "a", "b"), filepath.Join(root, "b-real"))
			if err := os.Symlink(filepath.Join(root, "b-real"), filepath.Join(root, "a", "b")); err != nil {
				t.Fatal(err)
			}
			return 3 // root (b-real appeared), a (b is a link now) and b-real (renamed: its times moved)
		}, func(t *testing.T, root string, r passResult) {
			wantGone(t, r, filepath.Join(root, "a/b/p2"))
			wantPresent(t, r, filepath.Join(root, "b-real/p2"))
		}},
		{"an ancestor replaced, its project moved into the new one", func(t *testing.T, root string) int64 {
			// The project's own folder and files are as they were; the
			// identities of the folders above it (which deny roots are
			// matched against) are not.
			mv(t, filepath.Join(root, "a", "b"), filepath.Join(root, "a", "b-old"))
			if err := os.Mkdir(filepath.Join(root, "a", "b"), 0o755); err != nil {
				t.Fatal(err)
			}
			mv(t, filepath.Join(root, "a", "b-old", "p2"), filepath.Join(root, "a", "b", "p2"))
			return 4 // a, b, b-old, and p2 (a rename moves its ctime)
		}, func(t *testing.T, root string, r passResult) {
			wantPresent(t, r, filepath.Join(root, "a/b/p2"), filepath.Join(root, "a/b-old/c/p3"))
		}},
		{"database replaced by a new file (a re-index)", func(t *testing.T, root string) int64 {
			// Written beside it and renamed over it: another file (a
			// removed one's inode number may be given out again at once).
			db := filepath.Join(root, "d", "p4", ".codegraph", "codegraph.db")
			before, err := pathid.FileID(db)
			if err != nil {
				t.Fatal(err)
			}
			write(t, db+".new", "SQLite format 3\x00"+strings.Repeat("\x00", 4080))
			mv(t, db+".new", db)
			if after, _ := pathid.FileID(db); after == before {
				t.Fatal("fixture: the database kept its identity")
			}
			return 0 // only .codegraph changed
		}, nil},
		{"manifest edited in place", func(t *testing.T, root string) int64 {
			write(t, filepath.Join(root, "a", "p1", "package.json"), `{"name":"p1","description":"second words, longer"}`)
			return 0 // the folder's entries are the same
		}, func(t *testing.T, root string, r passResult) {
			if d := r.recs[filepath.Join(root, "a/p1")].Meta.Description; d != "second words, longer" {
				t.Fatalf("the edit was not read: %q", d)
			}
		}},
		{"contents changed, mtime set back (tar, rsync)", func(t *testing.T, root string) int64 {
			dir := filepath.Join(root, "d", "e", "f")
			fi, err := os.Stat(dir)
			if err != nil {
				t.Fatal(err)
			}
			mkProject(t, filepath.Join(dir, "restored"))
			if err := os.Chtimes(dir, fi.ModTime(), fi.ModTime()); err != nil {
				t.Fatal(err)
			}
			return 2 // f (its ctime moved) and restored
		}, func(t *testing.T, root string, r passResult) {
			wantPresent(t, r, filepath.Join(root, "d/e/f/restored"))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := cacheTree(t)
			needCache(t, root)
			opt := testOptions(root)
			st := newStore(t)
			time.Sleep(2 * m)
			runPass(t, st, opt, margin(m))
			if tc.name == "database created in an existing .codegraph" {
				tc.change(t, root)
				time.Sleep(2 * m)
				if r := runPass(t, st, opt, margin(m)); slices.Contains(presentRoots(r.recs), filepath.Join(root, "d/p4")) {
					t.Fatal("fixture: d/p4 without its database is still present")
				}
				mkProject(t, filepath.Join(root, "d", "p4")) // the database comes back in the same .codegraph
				time.Sleep(2 * m)
				r := runPass(t, st, opt, margin(m))
				sameFindings(t, tc.name, r, uncached(t, opt))
				wantPresent(t, r, filepath.Join(root, "d/p4"))
				if r.listed != 0 {
					t.Fatalf("the parent of .codegraph did not change, yet %d directories were listed", r.listed)
				}
				return
			}
			most := tc.change(t, root)
			time.Sleep(2 * m)
			r := runPass(t, st, opt, margin(m))
			sameFindings(t, tc.name, r, uncached(t, opt))
			if tc.want != nil {
				tc.want(t, root, r)
			}
			if r.listed > most {
				t.Fatalf("the pass listed %d directories; the change touched at most %d", r.listed, most)
			}
			wantEntries(t, st, opt, r, 0)
			// And the pass after that lists nothing at all.
			time.Sleep(2 * m)
			again := runPass(t, st, opt, margin(m))
			if again.listed != 0 {
				t.Fatalf("a pass over the unchanged tree listed %d directories", again.listed)
			}
			wantEntries(t, st, opt, again, 0)
		})
	}
}

func wantPresent(t *testing.T, r passResult, roots ...string) {
	t.Helper()
	for _, root := range roots {
		if p := r.recs[root]; p == nil || p.Availability != local.Present {
			t.Fatalf("%s should be a present project: %+v", root, p)
		}
	}
}

func wantGone(t *testing.T, r passResult, roots ...string) {
	t.Helper()
	for _, root := range roots {
		if p := r.recs[root]; p != nil && p.Availability == local.Present {
			t.Fatalf("%s should not be present any more", root)
		}
	}
}

func rm(t testing.TB, p string) {
	t.Helper()
	if err := os.RemoveAll(p); err != nil {
		t.Fatal(err)
	}
}

func mv(t testing.TB, from, to string) {
	t.Helper()
	if err := os.Rename(from, to); err != nil {
		t.Fatal(err)
	}
}

// TestDirCacheUnreadableDirectory: a directory made unreadable (chmod
// changes only its ctime) is a gap again on the next pass, and the project
// below it is re-checked; readable again, it is found again.
func TestDirCacheUnreadableDirectory(t *testing.T) {
	noRacyStamps(t) // passes made at different moments are compared, stamps too
	if fixture.RunUnprivileged(t) {
		return
	}
	if os.Geteuid() == 0 {
		t.Skip("cannot drop privileges here")
	}
	const m = 40 * time.Millisecond
	root := cacheTree(t)
	needCache(t, root)
	opt := testOptions(root)
	st := newStore(t)
	time.Sleep(2 * m)
	runPass(t, st, opt, margin(m))
	locked := filepath.Join(root, "a", "b")
	for _, mode := range []os.FileMode{0, 0o755} {
		if err := os.Chmod(locked, mode); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(locked, 0o755) })
		time.Sleep(2 * m)
		r := runPass(t, st, opt, margin(m))
		sameFindings(t, fmt.Sprintf("chmod %o", mode), r, uncached(t, opt))
		gaps := gapList(r.state)
		if mode == 0 {
			if len(gaps) != 1 || !strings.Contains(gaps[0], locked+" permission denied") {
				t.Fatalf("want the permission gap at %s, got %q", locked, gaps)
			}
			if p := r.recs[filepath.Join(locked, "p2")]; p == nil || p.Availability != local.Inaccessible {
				t.Fatalf("the project below is re-checked and inaccessible: %+v", p)
			}
		} else {
			if len(gaps) != 0 {
				t.Fatalf("readable again: no gap, got %q", gaps)
			}
			wantPresent(t, r, filepath.Join(locked, "p2"), filepath.Join(locked, "c", "p3"))
		}
		// The entries of b and below are dropped while b is locked (the
		// pass met none of them), and come back when it opens again.
		wantEntries(t, st, opt, r, map[os.FileMode]int{0: 1, 0o755: 0}[mode])
		// Locked: nothing is listed (b cannot be opened, a did not
		// change). Open again: b, and below it p2, c and c/p3, whose
		// entries the locked pass did not confirm.
		if most := map[os.FileMode]int64{0: 0, 0o755: 4}[mode]; r.listed > most {
			t.Fatalf("chmod %o: %d directories listed, want at most %d", mode, r.listed, most)
		}
	}
}

// TestDirCacheRacyListing: a directory changed in the same tick of the file
// system's clock as the listing before cannot be told apart by its times,
// so a listing taken that close to a change is not kept. Here the clock is
// made coarse (one hour) so every change falls in the listing's tick.
func TestDirCacheRacyListing(t *testing.T) {
	noRacyStamps(t) // passes made at different moments are compared, stamps too
	root := cacheTree(t)
	needCache(t, root)
	opt := testOptions(root)
	st := newStore(t)
	coarse := func(s *Scanner) {
		setMargin(s, time.Hour)
		s.coarsen = func(_ string, t nofollow.Times) nofollow.Times {
			h := int64(time.Hour)
			t.Mtime, t.Ctime = t.Mtime/h*h, t.Ctime/h*h
			return t
		}
	}
	runPass(t, st, opt, coarse)
	mkProject(t, filepath.Join(root, "a", "b", "c", "late"))
	r := runPass(t, st, opt, coarse)
	sameFindings(t, "a change in the tick of the listing", r, uncached(t, opt))
	wantPresent(t, r, filepath.Join(root, "a/b/c/late"))
	if r.listed == 0 {
		t.Fatal("nothing was listed: racy listings were kept")
	}
}

// TestDirCacheWalkSettings: excluded names, maxDepth and followSymlinks
// changed between passes are obeyed. Listings made under other excluded
// names or another followSymlinks are not used; maxDepth does not shape a
// listing, so a shallower pass takes its listings from the cache, and the
// deeper pass after it lists only what the shallow ones did not reach.
func TestDirCacheWalkSettings(t *testing.T) {
	noRacyStamps(t) // passes made at different moments are compared, stamps too
	const m = 40 * time.Millisecond
	root := cacheTree(t)
	needCache(t, root)
	mkProject(t, filepath.Join(root, "vendor", "dep"))
	// A link followed only with followSymlinks: d/lnk → a/b.
	if err := os.Symlink(filepath.Join(root, "a", "b"), filepath.Join(root, "d", "lnk")); err != nil {
		t.Fatal(err)
	}
	base := testOptions(root)
	// One worker: a folder reached twice (through the link) is then
	// listed once, whatever the timing, so counts can be compared.
	base.Workers = 1
	withVendor := base
	withVendor.ExcludeNames = append(slices.Clone(base.ExcludeNames), "vendor")
	shallow := base
	shallow.MaxDepth = 2
	follow := base
	follow.FollowSymlinks = true
	st := newStore(t)
	time.Sleep(2 * m)
	const all, none, some = "all", "none", "some"
	steps := []struct {
		opt    Options
		listed string
	}{
		{base, all}, {base, none},
		{withVendor, all}, {withVendor, none},
		{base, all}, {shallow, none}, {shallow, none}, {base, some},
		{follow, all}, {follow, none},
		{base, all},
	}
	for i, step := range steps {
		opt := step.opt
		r := runPass(t, st, opt, margin(m))
		sameFindings(t, fmt.Sprintf("settings %d", i), r, uncached(t, opt))
		vendored := slices.Contains(r.found, filepath.Join(root, "vendor/dep"))
		deep := slices.Contains(r.found, filepath.Join(root, "a/b/c/p3"))
		switch {
		case opt.MaxDepth == 2 && deep:
			t.Fatalf("settings %d: a project below maxDepth 2 was found", i)
		case opt.MaxDepth == 2 && len(gapList(r.state)) == 0:
			t.Fatalf("settings %d: maxDepth 2 leaves a depth gap", i)
		case len(opt.ExcludeNames) > len(base.ExcludeNames) && vendored:
			t.Fatalf("settings %d: an excluded name was walked", i)
		case opt.MaxDepth != 2 && len(opt.ExcludeNames) == len(base.ExcludeNames) && !vendored:
			t.Fatalf("settings %d: vendor/dep not found", i)
		case opt.FollowSymlinks && count(r.found, filepath.Join(root, "a/b/p2")) != 2:
			t.Fatalf("settings %d: the link to a/b was not followed", i)
		}
		// All: as many as a pass with an empty cache lists (a directory
		// reached twice, through the link, is listed once).
		n, dirs := r.listed, runPass(t, newStore(t), opt, margin(m)).listed
		if step.listed == all && n != dirs || step.listed == none && n != 0 || step.listed == some && (n == 0 || n >= dirs) {
			t.Fatalf("settings %d: %d of %d directories listed, want %s", i, n, dirs, step.listed)
		}
		time.Sleep(2 * m)
	}
}

// TestDirCacheFileIgnoredWhenDamaged: a cache file that is torn, damaged,
// of another boot (a data dir copied from another machine) or of other walk
// settings is ignored: the pass lists every directory and finds what a walk
// without the cache finds. None of it crashes the scanner.
func TestDirCacheFileIgnoredWhenDamaged(t *testing.T) {
	noRacyStamps(t) // passes made at different moments are compared, stamps too
	const m = 40 * time.Millisecond
	root := cacheTree(t)
	needCache(t, root)
	opt := testOptions(root)
	st := newStore(t)
	time.Sleep(2 * m)
	first := runPass(t, st, opt, margin(m))
	path := filepath.Join(st.DataDir(), cacheName)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if again := runPass(t, st, opt, margin(m)); again.listed != 0 {
		t.Fatalf("fixture: the cache was not used (%d listed)", again.listed)
	}
	resum := func(b []byte) []byte {
		b = slices.Clone(b[:len(b)-8])
		return binary.LittleEndian.AppendUint64(b, xxh3.Hash(b))
	}
	otherBoot := resum(bytes.Replace(good, []byte(bootID()), []byte(strings.Repeat("0", len(bootID()))), 1))
	flipped := slices.Clone(good)
	flipped[len(flipped)/2] ^= 0x40
	// An entry whose child name escapes its directory, with a valid
	// checksum: the whole file is refused.
	evil := resum(bytes.Replace(good, []byte("\x02p1"), []byte("\x02.."), 1))
	cases := map[string][]byte{
		"empty":              {},
		"torn":               good[:len(good)/2],
		"one bit flipped":    flipped,
		"another boot":       otherBoot,
		"a name not a name":  evil,
		"another format":     append([]byte("cgcat dircache 9"), good[len(cacheMagic):]...),
		"not a cache at all": []byte(strings.Repeat("garbage\n", 1000)),
	}
	if bytes.Equal(evil, resum(good)) {
		t.Fatal("fixture: no entry names p1")
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			if err := os.WriteFile(path, body, 0o644); err != nil {
				t.Fatal(err)
			}
			r := runPass(t, st, opt, margin(m))
			sameFindings(t, name, r, uncached(t, opt))
			if r.listed != int64(first.state.PassDirs) {
				t.Fatalf("a %s cache file was used: %d of %d directories listed", name, r.listed, first.state.PassDirs)
			}
		})
	}
	// Walk settings other than the file's: not used either.
	if err := os.WriteFile(path, good, 0o644); err != nil {
		t.Fatal(err)
	}
	other := opt
	other.ExcludeNames = append(slices.Clone(opt.ExcludeNames), "zzz")
	if r := runPass(t, st, other, margin(m)); r.listed != int64(first.state.PassDirs) {
		t.Fatalf("a cache of other walk settings was used: %d listed", r.listed)
	}
}

// FuzzDirCacheEntries: decoding never panics and never accepts a name that
// is not one plain name.
func FuzzDirCacheEntries(f *testing.F) {
	ls := &listing{marker: true, bad: "x\uFFFD", dirs: []string{"a", "b c"}, links: []string{"l"}, sources: []string{"package.json"}}
	f.Add(appendEntry(nil, nofollow.Times{Mtime: 1, Ctime: 2}, 3, ls))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		cf := &cacheFile{body: string(b)}
		cf.index()
		for _, off := range cf.offs {
			e, ok := decodeEntry(b, int(off))
			if !ok {
				t.Fatal("indexed an entry that does not decode")
			}
			for _, n := range slices.Concat(e.ls.dirs, e.ls.links, e.ls.sources) {
				if !plainName(n) {
					t.Fatalf("accepted name %q", n)
				}
			}
		}
		parseCache(b, 1, "boot")
	})
}

// TestUnchangedPassCommitsOnce: slices that change nothing but the walk's
// own bookkeeping are carried to the next commit, so a pass over an
// unchanged tree opens the store to write once, however many slices it
// takes, and changes no record and not the catalog revision.
func TestUnchangedPassCommitsOnce(t *testing.T) {
	noRacyStamps(t) // the files were all just made
	const m = 40 * time.Millisecond
	root := cacheTree(t)
	for i := range 30 {
		mkProject(t, filepath.Join(root, "many", fmt.Sprintf("q%02d", i)))
	}
	opt := testOptions(root)
	opt.SliceDirs = 4
	st := newStore(t)
	time.Sleep(2 * m)
	first := runPass(t, st, opt, margin(m))
	// A slice reads at most SliceDirs directories, so the 30 new projects
	// were found by at least 30/SliceDirs slices, each committed at once
	// (how the other directories fall into slices depends on the walk's
	// order: -race once gave 9 commits where 10 were usual).
	if least := (30 + opt.SliceDirs - 1) / opt.SliceDirs; first.commits < least {
		t.Fatalf("fixture: the first pass committed %d times; the slices that found new projects alone are at least %d", first.commits, least)
	}
	rev := revision(t, st)
	second := runPass(t, st, opt, margin(m))
	sameFindings(t, "unchanged", second, uncached(t, opt))
	if second.commits != 1 {
		t.Fatalf("a pass over an unchanged tree committed %d times", second.commits)
	}
	if got := revision(t, st); got != rev {
		t.Fatalf("catalogRevision moved from %d to %d over an unchanged tree", rev, got)
	}
	for root, p := range second.recs {
		if p.Changed != first.recs[root].Changed {
			t.Fatalf("%s was written again", root)
		}
	}
	// A new project is committed at once, not carried.
	mkProject(t, filepath.Join(root, "many", "q05", "late"))
	time.Sleep(2 * m)
	third := runPass(t, st, opt, margin(m))
	wantPresent(t, third, filepath.Join(root, "many/q05/late"))
	if third.commits < 2 {
		t.Fatalf("the slice that found a new project was carried to the pass's end (%d commits)", third.commits)
	}
}

func revision(t testing.TB, st *store.Store) uint64 {
	t.Helper()
	var rev uint64
	if err := st.View(context.Background(), func(r *store.Reader) error { rev = r.Revision(); return nil }); err != nil {
		t.Fatal(err)
	}
	return rev
}

// TestCarriedSlicesLostToACrash: a scanner that dies with slices carried
// (walked, not committed) leaves the store at its last commit; the next
// scanner resumes from there, walks those slices again, and the pass
// counts every directory and project exactly once. Slices carried into a
// commit are committed whole: what they read is not queued again.
func TestCarriedSlicesLostToACrash(t *testing.T) {
	noRacyStamps(t) // passes made at different moments are compared, stamps too
	root := cacheTree(t)
	for i := range 20 {
		mkProject(t, filepath.Join(root, "many", fmt.Sprintf("q%02d", i), "sub"))
	}
	opt := testOptions(root)
	opt.SliceDirs = 3
	st := newStore(t)
	clean := runPass(t, st, opt, nil)
	ctx := context.Background()
	s, err := Start(ctx, st, opt)
	if err != nil {
		t.Fatal(err)
	}
	var committed []string // found by the slices committed
	s.onFound = func(root string) { committed = append(committed, root) }
	if _, err := s.RunSlice(ctx, 3, time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	var carried []string
	s.onFound = func(root string) { carried = append(carried, root) }
	dirs := 3
	for i := range 8 {
		pl, err := s.plan(ctx, 3, time.Now().Add(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if !s.canCarry(pl) {
			t.Fatal("fixture: a slice of an unchanged tree cannot be carried")
		}
		if i == 4 { // three carried, and this one: one commit
			dirs += s.carried.w.dirs + pl.w.dirs
			if _, err := s.commit(ctx, s.withCarried(pl), nil); err != nil {
				t.Fatal(err)
			}
			committed, carried = append(committed, carried...), nil
			continue
		}
		s.carried = s.withCarried(pl)
	}
	s.Close() // dies with three slices carried
	if st := readStateT(t, st); !st.PassRunning || st.PassDirs != dirs {
		t.Fatalf("fixture: the store should hold the pass as committed (%d directories): %+v", dirs, st)
	}
	r := runPass(t, st, opt, nil)
	r.found = slices.Sorted(slices.Values(append(r.found, committed...)))
	sameFindings(t, "after the crash", r, clean)
	if r.state.PassProjects != clean.state.PassProjects {
		t.Fatalf("the resumed pass counted %d projects, a clean one %d", r.state.PassProjects, clean.state.PassProjects)
	}
}

// setMargin replaces racyMargin in s's directory cache (if it has one).
func setMargin(s *Scanner, d time.Duration) {
	if s.cache != nil {
		s.cache.margin = d
	}
}

func count(list []string, s string) (n int) {
	for _, v := range list {
		if v == s {
			n++
		}
	}
	return n
}

// TestEditAfterTheWalkIsReadAtPassEnd: a manifest edited after the walk
// passed its project, in the same scanner's pass, is read when the pass
// ends (its stamp is taken again: the one the walk took is older than
// restampAfter).
func TestEditAfterTheWalkIsReadAtPassEnd(t *testing.T) {
	root := canon(t, t.TempDir())
	mkProject(t, root) // the root: the first directory the walk reads
	write(t, filepath.Join(root, "package.json"), `{"name":"svc","description":"first words"}`)
	for i := range 20 {
		if err := os.MkdirAll(filepath.Join(root, "z", fmt.Sprintf("d%02d", i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	opt := testOptions(root)
	st := newStore(t)
	ctx := context.Background()
	s, err := Start(ctx, st, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.RunSlice(ctx, 1, time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(restampAfter + 100*time.Millisecond)
	write(t, filepath.Join(root, "package.json"), `{"name":"svc","description":"second words, longer"}`)
	for {
		r, err := s.RunRound(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if r.Finished {
			break
		}
	}
	if got := records(t, st)[root]; got.Meta.Description != "second words, longer" {
		t.Fatalf("the edit made after the walk passed was not read at the pass's end: %q", got.Meta.Description)
	}
}

// TestDirCacheSplitPass: a pass taken over round by round by new scanners
// (as serves do) keeps what each of them confirmed: the pass after it lists
// nothing over an unchanged tree, and the cache still holds every folder.
func TestDirCacheSplitPass(t *testing.T) {
	const m = 40 * time.Millisecond
	root := cacheTree(t)
	for i := range 12 {
		mkProject(t, filepath.Join(root, "many", fmt.Sprintf("q%02d", i), "sub"))
	}
	needCache(t, root)
	opt := testOptions(root)
	st := newStore(t)
	time.Sleep(2 * m)
	first := runPass(t, st, opt, margin(m))
	split := opt
	split.RoundDirs, split.SliceDirs = 5, 5
	scanners := 0
	for {
		s, err := Start(context.Background(), st, split)
		if err != nil {
			t.Fatal(err)
		}
		setMargin(s, m)
		scanners++
		r, err := s.RunRound(context.Background())
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
		if s.listings.Load() != 0 {
			t.Fatalf("scanner %d listed %d directories of an unchanged tree", scanners, s.listings.Load())
		}
		if r.Finished {
			break
		}
	}
	if scanners < 5 {
		t.Fatalf("fixture: the pass took %d scanners", scanners)
	}
	after := runPass(t, st, opt, margin(m))
	if after.listed != 0 {
		t.Fatalf("after a pass split over %d scanners, %d directories were listed again", scanners, after.listed)
	}
	wantEntries(t, st, opt, after, 0)
	if after.state.PassDirs != first.state.PassDirs {
		t.Fatalf("fixture: %d directories, then %d", first.state.PassDirs, after.state.PassDirs)
	}
}

// A pass's end writes the cache for the next pass but does not index it:
// a `cgcat scan` ends there and never looks (building the index, a map of
// every directory, was 3 % of a first scan's CPU). The next pass of the
// same scanner indexes it when it first looks, and lists nothing again.
func TestPassEndLeavesTheCacheIndexToTheNextPass(t *testing.T) {
	noRacyStamps(t)
	const m = 40 * time.Millisecond
	root := cacheTree(t)
	needCache(t, root)
	opt := testOptions(root)
	st := newStore(t)
	time.Sleep(2 * m)
	ctx := context.Background()
	s, err := Start(ctx, st, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	setMargin(s, m)
	pass := func() {
		t.Helper()
		for {
			r, err := s.RunRound(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if r.Finished {
				return
			}
		}
	}
	pass()
	listed := s.listings.Load()
	kept := s.cache.kept.Load()
	if kept == nil || kept.file.count() != int(listed) {
		t.Fatalf("after the first pass the cache keeps %v entries, the pass listed %d", kept, listed)
	}
	if kept.file.ix != nil || kept.file.offs != nil {
		t.Fatal("the pass's end indexed the cache it wrote; only the next pass needs the index")
	}
	pass()
	if again := s.listings.Load() - listed; again != 0 {
		t.Fatalf("the second pass listed %d directories again; the cache held them all", again)
	}
	if kept.file.ix == nil {
		t.Fatal("the second pass took its listings from the cache without its index")
	}
}
