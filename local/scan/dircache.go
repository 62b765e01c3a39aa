package scan

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/cgcat/cgcat/local"
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
// at the end of a pass and when it lets the lease go having listed or
// confirmed anything since (a temporary file
// renamed into place; no fsync: a torn or damaged file fails its checksum
// and is ignored, never trusted) and read when a scanner starts; the last
// file read or written is kept in memory so a serve's next round does not
// read it again. Each entry carries the number of the pass that last
// confirmed it; at the end of a pass only the entries confirmed in that
// pass are kept, so a deleted directory's entry does not outlive the pass
// that missed it. The file is bounded (maxCacheBytes); what does not fit is
// listed every time. It holds facts about the file system only, each
// checked against the file system before use, never facts about the
// catalog: a cache older (or newer) than the catalog, or taken from another
// data dir on the same machine, is as good as any.
//
// What a listing holds (listDir, and the source names meta.IsSource keeps)
// is derived by code: the file carries that code's version
// (ListingDerivation, computed from the code), so a listing made by other
// code is never trusted and nobody has to remember to bump cacheMagic
// (which now changes only with the file's layout).

const (
	cacheName     = "scan.dircache"
	cacheMagic    = "cgcat dircache 3"
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

// cacheKey fingerprints the settings a listing depends on: excluded names
// and whether symlinks are kept. maxDepth is not one of them (expand applies
// it), so a deeper or shallower walk keeps the cache.
func (o Options) cacheKey() uint64 { return local.WalkKey(-1, o.ExcludeNames, o.FollowSymlinks) }

// dirCache is one scanner's view of the cache (see above).
type dirCache struct {
	path   string
	walk   uint64 // cacheKey of the walk settings
	boot   string
	margin time.Duration
	// revisits: a pass may reach a directory twice (symlinks followed), so
	// get looks at this pass's own listings first. Without it a directory
	// met twice (a bind mount) is listed again: as true, and no lock and
	// map lookup per directory of a first pass.
	revisits bool

	// kept is what earlier passes (or earlier rounds of this pass) left:
	// a read-only file and which of its entries this scanner confirmed.
	// Replaced whole (under mu), read without a lock.
	kept atomic.Pointer[keptSet]
	// devs says, per device, whether its file system keeps directory
	// times (asked once per device and pass).
	devs atomic.Pointer[sync.Map]

	mu       sync.Mutex
	pass     uint64            // the pass being walked
	fresh    []byte            // entries listed in this pass by this scanner
	freshIx  map[dirKey]uint32 // offsets into fresh (only while kept is set, or revisits)
	nEntries int               // entries in fresh
	nFresh   atomic.Int32      // len(freshIx), read without mu
	saved    int               // len(fresh) when the file was last written
}

// keptSet is a cache file's entries and which of them matched a directory
// in the pass being walked (bit i: entry i).
type keptSet struct {
	file      *cacheFile
	confirmed []atomic.Uint64
	touched   atomic.Bool  // a bit was set since the file was last written
	count     atomic.Int64 // bits set
}

func newKept(f *cacheFile) *keptSet {
	return &keptSet{file: f, confirmed: make([]atomic.Uint64, (f.count()+63)/64)}
}

func (k *keptSet) isConfirmed(i int) bool { return k.confirmed[i/64].Load()&(1<<(i%64)) != 0 }

func (k *keptSet) confirm(i int) {
	if k.confirmed[i/64].Or(1<<(i%64))&(1<<(i%64)) == 0 {
		k.touched.Store(true)
		k.count.Add(1)
	}
}

// cacheFile is the entries of one cache file, indexed when first needed.
// Read-only: the scanners of this process share it through memo.
type cacheFile struct {
	body string // the entries, back to back (names are substrings of it)
	n    int    // how many the header says there are (a hint, unless counted)
	// counted: n is exact, the entries being this process's own (merged),
	// so counting them needs no index. A pass's end then leaves the
	// index to the next pass that looks: building it (a map of every
	// directory) was 3 % of a first `cgcat scan`, which never looks.
	counted bool
	once    sync.Once
	offs    []uint32         // where entry i begins
	ix      map[dirKey]int32 // a directory's entry
}

// index reads every entry; a file with any malformed entry is treated as
// empty (never half trusted).
func (f *cacheFile) index() {
	f.once.Do(func() {
		n := min(f.n, len(f.body)/entryMin)
		offs := make([]uint32, 0, n)
		ix := make(map[dirKey]int32, n)
		for off := 0; off < len(f.body); {
			k, end, ok := checkEntry(f.body, off)
			if !ok || len(offs) >= 1<<31-1 {
				return
			}
			ix[k] = int32(len(offs))
			offs = append(offs, uint32(off))
			off = end
		}
		f.offs, f.ix = offs, ix
	})
}

func (f *cacheFile) count() int {
	if f.counted {
		return f.n
	}
	f.index()
	return len(f.offs)
}

// entryMin is the size of the smallest entry (no names).
const entryMin = passAt + 8 + 1 + 3

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
	file  *cacheFile
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

// openDirCache returns the cache of dataDir for walks with the cache key
// walk (nil where there can be none: no boot id on this platform). A
// missing, damaged or foreign file gives an empty cache.
func openDirCache(dataDir string, walk uint64) *dirCache {
	boot := bootID()
	if boot == "" {
		return nil
	}
	c := &dirCache{path: filepath.Join(dataDir, cacheName), walk: walk, boot: boot, margin: racyMargin}
	c.devs.Store(&sync.Map{})
	if f := loadCache(c.path, walk, boot); f != nil {
		c.kept.Store(newKept(f))
	}
	return c
}

// loadCache reads the file, or takes it from memo when the file is the one
// memo holds; nil when there is none to trust.
func loadCache(path string, walk uint64, boot string) *cacheFile {
	fs, ok := stampFile(path)
	if !ok {
		return nil
	}
	memo.Lock()
	defer memo.Unlock()
	if memo.path == path && memo.stamp == fs && memo.walk == walk && memo.file != nil {
		return memo.file
	}
	if fs.size > maxCacheBytes+1<<20 {
		return nil
	}
	// Never waits on a FIFO put in its place, and reads it bounded.
	r, err := nofollow.ReadRegular(path, maxCacheBytes+1<<20, true)
	if err != nil || !r.Whole() {
		return nil
	}
	body, n, ok := parseCache(r.Data, walk, boot)
	if !ok {
		return nil
	}
	f := &cacheFile{body: frozen(body), n: n}
	memo.path, memo.stamp, memo.walk, memo.file = path, fs, walk, f
	return f
}

// frozen is b as a string without a copy: b is never written again (the
// entries of a cache file are read-only once made).
func frozen(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// trusts reports whether listings of directories on dev may be kept: its
// file system keeps directory times.
func (c *dirCache) trusts(d *nofollow.Dir, dev uint64) bool {
	devs := c.devs.Load()
	if ok, known := devs.Load(dev); known {
		return ok.(bool)
	}
	t, err := d.FSType()
	ok := err == nil && timedFS[t]
	devs.Store(dev, ok)
	return ok
}

// get returns the listing kept for a directory with these identity and
// times, or nil. A kept listing is confirmed for this pass.
func (c *dirCache) get(t nofollow.Times) *listing {
	k := keyOf(t.ID)
	if c.revisits && c.nFresh.Load() > 0 {
		// Listed in this pass already (a directory reached twice, by a
		// followed symlink): that listing is the newest.
		c.mu.Lock()
		off, ok := c.freshIx[k]
		var e cacheEntry
		if ok {
			e, ok = decodeEntry(c.fresh, int(off))
		}
		c.mu.Unlock()
		if ok {
			if e.mtime == t.Mtime && e.ctime == t.Ctime {
				return &e.ls
			}
			return nil
		}
	}
	kept := c.kept.Load()
	if kept == nil {
		return nil
	}
	kept.file.index()
	i, ok := kept.file.ix[k]
	if !ok {
		return nil
	}
	e, ok := decodeEntry(kept.file.body, int(kept.file.offs[i]))
	if !ok || e.mtime != t.Mtime || e.ctime != t.Ctime {
		return nil
	}
	kept.confirm(int(i))
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
	defer c.mu.Unlock()
	before := len(c.fresh)
	if cap(c.fresh)-before < maxEntryGuess {
		// Doubled, not grown by append's quarter for large slices: the
		// copies of a first pass's megabytes of entries were 2 % of its
		// CPU.
		c.fresh = slices.Grow(c.fresh, max(before, 64<<10))
	}
	b := appendEntry(c.fresh, t, c.pass, ls)
	if len(b) > maxCacheBytes {
		c.fresh = b[:before]
		return // full: the rest is listed every time
	}
	c.fresh = b
	c.nEntries++
	if !c.revisits && c.kept.Load() == nil {
		// Nothing kept to tell apart from (a first pass) and no directory
		// met twice: no index of this pass's entries is ever asked for
		// (a map of 112k entries was a tenth of a first pass's CPU).
		return
	}
	if c.freshIx == nil {
		c.freshIx = map[dirKey]uint32{}
	}
	c.freshIx[keyOf(t.ID)] = uint32(before)
	c.nFresh.Store(int32(len(c.freshIx)))
}

// maxEntryGuess: keep makes room for at least this much before appending
// an entry (a larger one grows the buffer as append does).
const maxEntryGuess = 4 << 10

// startPass makes pass the one entries are confirmed in from now on.
// Entries confirmed in an earlier pass stay in the file until a pass ends
// without confirming them.
func (c *dirCache) startPass(pass uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pass == pass {
		return
	}
	if c.pass != 0 && c.dirty() {
		// A new pass in the same scanner without a save at the end of
		// the last (not the usual way): what the last one listed or
		// confirmed is kept as if written.
		_, f := c.merged(false)
		c.rebase(f)
	}
	c.pass = pass
	c.devs.Store(&sync.Map{})
}

// dirty reports whether anything was listed or confirmed since the file
// was last written (c.mu held).
func (c *dirCache) dirty() bool {
	kept := c.kept.Load()
	return len(c.fresh) > c.saved || kept != nil && kept.touched.Load()
}

// rebase makes body the kept entries, with nothing confirmed or listed
// since (c.mu held).
func (c *dirCache) rebase(f *cacheFile) {
	c.kept.Store(newKept(f))
	c.fresh, c.freshIx, c.saved, c.nEntries = nil, nil, 0, 0
	c.nFresh.Store(0)
}

// merged is the file to write (c.mu held): the entries listed in this
// pass, then the kept ones not listed again that were confirmed in this
// pass (by this scanner, or by an earlier one of the pass whose file this
// one read), and, while the pass goes on, all the others too. It returns
// the whole file and its entries.
func (c *dirCache) merged(passEnded bool) ([]byte, *cacheFile) {
	kept := c.kept.Load()
	size := len(c.fresh)
	if kept != nil {
		size += len(kept.file.body)
	}
	out := make([]byte, 0, len(cacheMagic)+8+binary.MaxVarintLen64+len(c.boot)+24+min(size, maxCacheBytes))
	out = append(out, cacheMagic...)
	out = binary.LittleEndian.AppendUint64(out, ListingDerivation())
	out = binary.AppendUvarint(out, uint64(len(c.boot)))
	out = append(out, c.boot...)
	out = binary.LittleEndian.AppendUint64(out, c.walk)
	countAt := len(out)
	out = binary.LittleEndian.AppendUint64(out, 0)
	head := len(out)
	out = append(out, c.fresh...)
	n := c.nEntries
	if kept != nil {
		kept.file.index()
		f := kept.file
		for i, off := range f.offs {
			end := len(f.body)
			if i+1 < len(f.offs) {
				end = int(f.offs[i+1])
			}
			r := cacheReader[string]{b: f.body, off: int(off)}
			k := dirKey{r.u64(), r.u64()}
			r.off += 16
			pass := r.u64()
			if _, again := c.freshIx[k]; again {
				continue // listed anew
			}
			confirmed := kept.isConfirmed(i)
			if passEnded && !confirmed && pass != c.pass {
				continue // the pass did not meet it
			}
			if len(out)-head+end-int(off) > maxCacheBytes {
				break
			}
			at := len(out)
			out = append(out, f.body[off:end]...)
			if confirmed {
				binary.LittleEndian.PutUint64(out[at+passAt:], c.pass)
			}
			n++
		}
	}
	binary.LittleEndian.PutUint64(out[countAt:], uint64(n))
	body := out[head:]
	out = binary.LittleEndian.AppendUint64(out, xxh3.Hash(out))
	return out, &cacheFile{body: frozen(body), n: n, counted: true}
}

// save writes the file when it would change: at the end of a pass (which
// drops the entries the pass did not confirm), and when the scanner lets
// the lease go having listed or confirmed anything since the last write.
// Best effort: a failure only costs listings.
func (c *dirCache) save(passEnded bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.dirty() && !passEnded {
		return nil
	}
	if kept := c.kept.Load(); passEnded && len(c.fresh) == 0 && kept != nil && kept.count.Load() == int64(kept.file.count()) {
		// Nothing listed, everything met: the file would change only in
		// its entries' pass numbers, and nothing reads them before the
		// next pass has confirmed its own (an unchanged tree costs no
		// write). The next pass starts from the same file, indexed.
		kept = newKept(kept.file)
		c.kept.Store(kept)
		return nil
	}
	b, f := c.merged(passEnded)
	if passEnded {
		// What the next pass starts from (indexed when it first looks).
		c.rebase(f)
	} else {
		// The pass goes on from what is kept and confirmed in memory;
		// the file holds it too, for a scanner that takes the pass over.
		c.saved = len(c.fresh)
		if kept := c.kept.Load(); kept != nil {
			kept.touched.Store(false)
		}
	}
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
		memo.path, memo.stamp, memo.walk, memo.file = c.path, fs, c.walk, f
		memo.Unlock()
	}
	return nil
}
