package search

import (
	"math/bits"
	"slices"
	"strings"
	"unicode/utf8"
)

// The fuzzy tier forgives misspelt names. Its dictionary is every term that
// occurs in a name, alias or package name (never descriptions or READMEs:
// those are prose, and a typo is made typing a name), kept in buckets by
// length in runes beside a 64-bit letter signature per term. A query word
// of n runes is compared only with terms of n±k runes whose signatures
// differ in at most 2k bits, and only those get the exact, bounded
// distance. (Lists by the letters at the first k+1 positions — a word and
// a term within k edits share one — scan a third as many signatures, but
// measured no faster: the scan is a few nanoseconds a term, and the
// distances of what passes dominate. They would triple the dictionary.) The dictionary changes with the postings (Put and Delete keep
// a per-term count of name-field postings), so a query never walks the
// documents to find its candidates.

const (
	minFuzzyRunes = 4 // shorter words are matched exactly or not at all
	// maxFuzzyTerms bounds the query words a query looks up.
	maxFuzzyTerms = 6
	// Weights of a fuzzy match against an exact one: in a document's score
	// (by edits) and in coordination.
	fuzzyWeight1    = 0.5
	fuzzyWeight2    = 0.3
	fuzzyCoordScale = 0.5
	// hostWeight scales a host-only word's score (see host.go).
	hostWeight = 0.25
)

// fuzzyBound is the number of edits forgiven in a word of n runes: one for
// 4–7, two from 8; none for shorter words.
func fuzzyBound(n int) int {
	switch {
	case n < minFuzzyRunes:
		return 0
	case n < 8:
		return 1
	}
	return 2
}

type fuzzyBucket struct {
	ids  []uint32 // term ids
	sigs []uint64 // per term: letterSig of its text
}

// fuzzyBuckets returns the dictionary's terms of l runes: the base's (some
// dead, see deadFz) and the overlay's.
func (ix *Index) fuzzyBuckets(l int) (bids []uint32, bsigs []uint64, oids []uint32, osigs []uint64) {
	if ix.base != nil {
		bids, bsigs = ix.base.fuzzyBucket(l)
	}
	return bids, bsigs, ix.fuzzy[l].ids, ix.fuzzy[l].sigs
}

func (ix *Index) deadTerm(id uint32) bool {
	return ix.deadFz != nil && id < ix.nt && ix.deadFz[id>>6]&(1<<(id&63)) != 0
}

// fuzzyKey is one spelling of a query word to look up: its stem and, when
// different, the word as typed. Stems of short words differ in shape
// ("cats" stems to "cat", too short, but is one swap from "cast"; "cdore"
// to "cdor", two edits from "core", which is too short to be stemmed).
// Both get the bound of the word as typed: the edits were made typing it.
type fuzzyKey struct {
	qi   int // query term index
	text string
	d    int // edits forgiven
}

// fuzzyTarget is a dictionary term close to a query word.
type fuzzyTarget struct {
	id   uint32
	qi   uint8
	dist uint8 // edits; numeronyms count as one
}

// expand appends the dictionary terms within the bound of each key to dst,
// per query word ordered by (edits, text) and without repeats, so that the
// best spelling of a word a document has is always credited first,
// whatever the dictionary's order. Callers hold the read lock.
func (ix *Index) expand(keys []fuzzyKey, dst []fuzzyTarget) []fuzzyTarget {
	var ra, rb [maxTermLen]rune
	for ki, k := range keys {
		start := len(dst)
		if ki > 0 && keys[ki-1].qi == k.qi {
			// A second spelling of the same word: merge below.
			for start > 0 && dst[start-1].qi == uint8(k.qi) {
				start--
			}
		}
		if k.d > 0 {
			dst = ix.closeTerms(k, dst, &ra, &rb)
		}
		dst = ix.numeronymTerms(k, dst)
		if len(dst) > start {
			dst = dst[:start+len(ix.bestFirst(dst[start:]))]
		}
	}
	return dst
}

// closeTerms appends the dictionary terms within k.d edits of k.text: of
// a length within the bound, whose letter signatures differ in at most
// 2·k.d bits, and then by their distance.
func (ix *Index) closeTerms(k fuzzyKey, dst []fuzzyTarget, ra, rb *[maxTermLen]rune) []fuzzyTarget {
	d := k.d
	n := utf8.RuneCountInString(k.text)
	sig := letterSig(k.text)
	ascii := isASCII(k.text)
	for l := max(minFuzzyRunes, n-d); l <= min(maxTermLen, n+d); l++ {
		bids, bsigs, oids, osigs := ix.fuzzyBuckets(l)
		for pass, sigs := range [2][]uint64{bsigs, osigs} {
			ids := bids
			if pass == 1 {
				ids = oids
			}
			for j, s := range sigs {
				if bits.OnesCount64(s^sig) > 2*d {
					continue
				}
				id := ids[j]
				if pass == 0 && ix.deadTerm(id) {
					continue
				}
				t := ix.termText(id)
				var e int
				if ascii && s&nonASCIISig == 0 {
					e = osaWithin([]byte(k.text), []byte(t), d)
				} else {
					e = editsWithin(k.text, t, d, ra, rb)
				}
				if e <= d {
					dst = append(dst, fuzzyTarget{id: id, qi: uint8(k.qi), dist: uint8(e)})
				}
			}
		}
	}
	return dst
}

