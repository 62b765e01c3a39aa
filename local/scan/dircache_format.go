package scan

import (
	_ "embed"
	"encoding/binary"
	"sync"
	"unicode/utf8"

	"github.com/cgcat/cgcat/local/meta"
	"github.com/cgcat/cgcat/local/nofollow"
	"github.com/zeebo/xxh3"
)

// The cache file's format and what vouches for it: its layout (cacheMagic),
// the code that made its listings (ListingDerivation), the boot, the walk
// settings, and its checksum. The file is data-dir state anyone with write
// access could replace, so it is read without blocking (loadCache, through
// nofollow.ReadRegular), bounded, and checked whole before any entry is
// used.

//go:embed listing.go
var listingCode []byte

// ListingDerivation is the version of what a kept listing holds: the
// listing code (listing.go) and what meta counts as a source name
// (meta.Derivation).
var ListingDerivation = sync.OnceValue(func() uint64 {
	h := xxh3.New()
	h.Write(listingCode)
	h.Write(binary.LittleEndian.AppendUint64(nil, meta.Derivation()))
	return h.Sum64()
})

// The file: cacheMagic, the ListingDerivation (8 bytes, little endian),
// the boot id (uvarint length and bytes), the cache key and the number of
// entries (8 bytes each, little endian), the entries, and the xxh3 hash of
// all that (8 bytes).

// parseCache checks a file's header and checksum and returns its entries
// and how many the header says there are. A file made by other listing
// code (another ListingDerivation: an earlier release) is none.
func parseCache(b []byte, walk uint64, boot string) ([]byte, int, bool) {
	if len(b) < len(cacheMagic)+8+8 || string(b[:len(cacheMagic)]) != cacheMagic {
		return nil, 0, false
	}
	sum := binary.LittleEndian.Uint64(b[len(b)-8:])
	b = b[:len(b)-8]
	if xxh3.Hash(b) != sum {
		return nil, 0, false
	}
	r := cacheReader[[]byte]{b: b, off: len(cacheMagic)}
	derived := r.u64()
	gotBoot := r.str()
	gotWalk := r.u64()
	n := r.u64()
	if r.bad || derived != ListingDerivation() || gotBoot != boot || gotWalk != walk || n > uint64(len(b)) {
		return nil, 0, false
	}
	return b[r.off:], int(n), true
}

// The entry format: device, inode, mtime, ctime, the pass (8 bytes each,
// little endian), flags (1: holds .codegraph, 2: a name that
// is not UTF-8 follows), that name, then the child directories, the
// symlinks and the source names, each a count and that many names (uvarint
// length and bytes).

// passAt is where an entry's pass is.
const passAt = 32

func appendEntry(b []byte, t nofollow.Times, pass uint64, ls *listing) []byte {
	b = binary.LittleEndian.AppendUint64(b, t.ID.Dev)
	b = binary.LittleEndian.AppendUint64(b, t.ID.Ino)
	b = binary.LittleEndian.AppendUint64(b, uint64(t.Mtime))
	b = binary.LittleEndian.AppendUint64(b, uint64(t.Ctime))
	b = binary.LittleEndian.AppendUint64(b, pass)
	var flags byte
	if ls.marker {
		flags |= 1
	}
	if ls.bad != "" {
		flags |= 2
	}
	b = append(b, flags)
	if ls.bad != "" {
		b = appendStr(b, ls.bad)
	}
	for _, names := range [][]string{ls.dirs, ls.links, ls.sources} {
		b = binary.AppendUvarint(b, uint64(len(names)))
		for _, n := range names {
			b = appendStr(b, n)
		}
	}
	return b
}

func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// decodeEntry reads the entry at off; ok is false for anything malformed,
// including a name that is not one plain name. From a string, the names
// are substrings of it (no copy).
func decodeEntry[T ~string | ~[]byte](b T, off int) (e cacheEntry, ok bool) {
	r := cacheReader[T]{b: b, off: off}
	e.id.dev, e.id.ino = r.u64(), r.u64()
	e.mtime, e.ctime = int64(r.u64()), int64(r.u64())
	e.pass = r.u64()
	flags := r.byte()
	if flags&^3 != 0 {
		return e, false
	}
	e.ls.marker = flags&1 != 0
	if flags&2 != 0 {
		if e.ls.bad = r.str(); e.ls.bad == "" || !plainName(e.ls.bad) {
			return e, false
		}
	}
	for i, dst := range []*[]string{&e.ls.dirs, &e.ls.links, &e.ls.sources} {
		n := r.uvarint()
		if r.bad || n > uint64(len(b)-r.off) {
			return e, false
		}
		if n == 0 {
			continue
		}
		*dst = make([]string, 0, n)
		for range n {
			s := r.str()
			if !plainName(s) || (i == 0 && !utf8.ValidString(s)) {
				return e, false
			}
			*dst = append(*dst, s)
		}
	}
	if r.bad {
		return e, false
	}
	e.end = r.off
	return e, true
}

// checkEntry is decodeEntry without the decoding: it says whether the
// entry at off is well formed, and its directory and end.
func checkEntry(b string, off int) (k dirKey, end int, ok bool) {
	r := cacheReader[string]{b: b, off: off}
	k.dev, k.ino = r.u64(), r.u64()
	r.off += 24 // times, pass
	flags := r.byte()
	if r.bad || r.off > len(b) || flags&^3 != 0 {
		return k, 0, false
	}
	if flags&2 != 0 {
		if s := r.str(); s == "" || !plainName(s) {
			return k, 0, false
		}
	}
	for i := range 3 {
		n := r.uvarint()
		if r.bad || n > uint64(len(b)-r.off) {
			return k, 0, false
		}
		for range n {
			s := r.str()
			if !plainName(s) || (i == 0 && !utf8.ValidString(s)) {
				return k, 0, false
			}
		}
	}
	return k, r.off, !r.bad
}

// plainName: one entry name (not empty, ".", "..", and without a slash or
// NUL).
func plainName(s string) bool {
	if s == "" || s == "." || s == ".." || len(s) > maxCacheName {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] == '/' || s[i] == 0 {
			return false
		}
	}
	return true
}

// cacheReader decodes with bounds checks; bad is set on the first overrun.
type cacheReader[T ~string | ~[]byte] struct {
	b   T
	off int
	bad bool
}

func (r *cacheReader[T]) u64() uint64 {
	if r.bad || len(r.b)-r.off < 8 {
		r.bad = true
		return 0
	}
	var v uint64
	for i := 7; i >= 0; i-- {
		v = v<<8 | uint64(r.b[r.off+i])
	}
	r.off += 8
	return v
}

func (r *cacheReader[T]) uvarint() uint64 {
	var v uint64
	for shift := 0; !r.bad; shift += 7 {
		if r.off >= len(r.b) || shift > 63 {
			r.bad = true
			break
		}
		c := r.b[r.off]
		r.off++
		if shift == 63 && c > 1 {
			r.bad = true
			break
		}
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return v
		}
	}
	return 0
}

func (r *cacheReader[T]) byte() byte {
	if r.bad || r.off >= len(r.b) {
		r.bad = true
		return 0
	}
	v := r.b[r.off]
	r.off++
	return v
}

func (r *cacheReader[T]) str() string {
	n := r.uvarint()
	if r.bad || n > maxCacheName || n > uint64(len(r.b)-r.off) {
		r.bad = true
		return ""
	}
	s := string(r.b[r.off : r.off+int(n)])
	r.off += int(n)
	return s
}
