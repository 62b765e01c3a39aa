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
}

func (k *reasonKey) hash() uint64 {
	h := uint64(k.band)<<8 | uint64(k.label)
	for f, m := range k.fm {
		if m != 0 { // narrow keys use only fm[0]: one round
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

// reasons returns the reasons for a match pattern of a lexical hit that
// matched no name field; hits with the same pattern share the slice. A new
// pattern is expanded from candidate ci.
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
		if len(rs) == maxReasons {
			break
		}
		if fm[f] != 0 {
			rs = append(rs, rb.lexReason(f, fm[f]))
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
	e := &rb.ix.docs[slot]
	dst := make([]string, 0, maxReasons)
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
		} else if v, r := rb.valueReason(e, f, fm[f]); r != "" && !slices.ContainsFunc(shown[:len(dst)], func(s string) bool { return strings.EqualFold(s, v) }) {
			shown[len(dst)] = v
			dst = append(dst, r)
		}
	}
	return dst[:len(dst):len(dst)]
}

// value returns the i-th value of a name field as the document spells it
// (i = -1: the name).
func (e *docEntry) value(f field, i int) string {
	switch {
	case f == fAlias && i >= 0:
		return e.showAliases[i]
	case f == fPackage && i >= 0:
		return e.showPkgs[i]
	}
	return e.showName
}

func (e *docEntry) values(f field) int {
	switch f {
	case fAlias:
		return len(e.showAliases)
	case fPackage:
		return len(e.showPkgs)
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
	for _, key := range rb.q.exactKeys() {
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

// prepare fills match: the query's words, words run together, fuzzy
// spellings (an exact meaning wins over a fuzzy one).
func (rb *reasonBuilder) prepare() {
	if rb.match != nil {
		return
	}
	q := rb.q
	rb.match = map[string]termMatch{}
	for _, t := range rb.targets {
		if t.dist > 0 {
			rb.match[rb.ix.terms[t.id].text] = termMatch{bits: 1 << t.qi, fuzzy: true, qi: t.qi}
		}
	}
	for _, p := range q.pairs {
		rb.match[p.text] = termMatch{bits: p.bits}
	}
	for i, t := range q.terms {
		if q.content&(1<<i) != 0 {
			m := rb.match[t]
			if m.fuzzy {
				m = termMatch{}
			}
			m.bits |= 1 << i
			rb.match[t] = m
		}
	}
}

// valueReason quotes the value of field f that holds the most of the
// matched terms in bits, and those words of it:
// `package "@acme/refund-worker" matches "refund"`. A word that only
// fuzzily matched says what it is close to.
func (rb *reasonBuilder) valueReason(e *docEntry, f field, bits uint64) (value, reason string) {
	rb.prepare()
	best, bestCover := -2, 0
	var bestItems []reasonItem
	for i := range e.values(f) {
		idx := i
		if f == fName {
			idx = -1
		}
		items, cover := rb.valueItems(e.value(f, idx), bits)
		if cover > bestCover {
			best, bestCover = idx, cover
			bestItems = append(bestItems[:0], items...)
		}
	}
	if best == -2 {
		return "", ""
	}
	v := e.value(f, best)
	var b strings.Builder
	b.WriteString(fieldWord[f] + " " + quote(v, maxValueRunes))
	if len(bestItems) == 1 && bestItems[0].fuzzy && bestItems[0].start == 0 && bestItems[0].end == len(v) {
		b.WriteString(" is close to " + strconv.Quote(rb.q.disp[bestItems[0].qi]))
		return v, b.String()
	}
	b.WriteString(" matches ")
	n := utf8.RuneCountInString(b.String())
	for i, it := range bestItems {
		s := quote(v[it.start:it.end], maxDisplayRunes)
		if it.fuzzy {
			s += " (close to " + strconv.Quote(rb.q.disp[it.qi]) + ")"
		}
		if i > 0 {
			s = ", " + s
		}
		if i == maxReasonItems || (i > 0 && n+utf8.RuneCountInString(s) > maxReasonRunes) {
			b.WriteString(", …")
			break
		}
		b.WriteString(s)
		n += utf8.RuneCountInString(s)
	}
	return v, b.String()
}

// valueItems returns the words of v that matched a term in bits, widest
// first where one holds another (the compound "spdx-exceptions" over its
// parts), and how many distinct query terms they cover.
func (rb *reasonBuilder) valueItems(v string, bits uint64) ([]reasonItem, int) {
	items := rb.items[:0]
	rb.tok.tokenize(v, func(_ tokKind, term []byte, _, start, end int) {
		if m, ok := rb.match[string(term)]; ok && m.bits&bits != 0 {
			items = append(items, reasonItem{start, end, m})
		}
	})
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
	return kept, popcount(cover)
}

func popcount(x uint64) int { return bits.OnesCount64(x) }

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
