package view

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync/atomic"
	"time"
)

// Follower reads what writers publish, without any lock on the store.
// Changed may be called from any goroutine at any time; Next calls must be
// serialised by the owner (the catalog).
//
// The published files are a copy; the store is the authority. When they
// cannot be used — a base or delta missing, short, failing its checksum or
// its bounds, changed under a reader's mapping, or of another format — a
// follower answers from the previous base and the deltas after it when they
// are whole, else from the store itself (the fallback its owner gives, which
// reads the store without waiting for its lock), and leaves a note
// (ReportDamage) so that the next writer publishes a whole base again.
type Follower struct {
	dataDir string
	seen    atomic.Pointer[stamp] // the pointer file as last read (nil: never)
	at      Pointer               // what the caller has applied: store, head
	// base is the base last handed out: a mapped one is watched for a
	// change under its mapping (Base.Moved).
	base atomic.Pointer[Base]
	// failed is the pointer's stamp when the fallback last failed too, and
	// until when not to try again for that same stamp.
	failed   atomic.Pointer[failure]
	fallback func() (*Snapshot, error)
	// healed is the problem the last Next worked around (nil: none).
	healed error
}

type failure struct {
	st    stamp
	until time.Time
}

type stamp struct {
	mod  time.Time
	size int64
	ino  uint64
	ok   bool
	// racy: the file had changed within racyPointer of this stat. A
	// rewrite in the same clock tick can leave every field as it was (the
	// size is often the same, and a freed inode number comes back at
	// once), so such a stamp proves nothing: the pointer is read again.
	racy bool
}

// racyPointer is longer than any local file system's timestamp tick.
const racyPointer = time.Second

// retryFallback is how long a follower whose fallback failed waits before
// trying again while the pointer stays as it was.
const retryFallback = time.Second

func stampOf(path string) stamp {
	fi, err := os.Stat(path)
	if err != nil {
		return stamp{}
	}
	return stamp{mod: fi.ModTime(), size: fi.Size(), ino: inode(fi), ok: true, racy: time.Since(fi.ModTime()) < racyPointer}
}

// NewFollower follows the views of dataDir from nothing.
func NewFollower(dataDir string) *Follower { return &Follower{dataDir: dataDir} }

// SetFallback gives the follower a way to read the whole catalog from the
// store (its authority) when the published files cannot be used. It must
// not wait for the store's lock. Call it before the first Next.
func (f *Follower) SetFallback(read func() (*Snapshot, error)) { f.fallback = read }

// Update is what a Next call brings: either a whole Snapshot (the first
// time, after a store change, or when the deltas a reader needs are gone)
// or the deltas after what was applied, in order. Both empty: nothing new.
type Update struct {
	Snapshot *Snapshot
	Deltas   []*Delta
}

// Empty reports whether there is nothing to apply.
func (u Update) Empty() bool { return u.Snapshot == nil && len(u.Deltas) == 0 }

// ErrNoView means nothing is published yet (a new data dir, or one written
// by an older cgcat that a writer has not republished yet).
var ErrNoView = errors.New("no published catalog yet")

// Changed reports, with one stat (and one fstat of a mapped base), whether
// the pointer moved, or the mapped base changed, since the last Next.
func (f *Follower) Changed() bool {
	if f.BaseMoved() {
		return true
	}
	seen := f.seen.Load()
	if seen != nil && !seen.racy && stampOf(PointerFile(f.dataDir)) == *seen {
		return false
	}
	if fl := f.failed.Load(); fl != nil && time.Now().Before(fl.until) && stampOf(PointerFile(f.dataDir)) == fl.st {
		return false
	}
	return true
}

// BaseMoved reports whether the base the last Next brought changed under
// it (truncated or written in place): what is read from it now may be
// another file's bytes, so a reader must not answer from it.
func (f *Follower) BaseMoved() bool {
	b := f.base.Load()
	return b != nil && b.Moved()
}

// Healed is the problem with the published files that the last Next
// worked around (by the previous base, or the store), or nil.
func (f *Follower) Healed() error { return f.healed }

