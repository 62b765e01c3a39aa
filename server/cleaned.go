package server

import (
	"sync"

	"github.com/cgcat/cgcat/local"
)

// shown is what an answer shows of a record's metadata, cleaned and
// bounded (dataText, capList). It depends on the metadata alone, so it is
// worked out once per record and metadata hash, not once per call: a page
// of 50 cleaned ~150 strings rune by rune on every call (6 % of a serve's
// CPU under bench/load.sh).
type shown struct {
	name, description, version string
	packages                   []string
}

// shownCache holds shown by record; reset whole when it grows past
// shownCacheMax (a catalog's hot records come back at once).
var shownCache struct {
	sync.Mutex
	m map[shownKey]*shown
}

type shownKey struct {
	id   string
	hash uint64
}

const shownCacheMax = 1 << 14

// shownOf is p's shown metadata. Callers must not change it.
func shownOf(p *local.Project) *shown {
	if p.MetaHash == 0 {
		return cleanShown(p) // no hash to key it by
	}
	k := shownKey{p.ID, p.MetaHash}
	shownCache.Lock()
	s := shownCache.m[k]
	shownCache.Unlock()
	if s != nil {
		return s
	}
	s = cleanShown(p)
	shownCache.Lock()
	if shownCache.m == nil || len(shownCache.m) >= shownCacheMax {
		shownCache.m = make(map[shownKey]*shown)
	}
	shownCache.m[k] = s
	shownCache.Unlock()
	return s
}

func cleanShown(p *local.Project) *shown {
	return &shown{
		name:        dataText(p.Meta.Name, 120),
		description: dataText(firstNonEmpty(p.Meta.Description, p.Meta.Readme), 300),
		packages:    capList(p.Meta.Packages, 8, 200),
		version:     dataText(p.Meta.Version, 64),
	}
}
