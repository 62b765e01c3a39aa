package search

// The term pipeline: one place where a document's text becomes what the
// index holds — the fields, each field's terms (through tokenize.go) with
// their frequencies, the field lengths, the whole-value terms and exact
// keys of the name fields, and which terms enter the fuzzy dictionary.
// The live index installs what analyze gives (Put); the frozen form is
// written from the live index; queries and reasons tokenise with the same
// tokenizer and stemmer. Part of Derivation.

import (
	"slices"
	"strings"
	"sync"
	"unicode"
)

// field is one of a document's search fields, in the order the term
// frequencies of a posting pack them.
type field uint8

const (
	fName field = iota
	fAlias
	fPackage
	fKeyword
	fTag
	fDescription
	fReadme
	fPath
	numFields
)

// maxWhole bounds the whole-value terms kept per document (name, package,
// its partial form: rarely more than two distinct).
const maxWhole = 3

// exactKind is which exact table a key of a name field goes to.
type exactKind uint8

const (
	exPkg     exactKind = iota // normalised full package name
	exPkgPart                  // normalised partial form (unscoped, last path segment, artifact id)
	exAlias
	exName
	numExact
)

// analysis is one document as the index takes it: every term its fields
// tokenise to with the term's frequency in each field, the tokens per
// field, the values the exact tiers compare and reasons quote, and which
// of its terms are whole values. Put computes it outside the index lock
// and installs it; the frozen form is written from what was installed, so
// the live and the frozen index hold the same terms by construction.
type analysis struct {
	entry docEntry // id, sort key, and the name-field values as spelt
	terms []string // distinct terms, in the order the fields give them
	tfs   []uint32 // per term: its frequency in each field, four bits per field
	flen  [numFields]uint16
	// whole are the terms (indices into terms) that are a whole name,
	// alias, package name or partial form: at most maxWhole, distinct.
	whole []int

	tok  tokenizer
	emit emitFunc
	f    field
	pos  map[string]int32 // term → index in terms

	// Put's scratch, kept with the pooled analysis.
	pairs []idTF
	enc   []byte
}

var analysisPool = sync.Pool{New: func() any {
	a := &analysis{pos: map[string]int32{}}
	a.emit = a.onTerm
	return a
}}

// analyze derives d's terms. The caller hands the analysis back with
// release once it has installed it.
func analyze(d *Doc) *analysis {
	a := analysisPool.Get().(*analysis)
	a.entry = docEntry{
		id: d.ID, sortKey: d.SortKey, live: true,
		name: strings.TrimSpace(d.Name), aliases: distinct(d.Aliases), packages: distinct(d.Packages),
	}
	clear(a.pos)
	a.terms, a.tfs, a.flen, a.whole = a.terms[:0], a.tfs[:0], [numFields]uint16{}, a.whole[:0]
	a.add(fName, d.Name)
	for _, s := range d.Aliases {
		a.add(fAlias, s)
	}
	for _, s := range d.Packages {
		a.add(fPackage, s)
	}
	for _, s := range d.Keywords {
		a.add(fKeyword, s)
	}
	for _, s := range d.Tags {
		a.add(fTag, s)
	}
	a.add(fDescription, d.Description)
	a.add(fReadme, d.Readme)
	a.add(fPath, d.Path)
	// Whole-value terms are the document's own terms (one-segment values:
	// react-router gives reactrouter, React Router gives none), so they
	// never depend on other documents.
	for _, w := range a.entry.wholeForms() {
		if i, ok := a.pos[w]; ok && len(a.whole) < maxWhole && !slices.Contains(a.whole, int(i)) {
			a.whole = append(a.whole, int(i))
		}
	}
	return a
}

func (a *analysis) release() {
	a.entry = docEntry{}
	analysisPool.Put(a)
}

func (a *analysis) add(f field, s string) {
	a.f = f
	a.tok.tokenize(s, a.emit)
}

func (a *analysis) onTerm(kind tokKind, term []byte, _, _, _ int) {
	if kind != kindJoined && a.flen[a.f] < 0xFFFF {
		a.flen[a.f]++
	}
	i, ok := a.pos[string(term)]
	if !ok {
		i = int32(len(a.terms))
		t := string(term)
		a.pos[t] = i
		a.terms = append(a.terms, t)
		a.tfs = append(a.tfs, 0)
	}
	sh := uint(a.f) * 4
	if (a.tfs[i]>>sh)&15 < 15 {
		a.tfs[i] += 1 << sh
	}
}

// distinct returns the trimmed non-empty values of ss, each once whatever
// its case.
func distinct(ss []string) []string {
	var out []string
	for _, s := range ss {
		s = strings.TrimSpace(s)
		l := lowerFold(s)
		if s != "" && !slices.ContainsFunc(out, func(o string) bool { return foldEq(o, l) }) {
			out = append(out, s)
		}
	}
	return out
}