// Next returns what was published since the last call. On an error the
// follower stays where it was, so the caller keeps its last good view.
func (f *Follower) Next() (Update, error) {
	st := stampOf(PointerFile(f.dataDir))
	started := f.seen.Load() != nil
	moved := f.BaseMoved()
	if started && !moved && st == *f.seen.Load() && !st.racy {
		return Update{}, nil
	}
	f.healed = nil
	ptr, err := readPointer(f.dataDir)
	if started && st.ok && errors.Is(err, ErrNoView) && !moved {
		// An older cgcat still running beside this one published in its
		// own format. Reading the store again on each of its commits
		// would cost seconds at 100k records: keep the view held until a
		// writer of this format publishes again (every process start and
		// every commit of a newer process does).
		f.healed = err
		f.seen.Store(&st)
		return Update{}, nil
	}
	if err != nil {
		return f.fallBack(st, nil, err)
	}
	wholeBase := !started || moved || ptr.StoreID != f.at.StoreID || ptr.Head < f.at.Head || f.at.Head < ptr.Base
	u, err := f.read(ptr, wholeBase)
	if errors.Is(err, errRemoved) {
		// The deltas we needed were removed by a newer base: read that.
		u, err = f.read(ptr, true)
	}
	if err != nil {
		return f.fallBack(st, &ptr, err)
	}
	if u.Snapshot != nil {
		f.base.Store(u.Snapshot.Base)
		if u.Snapshot.Reindexed {
			f.healed = fmt.Errorf("%s: its search index was built by another version of cgcat", baseName(ptr.Base))
			ReportDamage(f.dataDir, ptr, f.healed)
		}
	}
	f.at = ptr
	f.seen.Store(&st)
	f.failed.Store(nil)
	return u, nil
}

var errRemoved = errors.New("published changes removed by a newer base")

// read reads what ptr publishes after what was applied: the base (or, when
// it cannot be used, the previous base) and the deltas after it.
func (f *Follower) read(ptr Pointer, wholeBase bool) (Update, error) {
	var u Update
	from := f.at.Head
	if wholeBase {
		s, err := ReadBase(f.dataDir, ptr.Base)
		if err == nil && s.StoreID != ptr.StoreID {
			err = fmt.Errorf("%s: %w (of another store)", baseName(ptr.Base), ErrDamaged)
		}
		from = ptr.Base
		if err != nil {
			prev, seq, perr := previousBase(f.dataDir, ptr)
			if perr != nil {
				return u, err
			}
			s, from = prev, seq
			f.healed = err
			ReportDamage(f.dataDir, ptr, err)
		}
		u.Snapshot = s
	}
	for seq := from + 1; seq <= ptr.Head; seq++ {
		d, err := ReadDelta(f.dataDir, seq)
		if errors.Is(err, fs.ErrNotExist) && u.Snapshot == nil {
			return u, errRemoved
		}
		if err == nil && d.StoreID != ptr.StoreID {
			err = fmt.Errorf("%s: %w (of another store)", deltaName(seq), ErrDamaged)
		}
		if err != nil {
			return u, err
		}
		u.Deltas = append(u.Deltas, d)
	}
	return u, nil
}

// previousBase is the newest base before ptr's of the same store, and its
// seq: with the deltas after it (kept until the base after next), it gives
// what ptr publishes when ptr's own base cannot be read.
func previousBase(dataDir string, ptr Pointer) (*Snapshot, uint64, error) {
	ents, err := os.ReadDir(Dir(dataDir))
	if err != nil {
		return nil, 0, err
	}
	best, found := uint64(0), false
	for _, e := range ents {
		if seq, ok := seqOf(e.Name()); ok && e.Name() == baseName(seq) && seq < ptr.Base && (!found || seq > best) {
			best, found = seq, true
		}
	}
	if !found {
		return nil, 0, ErrNoView
	}
	s, err := ReadBase(dataDir, best)
	if err != nil {
		return nil, 0, err
	}
	if s.StoreID != ptr.StoreID {
		return nil, 0, ErrDamaged
	}
	return s, best, nil
}

// fallBack answers from the store when the published files cannot be used
// (cause), and asks the next writer to publish a whole base (when the
// pointer was read: a writer republishes anyway when it cannot read it).
func (f *Follower) fallBack(st stamp, ptr *Pointer, cause error) (Update, error) {
	if f.fallback == nil {
		return Update{}, cause
	}
	if ptr != nil {
		ReportDamage(f.dataDir, *ptr, cause)
	}
	s, err := f.fallback()
	if err == nil {
		var from *Base
		if b := f.base.Load(); b != nil && f.at.StoreID == s.StoreID && !b.Moved() {
			from = b // what this reader holds: only changes are indexed again
		}
		s, err = BuildBase(s, from)
	}
	if err != nil {
		f.failed.Store(&failure{st: st, until: time.Now().Add(retryFallback)})
		if errors.Is(cause, ErrNoView) && !st.ok {
			return Update{}, cause
		}
		return Update{}, fmt.Errorf("%w; reading the store instead failed too: %v", cause, err)
	}
	f.healed = cause
	f.at = Pointer{StoreID: s.StoreID, Base: s.Seq, Head: s.Seq, Revision: s.Revision}
	f.base.Store(s.Base)
	f.seen.Store(&st)
	f.failed.Store(nil)
	return Update{Snapshot: s}, nil
}

// At is the pointer of what the last successful Next brought.
func (f *Follower) At() Pointer { return f.at }
