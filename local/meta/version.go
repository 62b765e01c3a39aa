package meta

import (
	"embed"
	"io/fs"
	"strconv"
	"sync"

	"github.com/zeebo/xxh3"
)

// What this package reads from a project (the metadata of its record, and
// which files its stamp covers) is derived by this code: the readers'
// table, each parser, the limits. Derivation is the version of that code,
// computed from its own source files (embedded at build time) rather than
// kept by hand, so any change to a parser or the table gives a new version
// without anyone remembering to bump one. Every stamp (StampNames) carries
// it: a record whose metadata was read by other code (an earlier release)
// has a stamp that no longer matches, so the next scan pass reads its
// metadata again — in the background, keeping its id. A needless re-read
// after a comment edit costs one pass's reads; a missed one leaves records
// stale for good.

//go:embed clean.go git.go hint.go language.go manifest.go manifest_parse.go manifest_patterns.go meta.go readme.go stamp.go stamp_darwin.go stamp_linux.go stamp_other.go
var derivedFrom embed.FS

// derivedFiles are the files above, every non-test file of the package
// but this one (TestDerivationCoversEverySourceFile checks).
var derivedFiles = []string{"clean.go", "git.go", "hint.go", "language.go", "manifest.go", "manifest_parse.go", "manifest_patterns.go", "meta.go", "readme.go", "stamp.go", "stamp_darwin.go", "stamp_linux.go", "stamp_other.go"}

// Derivation is the version of the code that derives metadata and stamps.
var Derivation = sync.OnceValue(func() uint64 {
	h := xxh3.New()
	for _, name := range derivedFiles {
		b, err := fs.ReadFile(derivedFrom, name)
		if err != nil {
			panic(err) // embedded at build time
		}
		h.WriteString(name)
		h.WriteString(strconv.Itoa(len(b)))
		h.Write(b)
	}
	return h.Sum64()
})
