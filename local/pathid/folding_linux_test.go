//go:build linux

package pathid

import (
	"io/fs"
	"path/filepath"
	"syscall"
	"testing"
)

// stampedFS is a fakeFS whose directories carry an identity and a change
// time, as Linux's lstat gives them, and which counts lookups.
type stampedFS struct {
	*fakeFS
	ctime   int64 // every directory's change time
	lstats  int
	inoOf   map[*fakeNode]uint64
	nextIno uint64
}

type stampedInfo struct {
	fakeInfo
	st *syscall.Stat_t
}

func (i stampedInfo) Sys() any { return i.st }

func (s *stampedFS) Lstat(p string) (fs.FileInfo, error) {
	s.lstats++
	fi, err := s.fakeFS.Lstat(p)
	if err != nil {
		return nil, err
	}
	n := fi.(fakeInfo).n
	if s.inoOf[n] == 0 {
		s.nextIno++
		s.inoOf[n] = s.nextIno
	}
	return stampedInfo{fi.(fakeInfo), &syscall.Stat_t{Dev: 7, Ino: s.inoOf[n], Ctim: syscall.Timespec{Sec: s.ctime}}}, nil
}

func (s *stampedFS) SameFile(a, b fs.FileInfo) bool {
	return a.(stampedInfo).n == b.(stampedInfo).n
}

// Spelling a path again skips the case-swapped lookups in directories
// already known to be case-sensitive, and a directory that starts folding
// case (chattr +F, which changes its ctime) is probed afresh: the listed
// spelling is still found.
func TestFoldMemoFollowsTheDirectory(t *testing.T) {
	asciiFolding = foldMemo{}
	t.Cleanup(func() { asciiFolding = foldMemo{} })
	f := &stampedFS{fakeFS: newFakeFS(Rules{}, false), ctime: 1, inoOf: map[*fakeNode]uint64{}}
	f.mkdirAll("/home/me/code/app")

	spell := func(in, want string) int {
		t.Helper()
		f.lstats = 0
		got, err := onDiskSpelling(f, in)
		if err != nil || got != want {
			t.Fatalf("onDiskSpelling(%q) = %q, %v; want %q", in, got, err, want)
		}
		return f.lstats
	}
	first := spell("/home/me/code/app", "/home/me/code/app")
	again := spell("/home/me/code/app", "/home/me/code/app")
	// One per name, and the probe of "home" in "/", whose own lstat is
	// never taken.
	if again != 5 || first <= again {
		t.Errorf("lstats: %d the first time, %d again; want 5 once the directories are known", first, again)
	}

	// The same directories now fold case, with new change times.
	f.lookup = Rules{FoldCase: true}
	f.ctime = 2
	spell("/home/ME/Code/APP", "/home/me/code/app")

	// Unicode names are always probed (normal forms may be told apart even
	// where case is not).
	f.lookup = Rules{FoldCase: true, NormalizeNFC: true}
	f.ctime = 3
	f.mkdirAll("/home/me/caf\u00e9")
	spell("/home/me/cafe\u0301", "/home/me/caf\u00e9")
}

// OnDiskSpellingBelow keeps top and spells what is below it; a path not
// below top (by exact spelling) is refused, never spelled from elsewhere.
func TestOnDiskSpellingBelow(t *testing.T) {
	top := t.TempDir()
	mkdir(t, top, "a/B/c")
	got, err := OnDiskSpellingBelow(top, filepath.Join(top, "a/B/c"))
	if err != nil || got != filepath.Join(top, "a/B/c") {
		t.Fatalf("below: %q, %v", got, err)
	}
	if got, err := OnDiskSpellingBelow(top, top); err != nil || got != top {
		t.Fatalf("top itself: %q, %v", got, err)
	}
	for _, p := range []string{filepath.Dir(top), filepath.Join(top, "..", "x"), top + "x/a", "rel/a"} {
		if got, err := OnDiskSpellingBelow(top, p); err == nil {
			t.Errorf("OnDiskSpellingBelow(%q, %q) = %q; want an error", top, p, got)
		}
	}
	if _, err := OnDiskSpellingBelow(top, filepath.Join(top, "a/b/c")); err == nil {
		t.Errorf("a name that does not exist (case-sensitive temp dir) was spelled")
	}
}
