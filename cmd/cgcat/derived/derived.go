// Package derived lists, in one place, every kind of data cgcat derives
// and keeps between runs, with the version of the code that derived it, and
// what happens when a kept copy was derived by other code (an earlier or a
// later release, or another binary beside this one).
//
// Each version is computed where the derivation lives — from the code
// itself where that is possible (a hash of the deriving package's sources,
// embedded at build time), so a change cannot ship without its version
// changing — and is checked there, on every read. This table only gathers
// them, for `cgcat doctor` and for the tests that keep the list whole. It
// owns no data and must never decide anything at run time.
package derived

import (
	"fmt"

	"github.com/cgcat/cgcat/gbrain"
	"github.com/cgcat/cgcat/local/meta"
	"github.com/cgcat/cgcat/local/scan"
	"github.com/cgcat/cgcat/local/search"
	"github.com/cgcat/cgcat/local/store"
	"github.com/cgcat/cgcat/local/view"
)

// Kind is one kind of derived data.
type Kind struct {
	Name string // what is derived
	// Where it is kept.
	Where string
	// Version of the code that derives it in this binary.
	Version string
	// Computed: from the code itself, not kept by hand.
	Computed bool
	// Other says what happens to a copy derived by other code.
	Other string
}

// Table is every kind of derived data, in the order data flows.
func Table() []Kind {
	return []Kind{
		{Name: "project metadata", Where: "each record's metadata and metaStamp (catalog store)",
			Version: hex(meta.Derivation()), Computed: true,
			Other: "its stamp no longer matches: the next scan pass reads the project's metadata again, keeping its id"},
		{Name: "directory listings", Where: "scan.dircache",
			Version: hex(scan.ListingDerivation()), Computed: true,
			Other: "the file is ignored: every directory is listed again, and the file rewritten"},
		{Name: "search index", Where: "each published base (views/base-*) and the pointer",
			Version: hex(search.Derivation()), Computed: true,
			Other: "readers index the base's records again in memory; the next writer (or process start) publishes a base of its own"},
		{Name: "published catalog format", Where: "views/ and revision",
			Version: fmt.Sprint(view.Format),
			Other:   "an older format is ignored (readers read the store; writers publish this one); a newer one makes this binary read the store and say it is outdated"},
		{Name: "project cards", Where: "GBrain pages (card_version)",
			Version: fmt.Sprint(gbrain.CardVersion),
			Other:   "checked by the projector (package projection): a card of a newer version is not taken for one of ours (gbrain.ErrCardTooNew)"},
		{Name: "catalog store format", Where: "catalog.db (meta/format)",
			Version: fmt.Sprint(store.FormatVersion),
			Other:   "a newer store is refused with a clear message, never misread"},
	}
}

func hex(v uint64) string { return fmt.Sprintf("%016x", v) }

// Summary is the table on one line.
func Summary() string {
	s := ""
	for i, k := range Table() {
		if i > 0 {
			s += ", "
		}
		v := k.Version
		if k.Computed {
			v = v[:8]
		}
		s += k.Name + " " + v
	}
	return s
}
