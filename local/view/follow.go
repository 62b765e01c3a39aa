package view

import (
	"errors"
	"io/fs"
	"os"
	"sync/atomic"
	"time"
)

// Follower reads what writers publish, without any lock on the store.
// Changed may be called from any goroutine at any time; Next calls must be
// serialised by the owner (the catalog).
type Follower struct {
	dataDir string
	seen    atomic.Pointer[stamp] // the pointer file as last read (nil: never)
	at      Pointer               // what the caller has applied: store, head
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

func stampOf(path string) stamp {
	fi, err := os.Stat(path)
	if err != nil {
		return stamp{}
	}
	return stamp{mod: fi.ModTime(), size: fi.Size(), ino: inode(fi), ok: true, racy: time.Since(fi.ModTime()) < racyPointer}
}

// NewFollower follows the views of dataDir from nothing.
func NewFollower(dataDir string) *Follower { return &Follower{dataDir: dataDir} }

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

// Changed reports, with one stat, whether the pointer moved since the last
// Next.
func (f *Follower) Changed() bool {
	seen := f.seen.Load()
	return seen == nil || seen.racy || stampOf(PointerFile(f.dataDir)) != *seen
}

// Next returns what was published since the last call. On any error the
// follower stays where it was, so the caller keeps its last good view.
func (f *Follower) Next() (Update, error) {
	st := stampOf(PointerFile(f.dataDir))
	started := f.seen.Load() != nil
	if started && st == *f.seen.Load() && !st.racy {
		return Update{}, nil
	}
	ptr, ok := ReadPointer(f.dataDir)
	if !ok {
		return Update{}, ErrNoView
	}
	var u Update
	from := f.at.Head
	if !started || ptr.StoreID != f.at.StoreID || ptr.Head < f.at.Head || f.at.Head < ptr.Base {
		// First read, another store in this data dir (deleted and made
		// again, or replaced), or the chain moved past us: a base.
		s, err := ReadBase(f.dataDir, ptr.Base)
		if err != nil {
			return Update{}, err
		}
		if s.StoreID != ptr.StoreID {
			return Update{}, ErrDamaged
		}
		u.Snapshot, from = s, ptr.Base
	}
	for seq := from + 1; seq <= ptr.Head; seq++ {
		d, err := ReadDelta(f.dataDir, seq)
		if errors.Is(err, fs.ErrNotExist) && u.Snapshot == nil {
			// Removed under us by a newer base: start from that instead.
			f.seen.Store(nil)
			return f.Next()
		}
		if err != nil {
			return Update{}, err
		}
		if d.StoreID != ptr.StoreID {
			return Update{}, ErrDamaged
		}
		u.Deltas = append(u.Deltas, d)
	}
	f.at = ptr
	f.seen.Store(&st)
	return u, nil
}

// At is the pointer of what the last successful Next brought.
func (f *Follower) At() Pointer { return f.at }
