package scan

import (
	_ "embed"
	"encoding/binary"
	"sync"

	"github.com/cgcat/cgcat/local/meta"
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
