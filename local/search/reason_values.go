package search

// Reasons that quote a name, alias or package name: which value of a
// field holds the matched words, and where in it they are spelt.

import (
	"math/bits"
	"slices"
	"strings"
	"unicode/utf8"
)

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
