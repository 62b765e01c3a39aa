package catalog

import (
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/marker"
)

// A full re-check descends from the discovery root with no symlink on the
// way (a few dozen system calls); a busy host asks for the same roots again
// and again. A positive answer is remembered for a moment, together with
// what the root and its database looked like; a later call reuses it only
// if both still look exactly the same (two lstat calls): a root renamed,
// swapped for a symlink or moved under a mount, or a database replaced,
// looks different and is checked in full again.

// fullChecks counts re-checks done in full (tests tell a reuse by it).
var fullChecks atomic.Int64

// recheckTTL bounds how long a positive re-check is reused.
const recheckTTL = 2 * time.Second

type recheckKey struct {
	root string
	view uint64
}

type recheckEntry struct {
	root, db fileLook
	ck       Check
}

// fileLook is what an lstat shows of a file: enough to tell it was not
// replaced, renamed over or changed. Times are in nanoseconds; the mode
// keeps the type bits only (a chmod moves the change time anyway).
type fileLook struct {
	ino, dev    uint64
	size        int64
	mod, change int64
	mode        os.FileMode
}

// rootLook is the part of a look a directory is remembered by: identity
// and times (an entry added or removed moves them).
func rootLook(l fileLook) fileLook {
	return fileLook{ino: l.ino, dev: l.dev, mod: l.mod, change: l.change}
}

// checkedLooks are the looks of the root and the database as the full
// check read them from its own descriptors, when the platform gives them.
func checkedLooks(rc marker.RootCheck) (root, db fileLook, ok bool) {
	if rc.RootTimes.Mtime == 0 || rc.DBInfo.Mtime == 0 {
		return fileLook{}, fileLook{}, false
	}
	root = fileLook{ino: rc.RootTimes.ID.Ino, dev: rc.RootTimes.ID.Dev, mod: rc.RootTimes.Mtime, change: rc.RootTimes.Ctime}
	db = fileLook{ino: rc.DBInfo.ID.Ino, dev: rc.DBInfo.ID.Dev, size: rc.DBInfo.Size, mod: rc.DBInfo.Mtime, change: rc.DBInfo.Ctime, mode: rc.DBInfo.Mode.Type()}
	return root, db, true
}

var recheckCache struct {
	sync.Mutex
	m map[recheckKey]recheckEntry
}

func lookAt(p string) (fileLook, bool) {
	fi, err := os.Lstat(p)
	if err != nil {
		return fileLook{}, false
	}
	return look(fi), true
}

func recheckCached(p *local.Project, pol Policy) (Check, bool) {
	key := recheckKey{p.Root, pol.ViewKey()}
	recheckCache.Lock()
	e, ok := recheckCache.m[key]
	recheckCache.Unlock()
	if !ok || time.Since(e.ck.At) > recheckTTL {
		return Check{}, false
	}
	root, ok1 := lookAt(p.Root)
	db, ok2 := lookAt(filepath.Join(p.Root, marker.Dir, marker.File))
	if !ok1 || !ok2 || rootLook(root) != e.root || db != e.db {
		return Check{}, false
	}
	ck := e.ck
	ck.At = time.Now().UTC()
	return ck, true
}

func rememberRecheck(p *local.Project, pol Policy, ck Check, root, db fileLook) {
	recheckCache.Lock()
	defer recheckCache.Unlock()
	if recheckCache.m == nil || len(recheckCache.m) > 4096 {
		recheckCache.m = map[recheckKey]recheckEntry{}
	}
	recheckCache.m[recheckKey{p.Root, pol.ViewKey()}] = recheckEntry{root: rootLook(root), db: db, ck: ck}
}

// Check is the outcome of a live re-check of one record.
type Check struct {
	OK           bool // root canonical and unchanged, marker present, policy allows
	Allowed      bool // the live policy allows the root at all
	Availability local.Availability
	IndexState   local.IndexState
	Why          string
	At           time.Time
}

// Recheck looks at a record's root right now: it still exists, it is still
// the same canonical path (a root swapped for a symlink to elsewhere
// fails), it is not reached through an alias of a deny root, its own marker
// is there, and the live policy allows it.
func Recheck(p *local.Project, pol Policy) Check {
	ck := Check{At: time.Now().UTC(), Allowed: pol.AllowsRecord(p)}
	if !ck.Allowed {
		ck.Availability, ck.IndexState, ck.Why = local.Unknown, local.MarkerUnknown, "not shared with this frontend"
		return ck
	}
	if cached, ok := recheckCached(p, pol); ok {
		return cached
	}
	fullChecks.Add(1)
	// One descent from the discovery root with no symlink in the way
	// gives the verdict and the identity of every directory on the way.
	top := pol.discoveryRootOf(p.Root)
	var rc marker.RootCheck
	if len(pol.denyLive) > 0 {
		rc = marker.ProbeRoot(p.Root, top)
	} else {
		// No deny root to match the ancestors against: the root is
		// opened in one call, still with no symlink on the way.
		rc = marker.ProbeRootAlone(p.Root)
	}
	// What the root and database looked like to the check, remembered
	// with a positive verdict: read from the check's own descriptors
	// (Linux), else by lstat afterwards. Either way a root or database
	// changed after being looked at never matches the memory again.
	rootLook, dbLook, looked := checkedLooks(rc)
	ck.Availability, ck.IndexState, ck.Why = rc.Availability, rc.IndexState, rc.Why
	if !rc.Project {
		if ck.Availability == local.Present {
			ck.Availability = local.Missing
		}
		if ck.Availability == local.Missing {
			// Under a discovery root that is absent or an empty mount
			// point, a project is on a volume that is offline, not
			// deleted (R13, R42).
			if why, off := marker.Offline(top); off {
				ck.Availability, ck.IndexState, ck.Why = local.Inaccessible, local.MarkerUnknown, why
			}
		}
		return ck
	}
	// On a case-insensitive volume a case-only rename keeps the directory
	// but not the spelling the record hands out.
	if canon, err := listedSpelling(p.Root, top); err != nil || canon != filepath.Clean(p.Root) {
		ck.Availability, ck.IndexState = local.Missing, local.MarkerUnknown
		ck.Why = "the root is no longer the same directory as recorded (renamed, or a symlink stands in its place)"
		return ck
	}
	if pol.deniesAny(append(rc.Ancestors, rc.ID)) {
		ck.Allowed = false
		ck.Availability, ck.Why = local.Unknown, "not shared with this frontend"
		return ck
	}
	ck.OK = true
	if !looked {
		var ok1, ok2 bool
		rootLook, ok1 = lookAt(p.Root)
		dbLook, ok2 = lookAt(filepath.Join(p.Root, marker.Dir, marker.File))
		looked = ok1 && ok2
	}
	if looked {
		rememberRecheck(p, pol, ck, rootLook, dbLook)
	}
	return ck
}
