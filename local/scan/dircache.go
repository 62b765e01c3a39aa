package scan

import (
	"encoding/binary"
	"maps"
	"os"
	"path/filepath"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/cgcat/cgcat/local/nofollow"
	"github.com/cgcat/cgcat/local/pathid"
	"github.com/zeebo/xxh3"
)

// The directory cache: a pass over an unchanged directory does not list it
// again. The walk still opens every directory it visits with no symlink in
// its path (a directory swapped for a symlink is refused as before) and
// reads its identity (device, inode) and change times from the open
// descriptor. A listing kept from an earlier pass stands in for a new one
// only when
//
//   - the directory has the identity it had when it was listed (a directory
//     replaced by another, or a bind mount over it, has another one), and
//     the same modification time (entries added, removed, renamed) and
//     status-change time (that, and chmod, chown, ACLs, and utimes: a
//     directory whose contents changed and whose mtime was set back, as
//     tar and rsync do, still has a new ctime);
//   - the listing was not racy: both times were older than the moment the
//     listing began by more than racyMargin. A change made within the same
//     clock tick as an earlier one leaves the times as they were (the
//     file system's clock is coarse), so a listing taken in that tick is
//     kept for nothing but this pass; the next pass lists the directory
//     again and keeps that listing (git's racy-index rule, done by not
//     keeping racy listings);
//   - the directory lives on a local file system known to keep those times
//     (ext2/3/4, XFS, Btrfs, tmpfs, F2FS, ZFS, bcachefs). Network and FUSE
//     file systems, overlays, FAT and the like are listed every time;
//   - the kept listing was made under the walk settings in force (excluded
//     names and whether symlinks are followed shape it; maxDepth does not,
//     but a change of the walk key drops the whole cache anyway) and in this
//     boot of this machine (device numbers are not stable across boots, and
//     a data dir copied to another machine holds nothing true there).
//
// Nothing else is taken from it: the project check (marker.ProbeDir) runs
// for every directory that holds .codegraph, and the metadata stamp looks at
// the files themselves, so a database created in or removed from an
// existing .codegraph (which changes .codegraph's times, not its parent's)
// is seen. Symlinks, when followed, are resolved afresh on every visit.
//
// The cache lives in dataDir/scan.dircache, written by the lease holder
// after each round (a temporary file renamed into place; no fsync: a torn
// or damaged file fails its checksum and is ignored, never trusted) and
// read when a scanner starts; the last file read or written is kept in
// memory so a serve's next round does not read it again. Each entry carries
// the number of the pass that last confirmed it; at the end of a pass only
// the entries confirmed in that pass are kept, so a deleted directory's
// entry does not outlive the pass that missed it. The file is bounded
// (maxCacheBytes); what does not fit is listed every time. It holds facts
// about the file system only, each checked against the file system before
// use, never facts about the catalog: a cache older (or newer) than the
// catalog, or taken from another data dir on the same machine, is as good
// as any.

const (
	cacheName     = "scan.dircache"
	cacheMagic    = "cgcat dircache 1"
	maxCacheBytes = 64 << 20
	// maxCacheName bounds one name in the file (Linux: 255 bytes).
	maxCacheName = 4096
)

// racyMargin: a listing is kept only when the directory's times are older
// than the moment the listing began by more than this. It covers the file
// system clock's tick (a few milliseconds on Linux; whole seconds on some
// file systems, which are not cached anyway) and the gap between the clock
// time.Now reads and the one the kernel stamps with.
const racyMargin = 2 * time.Second

// Local file systems whose directories' mtime and ctime move with every
// change (statfs f_type).
var timedFS = map[int64]bool{
	0xEF53:     true, // ext2, ext3, ext4
	0x58465342: true, // XFS
	0x9123683E: true, // Btrfs
	0x01021994: true, // tmpfs
	0xF2F52010: true, // F2FS
	0x2FC12FC1: true, // ZFS
	0xCA451A4E: true, // bcachefs
}