// numeronymTerms appends, for a numeronym key, the dictionary terms it
// abbreviates: i18n → internationalization, a11y → accessibility. Terms
// are stems, so a numeronym of a word the stemmer shortens (k8s:
// kubernetes → kubernet) is not found.
func (ix *Index) numeronymTerms(k fuzzyKey, dst []fuzzyTarget) []fuzzyTarget {
	m := numeronym(k.text)
	if m == 0 || m+2 > maxTermLen {
		return dst
	}
	first, last := k.text[0], k.text[len(k.text)-1]
	bids, _, oids, _ := ix.fuzzyBuckets(m + 2)
	for pass, ids := range [2][]uint32{bids, oids} {
		for _, id := range ids {
			if pass == 0 && ix.deadTerm(id) {
				continue
			}
			if t := ix.termText(id); len(t) == m+2 && t[0] == first && t[len(t)-1] == last {
				dst = append(dst, fuzzyTarget{id: id, qi: uint8(k.qi), dist: 1})
			}
		}
	}
	return dst
}

// bestFirst keeps one target once (the stem and the word as typed may
// both find it), at its fewest edits, and orders them by edits and text.
func (ix *Index) bestFirst(seg []fuzzyTarget) []fuzzyTarget {
	slices.SortFunc(seg, func(a, b fuzzyTarget) int {
		if a.id != b.id {
			return int(a.id) - int(b.id)
		}
		return int(a.dist) - int(b.dist)
	})
	seg = slices.CompactFunc(seg, func(a, b fuzzyTarget) bool { return a.id == b.id })
	slices.SortFunc(seg, func(a, b fuzzyTarget) int {
		if a.dist != b.dist {
			return int(a.dist) - int(b.dist)
		}
		return strings.Compare(ix.termText(a.id), ix.termText(b.id))
	})
	return seg
}

// numeronym returns N for a word like i18n, a11y or k8s (a letter, a number
// of 2–30, a letter), else 0.
func numeronym(s string) int {
	if len(s) < 3 || len(s) > 4 || !isLower(s[0]) || !isLower(s[len(s)-1]) {
		return 0
	}
	n := 0
	for i := 1; i < len(s)-1; i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0
		}
		n = n*10 + int(s[i]-'0')
	}
	if n < 2 || n > 30 || s[1] == '0' {
		return 0
	}
	return n
}

func isLower(c byte) bool { return 'a' <= c && c <= 'z' }

// editsWithin returns the optimal-string-alignment distance of a and b
// (Levenshtein with adjacent transpositions as one edit) when it is at most
// k, else k+1. ASCII is compared byte by byte; anything else by runes, in
// the caller's buffers.
func editsWithin(a, b string, k int, ra, rb *[maxTermLen]rune) int {
	if isASCII(a) && isASCII(b) {
		return osaWithin([]byte(a), []byte(b), k)
	}
	x, y := ra[:0], rb[:0]
	for _, r := range a {
		if len(x) == maxTermLen {
			break
		}
		x = append(x, r)
	}
	for _, r := range b {
		if len(y) == maxTermLen {
			break
		}
		y = append(y, r)
	}
	return osaWithin(x, y, k)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// osaWithin is editsWithin over two sequences of at most maxTermLen. A
// common prefix and suffix are dropped first (they cost nothing); the rest
// is the textbook table restricted to the diagonal band |i−j| ≤ k, given up
// as soon as a whole row exceeds k.
func osaWithin[T byte | rune](a, b []T, k int) int {
	for len(a) > 0 && len(b) > 0 && a[0] == b[0] {
		a, b = a[1:], b[1:]
	}
	for len(a) > 0 && len(b) > 0 && a[len(a)-1] == b[len(b)-1] {
		a, b = a[:len(a)-1], b[:len(b)-1]
	}
	n, m := len(a), len(b)
	if n-m > k || m-n > k {
		return k + 1
	}
	if n == 0 || m == 0 {
		return max(n, m)
	}
	inf := k + 1
	var rows [3][maxTermLen + 2]int
	pp, p, c := &rows[0], &rows[1], &rows[2]
	for j := 0; j <= m; j++ {
		p[j] = min(j, inf)
	}
	for i := 1; i <= n; i++ {
		lo, hi := max(1, i-k), min(m, i+k)
		if lo == 1 {
			c[0] = min(i, inf)
		} else {
			c[lo-1] = inf
		}
		best := c[lo-1]
		for j := lo; j <= hi; j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			v := min(p[j]+1, c[j-1]+1, p[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				v = min(v, pp[j-2]+1)
			}
			v = min(v, inf)
			c[j] = v
			best = min(best, v)
		}
		if hi < m {
			c[hi+1] = inf
		}
		if best > k {
			return inf
		}
		pp, p, c = p, c, pp
	}
	return min(p[m], inf)
}

// wholeClose reports whether one of a document's whole-value terms is among
// ids (sorted): the whole name, alias or package name is a misspelling of
// the whole query.
func wholeClose(whole *wholeTerms, ids []uint32) bool {
	for _, w := range whole {
		if w == 0 {
			break
		}
		if _, ok := slices.BinarySearch(ids, w-1); ok {
			return true
		}
	}
	return false
}
