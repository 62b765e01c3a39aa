package search

import (
	"math/bits"
	"strconv"
	"strings"
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
