package search

import (
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Reasons say which field matched and what: the query's words for prose
// fields ("description mentions "orders""), and for a name, alias or
// package name the value itself with the word of it that matched
// (`package "@acme/refund-worker" matches "refund"`, `name "cobra" is
// close to "cobar"`). Document text in a reason is only ever such a value
// or a word of it, cleaned (see clean) and bounded; never a description,
// README, keyword or path.

// fieldPhrase starts a lexical reason from the query's words, in field
// priority order.
var fieldPhrase = [numFields]string{
	fName:        "name contains ",
	fAlias:       "alias contains ",
	fPackage:     "package name contains ",
	fKeyword:     "keywords match ",
	fTag:         "tags match ",
	fDescription: "description mentions ",
	fReadme:      "README mentions ",
	fPath:        "path contains ",
}

// fieldWord names a name field in a reason that quotes its value.
var fieldWord = [numFields]string{fName: "name", fAlias: "alias", fPackage: "package"}

// reasonBuilder builds the reasons of one Search. Reasons from the query's
// words alone depend only on which terms matched in which fields, and a
// query's hits fall into few such patterns: those are memoised. A
// direct-mapped table over a hash of the pattern finds a known one with a
// single key comparison; a collision only costs a rebuild. Reasons that
// quote a document's values are built per hit.
type reasonBuilder struct {
	q       *query
	ix      *Index
	targets []fuzzyTarget // the query's fuzzy targets (see expand)
	sets    []reasonSet
	table   [1 << reasonTableBits]int32 // hash → 1 + index in sets
	last    int32                       // 1 + index of the last pattern returned
	short   [numFields][]maskReason
	lex     map[lexKey]string

	// For reasons that quote values: what each document term means to
	// the query, filled on first use.
	match map[string]termMatch
	metas []termMeaning // the same, in order: words, then fuzzy spellings
	best  []reasonItem
	low   []byte   // a value lowercased
	chunk []string // backing for the reason slices of hits
	keys  []exactKey
	tok   tokenizer
	items []reasonItem
}

// termMatch is what a document term is to the query: one of its words (or
// two run together), or a fuzzy spelling of one.
type termMatch struct {
	bits  uint64
	fuzzy bool
	qi    uint8
}

// reasonItem is one matched word of a value: its byte span in the value.
type reasonItem struct {
	start, end int
	termMatch
}

const reasonTableBits = 10

type reasonKey struct {
	band, label uint8
	fm          [numFields]uint64
	fuzzy       uint64 // the query terms matched only fuzzily (in name fields)
}

func (k *reasonKey) hash() uint64 {
	h := uint64(k.band)<<8 | uint64(k.label) ^ k.fuzzy<<16
	for f, m := range k.fm {
		if m != 0 { // narrow keys use only fm[0] and fm[1]: two rounds at most
			h = (h ^ m ^ uint64(f)<<59) * 0x9e3779b97f4a7c15
			h ^= h >> 29
		}
	}
	return h
}

type reasonSet struct {
	key     reasonKey
	reasons []string
}

type maskReason struct {
	mask uint64
	s    string
}

const shortMemo = 16

type lexKey struct {
	f    field
	mask uint64
}

// reasons returns the reasons for a match pattern of a lexical or fuzzy
// hit from the query's words alone; hits with the same pattern share the
// slice. A new pattern is expanded from candidate ci.
func (rb *reasonBuilder) reasons(key *reasonKey, sc *scratch, ci int, narrow bool) []string {
	if rb.last > 0 && rb.sets[rb.last-1].key == *key { // neighbours in score order often match alike
		return rb.sets[rb.last-1].reasons
	}
	slot := key.hash() >> (64 - reasonTableBits)
	if i := rb.table[slot]; i > 0 && rb.sets[i-1].key == *key {
		rb.last = i
		return rb.sets[i-1].reasons
	}
	fm := sc.fieldMasks(ci, narrow)
	rs := make([]string, 0, maxReasons)
	for f := range numFields {
		if exact := fm[f] &^ key.fuzzy; exact != 0 && len(rs) < maxReasons {
			rs = append(rs, rb.lexReason(f, exact))
		}
		if fz := fm[f] & key.fuzzy; fz != 0 && len(rs) < maxReasons {
			rs = append(rs, rb.closeReason(f, fz))
		}
	}
	rs = rs[:len(rs):len(rs)]
	rb.sets = append(rb.sets, reasonSet{*key, rs})
	rb.table[slot] = int32(len(rb.sets))
	rb.last = int32(len(rb.sets))
	return rs
}

// docReasons builds the reasons of a hit that matched exactly or in a name
// field: they quote the document's value.
func (rb *reasonBuilder) docReasons(slot uint32, band, label uint8, fm [numFields]uint64) []string {
	e := rb.ix.entry(slot)
	if len(rb.chunk) < maxReasons {
		rb.chunk = make([]string, 64*maxReasons) // one allocation for many hits
	}
	dst := rb.chunk[:0:maxReasons]
	skip := field(numFields)
	var shown [maxReasons]string // values quoted so far: a package named like the project is said once
	if band > bandLexical {
		f, v, r := rb.exactReason(e, band, label)
		dst, skip, shown[0] = append(dst, r), f, v
	}
	for f := range numFields {
		if len(dst) == maxReasons {
			break
		}
		if f == skip || fm[f] == 0 {
			continue
		}
		if !isNameField(f) {
			dst = append(dst, rb.lexReason(f, fm[f]))
		} else if v, r := rb.valueReason(e, f, fm[f], shown[:len(dst)]); r != "" {
			shown[len(dst)] = v
			dst = append(dst, r)
		}
	}
	rb.chunk = rb.chunk[len(dst):]
	return dst[:len(dst):len(dst)]
}

// value returns the i-th value of a name field as the document spells it
// (i = -1: the name).
func (e *docEntry) value(f field, i int) string {
	switch {
	case f == fAlias && i >= 0:
		return e.aliases[i]
	case f == fPackage && i >= 0:
		return e.packages[i]
	}
	return e.name
}

func (e *docEntry) values(f field) int {
	switch f {
	case fAlias:
		return len(e.aliases)
	case fPackage:
		return len(e.packages)
	}
	return 1
}

var (
	tierKinds = [...][]exactKind{TierPackage: {exPkg, exPkgPart}, TierAlias: {exAlias}, TierName: {exName}, TierLexical: nil, TierFuzzy: nil}
	kindField = [numExact]field{exPkg: fPackage, exPkgPart: fPackage, exAlias: fAlias, exName: fName}
)

// exactReason says which value the query (or the package it wraps) is:
// `package "@company/order-sdk" matches "order-sdk" (without scope)`.
func (rb *reasonBuilder) exactReason(e *docEntry, band, label uint8) (f field, value, reason string) {
	if rb.keys == nil {
		rb.keys = rb.q.exactKeys()
	}
	for _, key := range rb.keys {
		for _, k := range tierKinds[tierOf(band)] {
			b, l, idx := e.exactMatch(k, key)
			if b != band || l != label {
				continue
			}
			f, value = kindField[k], e.value(kindField[k], idx)
			var sb strings.Builder
			sb.WriteString(fieldWord[f] + " " + quote(value, maxValueRunes) + " matches " + key.quoted)
			var notes []string
			if band == bandPkgPartial || band == bandPkgPartialNorm {
				notes = append(notes, partialLabels[label])
			}
			if band == bandPkgNorm || band == bandPkgPartialNorm || band == bandAliasNorm || band == bandNameNorm {
				notes = append(notes, "ignoring separators")
			}
			if key.alt {
				notes = append(notes, "host and command words dropped")
			}
			if len(notes) > 0 {
				sb.WriteString(" (" + strings.Join(notes, ", ") + ")")
			}
			return f, value, sb.String()
		}
	}
	return numFields, "", tierOf(band).String() + " matches " + rb.q.quoted // not reached: matchExact found it
}

// prepare fills what the query's terms mean to a value reason: its words
// (and words run together), then fuzzy spellings, best first per word. An
// exact meaning of a text wins over a fuzzy one (match).
func (rb *reasonBuilder) prepare() {
	if rb.match != nil {
		return
	}
	q := rb.q
	rb.match = map[string]termMatch{}
	for i, t := range q.terms {
		if q.content&(1<<i) != 0 {
			m := rb.match[t]
			m.bits |= 1 << i
			rb.match[t] = m
		}
	}
	for _, p := range append(q.pairs[:len(q.pairs):len(q.pairs)], q.phrases...) {
		m := rb.match[p.text]
		m.bits |= p.bits
		rb.match[p.text] = m
	}
	for text, m := range rb.match {
		rb.metas = append(rb.metas, termMeaning{text, m})
	}
	// Map order is random: words in query order, for the same reason text
	// every time.
	slices.SortFunc(rb.metas, func(a, b termMeaning) int {
		if a.bits != b.bits {
			return bits.TrailingZeros64(a.bits) - bits.TrailingZeros64(b.bits)
		}
		return strings.Compare(a.text, b.text)
	})
	for _, t := range rb.targets {
		text := rb.ix.termText(t.id)
		if t.dist == 0 {
			continue
		}
		if _, exact := rb.match[text]; exact {
			continue
		}
		m := termMatch{bits: 1 << t.qi, fuzzy: true, qi: t.qi}
		rb.match[text] = m
		rb.metas = append(rb.metas, termMeaning{text, m})
	}
}

// termMeaning is a term text with what it means to the query.
type termMeaning struct {
	text string
	termMatch
}

// valueReason quotes the value of field f that holds the most of the
// matched terms in bits, and those words of it:
// `package "@acme/refund-worker" matches "refund"`. A word that only
// fuzzily matched says what it is close to.
//
// A value already quoted by an earlier reason of the hit (shown: a package
// named like the project) gives none.
func (rb *reasonBuilder) valueReason(e *docEntry, f field, bits uint64, shown []string) (value, reason string) {
	rb.prepare()
	best, bestCover := -2, 0
	bestItems := rb.best[:0]
	// ASCII values, nearly all, are searched directly (findTerm); if that
	// does not account for every matched term — a stem that hides its word
	// (libraries → library), other scripts — the values are tokenized.
	for pass := range 2 {
		var union uint64
		for i := range e.values(f) {
			idx := i
			if f == fName {
				idx = -1
			}
			items, cover := rb.valueItems(e.value(f, idx), bits, pass == 1)
			union |= cover
			if n := popcount(cover); n > bestCover {
				best, bestCover = idx, n
				bestItems = append(bestItems[:0], items...)
			}
		}
		if union == bits {
			break
		}
	}
	rb.best = bestItems
	if best == -2 {
		return "", ""
	}
	v := e.value(f, best)
	if slices.ContainsFunc(shown, func(s string) bool { return strings.EqualFold(s, v) }) {
		return "", ""
	}
	q := rb.q
	var b strings.Builder
	b.Grow(2*len(v) + 64)
	b.WriteString(fieldWord[f])
	b.WriteByte(' ')
	writeQuoted(&b, v, maxValueRunes)
	if len(bestItems) == 1 && bestItems[0].fuzzy && bestItems[0].start == 0 && bestItems[0].end == len(v) {
		b.WriteString(" is close to ")
		writeQuoted(&b, q.disp[bestItems[0].qi], maxDisplayRunes+1)
		return v, b.String()
	}
	b.WriteString(" matches ")
	for i, it := range bestItems {
		if i == maxReasonItems || (i > 0 && utf8.RuneCountInString(b.String()) > maxReasonRunes-2*maxDisplayRunes-16) {
			b.WriteString(", …")
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		writeQuoted(&b, v[it.start:it.end], maxDisplayRunes)
		if it.fuzzy {
			b.WriteString(" (close to ")
			writeQuoted(&b, q.disp[it.qi], maxDisplayRunes+1)
			b.WriteByte(')')
		}
	}
	return v, b.String()
}

// writeQuoted writes quote(s, n) to b.
func writeQuoted(b *strings.Builder, s string, n int) {
	if plain(s, n) {
		b.WriteByte('"')
		b.WriteString(s)
		b.WriteByte('"')
		return
	}
	b.WriteString(strconv.Quote(clean(s, n)))
}

// valueItems returns the words of v that matched a term in bits, widest
// first where one holds another (the compound "spdx-exceptions" over its
// parts), and the query terms they cover: by tokenizing v, or by searching
// ASCII v for the terms.
func (rb *reasonBuilder) valueItems(v string, bits uint64, tokenize bool) ([]reasonItem, uint64) {
	items := rb.items[:0]
	if tokenize {
		rb.tok.tokenize(v, func(_ tokKind, term []byte, _, start, end int) {
			if m, ok := rb.match[string(term)]; ok && m.bits&bits != 0 {
				items = append(items, reasonItem{start, end, m})
			}
		})
	} else if isASCII(v) {
		rb.low = appendLower(rb.low[:0], v)
		lower := rb.low
		var found uint64 // fuzzy words already placed: one spelling each is enough
		for _, m := range rb.metas {
			if m.bits&bits == 0 || (m.fuzzy && found&m.bits != 0) {
				continue
			}
			if a, z, ok := findTerm(lower, v, m.text); ok {
				items = append(items, reasonItem{a, z, m.termMatch})
				if m.fuzzy {
					found |= m.bits
				}
			}
		}
	}
	slices.SortFunc(items, func(a, b reasonItem) int {
		if a.start != b.start {
			return a.start - b.start
		}
		return b.end - a.end
	})
	kept := items[:0]
	var cover uint64
	end := -1
	for _, it := range items {
		cover |= it.bits & bits
		if it.end <= end {
			continue // inside a wider word already shown
		}
		kept = append(kept, it)
		end = it.end
	}
	rb.items = items
	return kept, cover
}

// findTerm finds where a term is spelt in an ASCII value: lower is its
// lowercase form, show its own (for camelCase humps). A term is a word the
// tokenizer made — a part, or parts run together, stemmed — so it is
// looked for as letters and digits from the start of a word, skipping the
// separators '-', '_' and '.', ending at the end of a word or where a stem
// left off a plural or silent 'e' (services → servic). It returns the span
// of the word(s); ok is false when the term is not spelt so (the caller
// then tokenizes).
func findTerm(lower []byte, show, t string) (start, end int, ok bool) {
	for i := 0; i+len(t) <= len(lower); i++ {
		if lower[i] != t[0] || !wordStart(show, i) {
			continue
		}
		j, k := i, 0
		for j < len(lower) && k < len(t) {
			switch c := lower[j]; {
			case c == t[k]:
				j, k = j+1, k+1
			case k > 0 && (c == '-' || c == '_' || c == '.') && j+1 < len(lower) && wordStart(show, j+1):
				j++
			default:
				k = -1
			}
			if k < 0 {
				break
			}
		}
		if k != len(t) {
			continue
		}
		// What a stem took off: at most "ses", "es", "s", "e".
		z := j
		for z < len(lower) && z-j < 3 && (lower[z] == 's' || lower[z] == 'e') && !wordStart(show, z) {
			z++
		}
		if z == len(lower) || !isAlnumByte(lower[z]) || wordStart(show, z) {
			return i, z, true
		}
	}
	return 0, 0, false
}

// wordStart reports whether a word starts at byte i of an ASCII value: at
// its start, after anything but a letter or digit, at a camelCase hump, or
// where letters and digits meet.
func wordStart(s string, i int) bool {
	if i == 0 {
		return true
	}
	if i >= len(s) {
		return false
	}
	p, c := s[i-1], s[i]
	switch {
	case !isAlnumByte(p):
		return isAlnumByte(c)
	case isDigitByte(p) != isDigitByte(c):
		return isAlnumByte(c)
	case 'a' <= p && p <= 'z' && 'A' <= c && c <= 'Z':
		return true
	case 'A' <= p && p <= 'Z' && 'A' <= c && c <= 'Z':
		return i+1 < len(s) && 'a' <= s[i+1] && s[i+1] <= 'z' // XMLParser → XML|Parser
	}
	return false
}

func isAlnumByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func isDigitByte(c byte) bool { return '0' <= c && c <= '9' }

func popcount(x uint64) int { return bits.OnesCount64(x) }

// closeReason says that field f holds words close to the query terms in
// mask, without quoting them: `name is close to "cobar"`.
func (rb *reasonBuilder) closeReason(f field, mask uint64) string {
	var items []string
	for m := mask; m != 0 && len(items) < maxReasonItems; m &= m - 1 {
		items = append(items, strconv.Quote(rb.q.disp[bits.TrailingZeros64(m)]))
	}
	return fieldWord[f] + " is close to " + strings.Join(items, ", ")
}

func (rb *reasonBuilder) lexReason(f field, mask uint64) string {
	for _, mr := range rb.short[f] {
		if mr.mask == mask {
			return mr.s
		}
	}
	key := lexKey{f, mask}
	if s, ok := rb.lex[key]; ok {
		return s
	}
	q := rb.q
	var items []string
	more := false
	var shown uint64
	add := func(s string) {
		if len(items) == maxReasonItems {
			more = true
			return
		}
		items = append(items, strconv.Quote(s))
	}
	for _, g := range q.groups {
		if g.members&mask == 0 {
			continue
		}
		if g.complete && g.members&^mask == 0 {
			if g.members&^shown != 0 {
				add(g.disp)
				shown |= g.members
			}
			continue
		}
		for m := g.members & mask &^ shown; m != 0; m &= m - 1 {
			i := bits.TrailingZeros64(m)
			add(q.disp[i])
			shown |= 1 << i
		}
	}
	s := fieldPhrase[f] + strings.Join(items, ", ")
	if more {
		s += ", …"
	}
	if len(rb.short[f]) < shortMemo {
		rb.short[f] = append(rb.short[f], maskReason{mask, s})
		return s
	}
	if rb.lex == nil {
		rb.lex = map[lexKey]string{}
	}
	rb.lex[key] = s
	return s
}
