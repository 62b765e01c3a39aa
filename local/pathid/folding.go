package pathid

import (
	"io/fs"
	"sync"
)

// asciiFolding remembers, per directory, whether its lookups fold ASCII
// case, so that spelling a path a second time costs no failed lstat of a
// case-swapped name per component (the answer-time re-check spells every
// root it hands out). A directory is known by its device, inode and
// status-change time: case folding is a property of the directory (ext4
// and F2FS casefold, set only on an empty directory, which changes its
// ctime) or of its file system (vfat, a mount, which changes the device
// and inode seen at that path). Only names of ASCII letters, digits and
// punctuation use it: their only variant is the case swap, while Unicode
// names also have normal-form variants that a directory may treat apart
// from case, so they are always probed.
var asciiFolding foldMemo

type foldMemo struct {
	mu sync.Mutex
	m  map[dirStamp]bool
}

// dirStamp identifies one state of a directory; the zero value means "no
// identity known" (fakes, platforms without one).
type dirStamp struct {
	dev, ino       uint64
	ctimeS, ctimeN int64
}

// maxFoldMemo bounds the memo; it is cleared when full (a re-check spells
// at most the directories on the way to the roots it hands out).
const maxFoldMemo = 8192

func foldable(name string) bool {
	letter := false
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= 0x80 {
			return false
		}
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' {
			letter = true
		}
	}
	return letter
}

// known reports whether lookups in the directory dir (an lstat) fold
// ASCII case, when that was learnt for name's kind of name.
func (f *foldMemo) known(dir fs.FileInfo, name string) (insensitive, ok bool) {
	st, have := stampOf(dir)
	if !have || !foldable(name) {
		return false, false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	insensitive, ok = f.m[st]
	return insensitive, ok
}

// learn records what probing name in dir showed.
func (f *foldMemo) learn(dir fs.FileInfo, name string, insensitive bool) {
	st, have := stampOf(dir)
	if !have || !foldable(name) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil || len(f.m) >= maxFoldMemo {
		f.m = make(map[dirStamp]bool)
	}
	f.m[st] = insensitive
}