// dirCache is one scanner's view of the cache (see above).
type dirCache struct {
	path   string
	walk   uint64
	boot   string
	margin time.Duration

	// What the file held when the scanner began: read-only (and shared
	// with later scanners of this process through memo).
	old   []byte
	oldIx map[dirKey]uint32
	// oldPass is the highest pass an entry of old was confirmed in.
	oldPass uint64

	mu    sync.Mutex
	pass  uint64            // the pass being walked
	cur   []byte            // entries listed or confirmed in this pass by this scanner
	curIx map[dirKey]uint32 // offsets into cur
	dirty bool              // cur holds something the file does not
	devs  map[uint64]bool   // device → its file system keeps times
}

// dirKey is a directory's identity (pathid.ID without the Windows part:
// a smaller map key).
type dirKey struct{ dev, ino uint64 }

func keyOf(id pathid.ID) dirKey { return dirKey{id.Dev, id.Ino} }

// cacheEntry is one decoded entry.
type cacheEntry struct {
	id           dirKey
	mtime, ctime int64
	pass         uint64
	ls           listing
	end          int // offset just after the entry
}

// bootID names this boot of this machine ("" where unknown: no cache).
var bootID = sync.OnceValue(func() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil || len(b) < 16 || len(b) > 64 {
		return ""
	}
	return string(b)
})

// memo keeps the last cache file this process read or wrote, so a serve's
// next round (a new scanner) does not read and index it again.
var memo struct {
	sync.Mutex
	path  string
	stamp fileStamp
	walk  uint64
	body  []byte
	ix    map[dirKey]uint32
	pass  uint64 // the highest pass of body's entries
}

type fileStamp struct {
	dev, ino uint64
	size     int64
	mod      int64
}

func stampFile(path string) (fileStamp, bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}, false
	}
	id, _ := pathid.FileID(path)
	return fileStamp{dev: id.Dev, ino: id.Ino, size: fi.Size(), mod: fi.ModTime().UnixNano()}, true
}

// openDirCache returns the cache of dataDir for walks under the walk key
// (nil where there can be none: no boot id on this platform). A missing,
// damaged or foreign file gives an empty cache.
func openDirCache(dataDir string, walk uint64) *dirCache {
	boot := bootID()
	if boot == "" {
		return nil
	}
	c := &dirCache{path: filepath.Join(dataDir, cacheName), walk: walk, boot: boot, margin: racyMargin,
		curIx: map[dirKey]uint32{}, devs: map[uint64]bool{}}
	c.old, c.oldIx, c.oldPass = loadCache(c.path, walk, boot)
	return c
}

// loadCache reads and indexes the file, or takes it from memo when the file
// is the one memo holds.
func loadCache(path string, walk uint64, boot string) ([]byte, map[dirKey]uint32, uint64) {
	fs, ok := stampFile(path)
	if !ok {
		return nil, nil, 0
	}
	memo.Lock()
	defer memo.Unlock()
	if memo.path == path && memo.stamp == fs && memo.walk == walk && memo.ix != nil {
		return memo.body, memo.ix, memo.pass
	}
	if fs.size > maxCacheBytes+1<<20 {
		return nil, nil, 0
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, 0
	}
	body, ok := parseCache(b, walk, boot)
	if !ok {
		return nil, nil, 0
	}
	ix, pass := indexEntries(body)
	if ix == nil {
		return nil, nil, 0
	}
	memo.path, memo.stamp, memo.walk, memo.body, memo.ix, memo.pass = path, fs, walk, body, ix, pass
	return body, ix, pass
}

// parseCache checks a file's header and checksum and returns its entries.
func parseCache(b []byte, walk uint64, boot string) ([]byte, bool) {
	if len(b) < len(cacheMagic)+8 || string(b[:len(cacheMagic)]) != cacheMagic {
		return nil, false
	}
	sum := binary.LittleEndian.Uint64(b[len(b)-8:])
	b = b[:len(b)-8]
	if xxh3.Hash(b) != sum {
		return nil, false
	}
	r := cacheReader{b: b, off: len(cacheMagic)}
	gotBoot := r.str()
	gotWalk := r.u64()
	if r.bad || gotBoot != boot || gotWalk != walk {
		return nil, false
	}
	return b[r.off:], true
}