// wholeForms are the terms a whole value of a name field tokenises to when
// it is one segment: its letters and digits, stemmed.
func (e *docEntry) wholeForms() []string {
	var out []string
	add := func(v string) {
		if n := normalize(v); n != "" && len(n) <= maxTermLen {
			out = append(out, string(stem([]byte(n))))
		}
	}
	add(e.name)
	for _, a := range e.aliases {
		add(a)
	}
	for _, p := range e.packages {
		add(p)
		if form, _ := partialOf(p); form != "" {
			add(form)
		}
	}
	return out
}

// partialForm is a shorter spelling by which people name a package.
type partialForm struct {
	form  string
	label string // how it was derived, for the reason text
}

// partialForms derives the short names of a package name:
// "@scope/name" → "name"; Maven "group:artifact[:version]" → "artifact";
// a module path "host/org/name[/vN]" → "name".
func partialForms(p string) []partialForm {
	if form, label := partialOf(p); form != "" {
		return []partialForm{{form, label}}
	}
	return nil
}

// partialOf is partialForms' one form, or "", without allocating: it runs
// for candidates of a query.
func partialOf(p string) (form, label string) {
	switch {
	case strings.HasPrefix(p, "@") && strings.Contains(p, "/"):
		form, label = p[strings.IndexByte(p, '/')+1:], "without scope"
	case strings.Contains(p, ":") && !strings.Contains(p, "/"):
		form = p[strings.IndexByte(p, ':')+1:]
		if i := strings.IndexByte(form, ':'); i >= 0 {
			form = form[:i]
		}
		label = "artifact id"
	case strings.Contains(p, "/"):
		rest := strings.TrimRight(p, "/")
		i := strings.LastIndexByte(rest, '/')
		form = rest[i+1:]
		if i >= 0 && isMajorVersion(form) {
			rest = rest[:i]
			form = rest[strings.LastIndexByte(rest, '/')+1:]
		}
		label = "last path segment"
	}
	if form == "" || form == p || !strings.ContainsFunc(form, func(r rune) bool { c := classify(foldWidth(r)); return c == clAlnum || c == clCJK }) {
		return "", ""
	}
	return form, label
}

// isMajorVersion reports a Go major-version suffix such as "v2".
func isMajorVersion(s string) bool {
	if len(s) < 2 || (s[0] != 'v' && s[0] != 'V') {
		return false
	}
	for _, c := range s[1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// eachExact calls fn with every normalised key the document is found under
// in the exact tiers (what indexExact indexes).
func (e *docEntry) eachExact(fn func(k exactKind, key string)) {
	put := func(k exactKind, s string) {
		if key := normalize(s); key != "" {
			fn(k, key)
		}
	}
	put(exName, e.name)
	for _, a := range e.aliases {
		put(exAlias, a)
	}
	for _, p := range e.packages {
		put(exPkg, p)
		for _, pf := range partialForms(p) {
			put(exPkgPart, pf.form)
		}
	}
}

// nameTFs selects the name, alias and package fields of a posting's tfs.
const nameTFs = 1<<(4*fName) | 1<<(4*fAlias) | 1<<(4*fPackage) |
	2<<(4*fName) | 2<<(4*fAlias) | 2<<(4*fPackage) |
	4<<(4*fName) | 4<<(4*fAlias) | 4<<(4*fPackage) |
	8<<(4*fName) | 8<<(4*fAlias) | 8<<(4*fPackage)

func isNameField(f field) bool { return f == fName || f == fAlias || f == fPackage }

// letterSig is a term's letters as a set with counts up to two: bit c for
// one occurrence of class c, bit 32+c for two. Letters a–z are classes
// 0–25, digits share 26–28, anything else 29–31. One edit changes at most
// two bits (a substitution takes one letter away and adds another; an
// insertion or deletion one; a transposition none), so two terms within k
// edits differ in at most 2k bits: a test of a few instructions that turns
// most of a bucket away before any distance is computed.
// nonASCIISig are the signature bits of classes 29–31: a term without
// them is made of a–z and 0–9 only.
const nonASCIISig = 7<<29 | 7<<61

func letterSig(s string) uint64 {
	var n [32]uint8
	var sig uint64
	for _, r := range s {
		var c rune
		switch {
		case 'a' <= r && r <= 'z':
			c = r - 'a'
		case '0' <= r && r <= '9':
			c = 26 + (r-'0')%3
		default:
			c = 29 + r%3
		}
		if n[c] < 2 {
			sig |= 1 << (uint(c) + 32*uint(n[c]))
			n[c]++
		}
	}
	return sig
}

// fuzzyTerm reports whether a term belongs in the fuzzy dictionary, and its
// length in runes: 4 runes or more, with a letter, no CJK (bigrams are no
// words to misspell), no longer than a term can be.
func fuzzyTerm(t string) (int, bool) {
	n, letter := 0, false
	for _, r := range t {
		if isCJK(r) {
			return 0, false
		}
		letter = letter || unicode.IsLetter(r)
		n++
	}
	return n, letter && n >= minFuzzyRunes && n <= maxTermLen
}
