package search

import (
	"embed"
	"io/fs"
	"strconv"
	"sync"
	"unicode"

	"github.com/zeebo/xxh3"
)

// What a frozen index holds is derived from its documents by this
// package's tokenizer and stemmer (tokenize.go) and its builder (which
// fields, which whole-value and exact forms: index.go), and by the Unicode
// tables of the Go release that built it (which runes are CJK, letters,
// upper case). An index derived by other code must not be searched by this
// one: a term the old stemmer kept whole is one this one never looks up.
//
// So the version of that derivation is computed from the code itself (a
// hash of those source files, embedded at build time, and the Unicode
// version), not kept by hand: any change to them, comments too, gives a
// new version, and bases written before are rebuilt (view.ReadBase builds
// a stale base's index again in memory; the next writer publishes a new
// one). A needless rebuild after a comment edit costs one base; a missed
// one costs wrong answers.

//go:embed tokenize.go index.go
var derivedFrom embed.FS

// Derivation is the version of what this code derives into an index.
var Derivation = sync.OnceValue(func() uint64 {
	h := xxh3.New()
	for _, name := range []string{"tokenize.go", "index.go"} {
		b, err := fs.ReadFile(derivedFrom, name)
		if err != nil {
			panic(err) // embedded at build time: cannot fail
		}
		h.WriteString(name)
		h.WriteString(strconv.Itoa(len(b)))
		h.Write(b)
	}
	h.WriteString(unicode.Version)
	return h.Sum64() | 1 // never 0, which an index of no known derivation has
})