// indexEntries indexes every entry of body, and says the highest pass
// among them; nil if any is malformed (the whole file is then ignored).
func indexEntries(body []byte) (map[dirKey]uint32, uint64) {
	ix := map[dirKey]uint32{}
	var top uint64
	for off := 0; off < len(body); {
		e, ok := decodeEntry(body, off)
		if !ok {
			return nil, 0
		}
		ix[e.id] = uint32(off)
		top = max(top, e.pass)
		off = e.end
	}
	return ix, top
}

// trusts reports whether listings of directories on dev may be kept: its
// file system keeps directory times (asked once per device).
func (c *dirCache) trusts(d *nofollow.Dir, dev uint64) bool {
	c.mu.Lock()
	ok, known := c.devs[dev]
	c.mu.Unlock()
	if known {
		return ok
	}
	t, err := d.FSType()
	ok = err == nil && timedFS[t]
	c.mu.Lock()
	c.devs[dev] = ok
	c.mu.Unlock()
	return ok
}

// get returns the listing kept for a directory with these identity and
// times, or nil. A listing taken from the file is confirmed for this pass.
func (c *dirCache) get(t nofollow.Times) *listing {
	k := keyOf(t.ID)
	c.mu.Lock()
	if off, ok := c.curIx[k]; ok {
		e, ok := decodeEntry(c.cur, int(off))
		c.mu.Unlock()
		if ok && e.mtime == t.Mtime && e.ctime == t.Ctime {
			return &e.ls
		}
		return nil
	}
	old, oldIx := c.old, c.oldIx // replaced whole, never changed in place
	c.mu.Unlock()
	off, ok := oldIx[k]
	if !ok {
		return nil
	}
	e, ok := decodeEntry(old, int(off))
	if !ok || e.mtime != t.Mtime || e.ctime != t.Ctime {
		return nil
	}
	c.mu.Lock()
	if len(c.cur)+e.end-int(off) <= maxCacheBytes {
		at := len(c.cur)
		c.cur = append(c.cur, old[off:e.end]...)
		binary.LittleEndian.PutUint64(c.cur[at+passAt:], c.pass)
		c.curIx[k] = uint32(at)
		c.dirty = true
	}
	c.mu.Unlock()
	return &e.ls
}

// keep records a fresh listing of a directory whose times t were read just
// after start, unless it is racy (see racyMargin).
func (c *dirCache) keep(t nofollow.Times, ls *listing, start time.Time) {
	limit := start.Add(-c.margin).UnixNano()
	if t.Mtime >= limit || t.Ctime >= limit {
		return
	}
	c.mu.Lock()
	c.add(t, ls)
	c.mu.Unlock()
}

// add appends an entry to cur (c.mu held).
func (c *dirCache) add(t nofollow.Times, ls *listing) {
	before := len(c.cur)
	b := appendEntry(c.cur, t, c.pass, ls)
	if len(b) > maxCacheBytes {
		return // full: the rest is listed every time
	}
	c.cur = b
	c.curIx[keyOf(t.ID)] = uint32(before)
	c.dirty = true
}

// startPass makes pass the one entries confirmed from now on belong to.
// Entries confirmed in an earlier pass stay in the file until a pass ends
// without confirming them.
func (c *dirCache) startPass(pass uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pass != pass && len(c.cur) > 0 {
		// A new pass in the same scanner without a save between (not the
		// usual way): what the last one confirmed joins the old entries.
		c.old, _ = c.merged(false)
		c.oldIx = nil
		c.cur, c.curIx = nil, map[dirKey]uint32{}
	}
	if c.oldIx == nil && len(c.old) > 0 {
		c.oldIx, c.oldPass = indexEntries(c.old)
	}
	c.pass = pass
}

