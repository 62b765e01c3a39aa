package meta

import (
	"embed"
	"io/fs"
	"strconv"
	"strings"
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

// Every file of the package is embedded (test files too: a pattern cannot
// leave them out); derivedFiles keeps the sources, so an edit of a test
// never changes the version, and a file added to the package is part of it
// without anyone listing it.
//
//go:embed *.go
var derivedFrom embed.FS

// derivedFiles are the package's non-test files but this one, by name.
var derivedFiles = sync.OnceValue(func() []string {
	ents, err := fs.ReadDir(derivedFrom, ".")
	if err != nil {
		panic(err) // embedded at build time
	}
	var names []string
	for _, e := range ents {
		if n := e.Name(); !strings.HasSuffix(n, "_test.go") && n != "version.go" {
			names = append(names, n)
		}
	}
	return names // in name order (fs.ReadDir sorts)
})

// Derivation is the version of the code that derives metadata and stamps.
var Derivation = sync.OnceValue(func() uint64 {
	h := xxh3.New()
	for _, name := range derivedFiles() {
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
