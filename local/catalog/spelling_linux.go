//go:build linux

package catalog

import (
	"sync"
	"time"

	"github.com/cgcat/cgcat/local/pathid"
)

// listedSpelling is root as its directories list it, for a root that
// marker.ProbeRoot just opened below top with no symlink in any component
// (resolving symlinks again, as pathid.Canonical does, would only repeat an
// lstat per name). The names of top itself, a discovery root, are looked
// at no more than once per topTTL; those below it every time.
func listedSpelling(root, top string) (string, error) {
	if top == "" || !topListed(top) {
		return pathid.OnDiskSpelling(root)
	}
	return pathid.OnDiskSpellingBelow(top, root)
}

// topTTL bounds how long a discovery root found spelled as listed is
// trusted to be: less than recheckTTL, for which a whole re-check verdict
// is trusted.
const topTTL = time.Second

var topsListed struct {
	sync.Mutex
	at map[string]time.Time
}

func topListed(top string) bool {
	topsListed.Lock()
	at, ok := topsListed.at[top]
	topsListed.Unlock()
	if ok && time.Since(at) < topTTL {
		return true
	}
	if s, err := pathid.OnDiskSpelling(top); err != nil || s != top {
		return false
	}
	topsListed.Lock()
	defer topsListed.Unlock()
	if topsListed.at == nil || len(topsListed.at) > 256 {
		topsListed.at = map[string]time.Time{}
	}
	topsListed.at[top] = time.Now()
	return true
}