// merged is cur plus the old entries not confirmed again: all of them while
// the pass goes on, only those confirmed in this pass (by an earlier
// scanner) when it ended; and its index when it is cur's. c.mu held.
func (c *dirCache) merged(passEnded bool) ([]byte, map[dirKey]uint32) {
	if len(c.old) == 0 || passEnded && c.oldPass < c.pass {
		return c.cur, c.curIx // nothing of old stays
	}
	out := make([]byte, 0, len(c.cur)+len(c.old))
	out = append(out, c.cur...)
	for off := 0; off < len(c.old); {
		e, ok := decodeEntry(c.old, off)
		if !ok {
			break
		}
		if _, again := c.curIx[e.id]; !again && (!passEnded || e.pass == c.pass) && len(out)+e.end-off <= maxCacheBytes {
			out = append(out, c.old[off:e.end]...)
		}
		off = e.end
	}
	return out, nil
}

// save writes the file when it would change: after a round that listed or
// confirmed anything, and always at the end of a pass (which drops the
// entries the pass did not confirm). Best effort: a failure only costs
// listings.
func (c *dirCache) save(passEnded bool) error {
	c.mu.Lock()
	if !c.dirty && !passEnded {
		c.mu.Unlock()
		return nil
	}
	body, ix := c.merged(passEnded)
	pass := c.pass
	c.dirty = false
	if passEnded {
		// What the next pass starts from: this pass's entries (indexed
		// when that pass begins in this scanner, if ever, unless cur's
		// index serves).
		c.old, c.oldIx, c.oldPass = body, ix, pass
		c.cur, c.curIx = nil, map[dirKey]uint32{}
	} else if ix != nil {
		ix = maps.Clone(ix) // cur grows on
	}
	c.mu.Unlock()
	b := make([]byte, 0, len(body)+64)
	b = append(b, cacheMagic...)
	b = binary.AppendUvarint(b, uint64(len(c.boot)))
	b = append(b, c.boot...)
	b = binary.LittleEndian.AppendUint64(b, c.walk)
	b = append(b, body...)
	b = binary.LittleEndian.AppendUint64(b, xxh3.Hash(b))
	tmp, err := os.CreateTemp(filepath.Dir(c.path), cacheName+".tmp-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(b)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), c.path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if fs, ok := stampFile(c.path); ok {
		memo.Lock()
		memo.path, memo.stamp, memo.walk, memo.body, memo.ix, memo.pass = c.path, fs, c.walk, body, ix, pass
		memo.Unlock()
	}
	return nil
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
// including a name that is not one plain name.
func decodeEntry(b []byte, off int) (e cacheEntry, ok bool) {
	r := cacheReader{b: b, off: off}
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
		if n > uint64(len(b)-r.off) {
			return e, false
		}
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
type cacheReader struct {
	b   []byte
	off int
	bad bool
}

func (r *cacheReader) u64() uint64 {
	if r.bad || len(r.b)-r.off < 8 {
		r.bad = true
		return 0
	}
	v := binary.LittleEndian.Uint64(r.b[r.off:])
	r.off += 8
	return v
}

func (r *cacheReader) uvarint() uint64 {
	if r.bad {
		return 0
	}
	v, n := binary.Uvarint(r.b[r.off:])
	if n <= 0 {
		r.bad = true
		return 0
	}
	r.off += n
	return v
}

func (r *cacheReader) byte() byte {
	if r.bad || r.off >= len(r.b) {
		r.bad = true
		return 0
	}
	v := r.b[r.off]
	r.off++
	return v
}

func (r *cacheReader) str() string {
	n := r.uvarint()
	if r.bad || n > maxCacheName || n > uint64(len(r.b)-r.off) {
		r.bad = true
		return ""
	}
	s := string(r.b[r.off : r.off+int(n)])
	r.off += int(n)
	return s
}
