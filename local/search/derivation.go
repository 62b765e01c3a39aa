package search

import (
	"embed"
	"io/fs"
	"strconv"
	"sync"
	"unicode"

	"github.com/zeebo/xxh3"
)

// What a frozen index holds is derived from records by this package's
// term pipeline — which fields a record gives (document.go), how a field's
// text becomes terms (tokenize.go: tokenising, folding, CJK bigrams,
// stemming), which terms, lengths, whole-value and exact forms a document
// holds (analyze.go) — and by what the frozen writer keeps of them
// (frozen_write.go: the fuzzy dictionary, the listing order), and by the
// Unicode tables of the Go release that built it (which runes are CJK,
// letters, upper case). An index derived by other code must not be
// searched by this one: a term the old stemmer kept whole is one this one
// never looks up.
//
// So the version of that derivation is computed from the code itself (a
// hash of those source files, embedded at build time, and the Unicode
// version), not kept by hand: any change to them, comments too, gives a
// new version, and bases written before are rebuilt (view.ReadBase builds
// a stale base's index again in memory; the next writer publishes a new
// one). A needless rebuild after a comment edit costs one base; a missed
// one costs wrong answers. The live index (index.go, postings.go) only
// installs what analyze derives, so it is not part of the hash.

//go:embed document.go tokenize.go analyze.go frozen_write.go
var derivedFrom embed.FS

// Derivation is the version of what this code derives into an index.
var Derivation = sync.OnceValue(func() uint64 {
	h := xxh3.New()
	files, err := fs.ReadDir(derivedFrom, ".") // the files above, by name
	if err != nil {
		panic(err) // embedded at build time: cannot fail
	}
	for _, f := range files {
		b, err := fs.ReadFile(derivedFrom, f.Name())
		if err != nil {
			panic(err)
		}
		h.WriteString(f.Name())
		h.WriteString(strconv.Itoa(len(b)))
		h.Write(b)
	}
	h.WriteString(unicode.Version)
	return h.Sum64() | 1 // never 0, which an index of no known derivation has
})
