//go:build unix

package scan

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/zeebo/xxh3"
)

// resealCache puts a valid checksum on a cache file's bytes.
func resealCache(b []byte) []byte {
	b = slices.Clone(b[:len(b)-8])
	return binary.LittleEndian.AppendUint64(b, xxh3.Hash(b))
}

// A cache file written by other listing code (an earlier release, whose
// listings kept other names) is not trusted: the pass lists every
// directory again, and finds what a walk without the cache finds.
func TestDirCacheOfOtherListingCodeIgnored(t *testing.T) {
	noRacyStamps(t)
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
	other := slices.Clone(good)
	at := len(cacheMagic)
	binary.LittleEndian.PutUint64(other[at:], binary.LittleEndian.Uint64(other[at:])+1)
	if err := os.WriteFile(path, resealCache(other), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runPass(t, st, opt, margin(m))
	if r.listed != int64(first.state.PassDirs) {
		t.Fatalf("a cache of other listing code was used: %d of %d directories listed", r.listed, first.state.PassDirs)
	}
	sameFindings(t, "other listing code", r, uncached(t, opt))
}

// A FIFO where the cache file goes: the scanner starts at once (without
// the cache) instead of waiting for a writer for ever.
func TestDirCacheFIFONeverBlocks(t *testing.T) {
	root := cacheTree(t)
	opt := testOptions(root)
	st := newStore(t)
	path := filepath.Join(st.DataDir(), cacheName)
	os.Remove(path)
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan passResult, 1)
	go func() { done <- runPass(t, st, opt, nil) }()
	select {
	case r := <-done:
		sameFindings(t, "a FIFO for the cache", r, uncached(t, opt))
	case <-time.After(2 * time.Minute):
		t.Fatal("the scanner waits on a FIFO in the cache file's place")
	}
}

// FuzzDirCacheFile: whole cache files, their checksum recomputed after the
// fuzzer's change (so the decoding behind it is what is tried), seeded
// from a real pass's file. Nothing panics, and what is indexed decodes
// into plain names only.
func FuzzDirCacheFile(f *testing.F) {
	root := cacheTree(f)
	opt := testOptions(root)
	st := newStore(f)
	runPass(f, st, opt, margin(0))
	if good, err := os.ReadFile(filepath.Join(st.DataDir(), cacheName)); err == nil {
		f.Add(good)
	}
	f.Add([]byte(cacheMagic + "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"))
	walk, boot := opt.cacheKey(), bootID()
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < 8 {
			return
		}
		b = resealCache(b)
		if len(b) >= len(cacheMagic)+8 {
			// Mostly this build's listing code, so the entries are reached.
			binary.LittleEndian.PutUint64(b[len(cacheMagic):], ListingDerivation())
			b = resealCache(b)
		}
		body, n, ok := parseCache(b, walk, boot)
		if !ok {
			return
		}
		cf := &cacheFile{body: string(body), n: n}
		if cf.count() > len(body) {
			t.Fatalf("%d entries in %d bytes", cf.count(), len(body))
		}
		for _, off := range cf.offs {
			e, ok := decodeEntry(body, int(off))
			if !ok {
				t.Fatal("indexed an entry that does not decode")
			}
			for _, nm := range slices.Concat(e.ls.dirs, e.ls.links, e.ls.sources) {
				if !plainName(nm) {
					t.Fatalf("accepted name %q", nm)
				}
			}
		}
	})
}
