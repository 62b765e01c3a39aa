package catalog

import (
	"os"
	"path/filepath"
	"sync"
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
// replaced, renamed over or changed.
type fileLook struct {
	ino, dev    uint64
	size        int64
	mod, change time.Time
	mode        os.FileMode
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
	if !ok1 || !ok2 || root != e.root || db != e.db {
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
	recheckCache.m[recheckKey{p.Root, pol.ViewKey()}] = recheckEntry{root: root, db: db, ck: ck}
}
