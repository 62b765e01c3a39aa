package search

import (
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

const (
	// maxQueryBytes bounds the text we look at; the rest of a longer query
	// is ignored rather than rejected.
	maxQueryBytes = 4096
	// maxQueryTerms bounds the distinct terms of a query (and fits the
	// per-candidate term masks in a uint64).
	maxQueryTerms = 64
	// maxRawTokens bounds tokenisation work on a query before dedup.
	maxRawTokens = 1024
	// maxReasons and the display bounds keep reasons short.
	maxReasons      = 3
	maxReasonItems  = 3
	maxDisplayRunes = 32
	maxQueryRunes   = 64
)

// Exact-match bands, best first. A hit's Score is its band plus lexical
// relevance in [0,1), so every exact hit outranks every lexical hit, a full
// package name outranks a partial one, and a literal (case-insensitive)
// match outranks one that only agrees once separators are removed.
const (
	bandLexical        = 0
	bandNameNorm       = 2
	bandName           = 3
	bandAliasNorm      = 4
	bandAlias          = 5
	bandPkgPartialNorm = 6
	bandPkgPartial     = 7
	bandPkgNorm        = 8
	bandPkg            = 9
)

func tierOf(band uint8) Tier {
	switch {
	case band >= bandPkgPartialNorm:
		return TierPackage
	case band >= bandAliasNorm:
		return TierAlias
	case band >= bandNameNorm:
		return TierName
	}
	return TierLexical
}

// stopwords are dropped from a query that has other words, so "the service
// for orders" is not rewarded for matching "the" and "for". Stored stemmed.
var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an and are as at be by does for from has have how i in into is
		it its me my of on or our that the their this to was were what when where which who with you your`) {
		m[string(stem([]byte(w)))] = true
	}
	return m
}()

type query struct {
	lower  string // lowerFold of the trimmed query: literal exact matches
	norm   string // normalize: separator-insensitive exact matches
	quoted string // the query as shown in exact reasons
	terms  []string
	disp   []string // per term: how a reason shows it
	groups []qgroup
}

// qgroup is one compound ("order-sdk") or CJK run ("客户端") of the query
// with the bits of its terms. When a field matched every term of a group,
// a reason shows the group as the user wrote it; otherwise the pieces.
type qgroup struct {
	disp     string
	members  uint64
	complete bool // false when the term cap cut the group
}

func parseQuery(s string) *query {
	s = strings.TrimSpace(cutUTF8(s, maxQueryBytes))
	if s == "" {
		return nil
	}
	q := &query{lower: lowerFold(s), norm: normalize(s), quoted: quote(s, maxQueryRunes)}

	type raw struct {
		term, disp string
		group      int
		start, end int
		stop       bool
	}
	var raws []raw
	var t tokenizer
	t.tokenize(s, func(kind tokKind, term []byte, group, start, end int) {
		if len(raws) >= maxRawTokens {
			return
		}
		disp := s[start:end]
		if kind == kindPart {
			disp = strings.ToLower(disp)
		}
		raws = append(raws, raw{string(term), disp, group, start, end, kind == kindPart && stopwords[string(term)]})
	})
	content := slices.ContainsFunc(raws, func(r raw) bool { return !r.stop })

	pos := map[string]int{}
	cur := -1 // group id of the last qgroup
	var gStart, gEnd int
	finish := func() {
		if n := len(q.groups); n > 0 {
			q.groups[n-1].disp = bound(s[gStart:gEnd], maxDisplayRunes)
		}
	}
	for _, r := range raws {
		if r.group != cur {
			finish()
			cur, gStart, gEnd = r.group, r.start, r.end
			q.groups = append(q.groups, qgroup{complete: true})
		}
		gStart, gEnd = min(gStart, r.start), max(gEnd, r.end)
		g := &q.groups[len(q.groups)-1]
		if content && r.stop {
			continue
		}
		i, ok := pos[r.term]
		if !ok {
			if len(q.terms) == maxQueryTerms {
				g.complete = false
				continue
			}
			i = len(q.terms)
			pos[r.term] = i
			q.terms = append(q.terms, r.term)
			q.disp = append(q.disp, bound(r.disp, maxDisplayRunes))
		}
		g.members |= 1 << i
	}
	finish()
	q.groups = slices.DeleteFunc(q.groups, func(g qgroup) bool { return g.members == 0 })
	return q
}

// bound cuts s to at most n runes, marking the cut.
func bound(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for range n {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i] + "…"
}

// quote bounds s and quotes it; strconv.Quote escapes quotes and control
// characters, so a reason is always one clean line.
func quote(s string, n int) string {
	return strconv.Quote(bound(s, n))
}

type cand struct {
	slot  uint32
	band  uint8
	label uint8 // index into partialLabels for package partial matches
	score float64
	mask  uint64            // query terms matched anywhere
	fm    [numFields]uint64 // query terms matched per field
}

type ranked struct {
	score float64
	rank  uint32
	ci    int32
}

type scratch struct {
	idx    []int32 // slot → 1 + index in cands; 0: not a candidate
	cands  []cand
	ranked []ranked
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

func (sc *scratch) cand(slot uint32) *cand {
	ci := sc.idx[slot]
	if ci == 0 {
		sc.cands = append(sc.cands, cand{slot: slot})
		ci = int32(len(sc.cands))
		sc.idx[slot] = ci
	}
	return &sc.cands[ci-1]
}

// Search returns every document that matches query and that keep accepts
// (nil keeps all), best first; ties break by SortKey, then ID. An empty or
// whitespace query returns nil: listing is List's job. keep runs under the
// index's read lock, so it must not call back into the Index.
func (ix *Index) Search(query string, keep func(id string) bool) []Hit {
	q := parseQuery(query)
	if q == nil || (len(q.terms) == 0 && q.norm == "") {
		return nil
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.live == 0 {
		return nil
	}
	_, rank := ix.ensureOrder()

	sc := scratchPool.Get().(*scratch)
	if len(sc.idx) < len(ix.docs) {
		sc.idx = make([]int32, len(ix.docs))
	}
	sc.cands = sc.cands[:0]
	ix.score(q, sc)
	ix.matchExact(q, sc)

	// Filter before anything about a candidate becomes observable.
	nq := float64(len(q.terms))
	rs := sc.ranked[:0]
	for ci := range sc.cands {
		c := &sc.cands[ci]
		sc.idx[c.slot] = 0
		if keep != nil && !keep(ix.docs[c.slot].id) {
			continue
		}
		lex := 0.0
		if nq > 0 {
			// Coordination: a document matching more of the query's
			// distinct terms ranks higher.
			lex = c.score * float64(bits.OnesCount64(c.mask)) / nq
		}
		rs = append(rs, ranked{float64(c.band) + lex/(lex+1), rank[c.slot], int32(ci)})
	}
	slices.SortFunc(rs, func(a, b ranked) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return int(a.rank) - int(b.rank)
	})

	var hits []Hit
	if len(rs) > 0 {
		hits = make([]Hit, len(rs))
		rb := reasonBuilder{q: q}
		backing := make([]string, 0, maxReasons*len(rs))
		for i, r := range rs {
			c := &sc.cands[r.ci]
			start := len(backing)
			backing = rb.reasons(backing, c)
			hits[i] = Hit{
				ID:      ix.docs[c.slot].id,
				Score:   r.score,
				Tier:    tierOf(c.band),
				Reasons: backing[start:len(backing):len(backing)],
			}
		}
	}
	sc.ranked = rs[:0]
	scratchPool.Put(sc)
	return hits
}

// score accumulates BM25F over the query terms into sc.cands.
func (ix *Index) score(q *query, sc *scratch) {
	n := float64(ix.live)
	// Per-field length normalisation: tf·w / (1 − b + b·len/avglen).
	var a, c [numFields]float64
	for f := range numFields {
		a[f] = 1 - fieldB[f]
		if ix.sumLen[f] > 0 {
			c[f] = fieldB[f] * n / float64(ix.sumLen[f])
		}
	}
	for i, t := range q.terms {
		id, ok := ix.dict[t]
		if !ok {
			continue
		}
		post := ix.terms[id].post
		df := float64(len(post))
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		bit := uint64(1) << i
		for _, p := range post {
			fl := &ix.flen[p.slot]
			cd := sc.cand(p.slot)
			tf := 0.0
			for tfs := p.tfs; tfs != 0; {
				sh := uint(bits.TrailingZeros32(tfs)) &^ 3
				f := sh >> 2
				tf += fieldWeight[f] * float64((tfs>>sh)&15) / (a[f] + c[f]*float64(fl[f]))
				cd.fm[f] |= bit
				tfs &^= 15 << sh
			}
			cd.score += idf * tf / (k1 + tf)
			cd.mask |= bit
		}
	}
}

var partialLabels = []string{"without scope", "artifact id", "last path segment"}

// matchExact raises the band of documents whose package, alias or name is
// the query.
func (ix *Index) matchExact(q *query, sc *scratch) {
	if q.norm == "" {
		return
	}
	for k := range numExact {
		for _, slot := range ix.exact[k][q.norm] {
			band, label := ix.exactBand(exactKind(k), slot, q)
			if c := sc.cand(slot); band > c.band {
				c.band, c.label = band, label
			}
		}
	}
}

func (ix *Index) exactBand(k exactKind, slot uint32, q *query) (band, label uint8) {
	e := &ix.docs[slot]
	switch k {
	case exPkg:
		if slices.Contains(e.packages, q.lower) {
			return bandPkg, 0
		}
		return bandPkgNorm, 0
	case exPkgPart:
		band = 0
		for _, p := range e.packages {
			for _, pf := range partialForms(p) {
				b := uint8(0)
				switch {
				case pf.form == q.lower:
					b = bandPkgPartial
				case normalize(pf.form) == q.norm:
					b = bandPkgPartialNorm
				}
				if b > band {
					band, label = b, uint8(slices.Index(partialLabels, pf.label))
				}
			}
		}
		return band, label
	case exAlias:
		if slices.Contains(e.aliases, q.lower) {
			return bandAlias, 0
		}
		return bandAliasNorm, 0
	}
	if e.name == q.lower {
		return bandName, 0
	}
	return bandNameNorm, 0
}

// fieldPhrase starts a lexical reason, in field priority order.
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

// reasonBuilder memoises reason strings within one Search: many hits share
// the same (field, matched terms), and the strings depend on nothing else.
type reasonBuilder struct {
	q     *query
	exact map[[2]uint8]string
	lex   map[lexKey]string
}

type lexKey struct {
	f    field
	mask uint64
}

func (rb *reasonBuilder) reasons(dst []string, c *cand) []string {
	n := 0
	skip := field(numFields)
	if c.band > bandLexical {
		dst = append(dst, rb.exactReason(c.band, c.label))
		n++
		switch tierOf(c.band) {
		case TierPackage:
			skip = fPackage
		case TierAlias:
			skip = fAlias
		case TierName:
			skip = fName
		}
	}
	for f := range numFields {
		if n == maxReasons {
			break
		}
		if f == skip || c.fm[f] == 0 {
			continue
		}
		dst = append(dst, rb.lexReason(f, c.fm[f]))
		n++
	}
	return dst
}

func (rb *reasonBuilder) exactReason(band, label uint8) string {
	key := [2]uint8{band, label}
	if s, ok := rb.exact[key]; ok {
		return s
	}
	var b strings.Builder
	switch tierOf(band) {
	case TierPackage:
		b.WriteString("package name matches ")
	case TierAlias:
		b.WriteString("alias matches ")
	default:
		b.WriteString("name matches ")
	}
	b.WriteString(rb.q.quoted)
	var notes []string
	if band == bandPkgPartial || band == bandPkgPartialNorm {
		notes = append(notes, partialLabels[label])
	}
	if band == bandPkgNorm || band == bandPkgPartialNorm || band == bandAliasNorm || band == bandNameNorm {
		notes = append(notes, "ignoring separators")
	}
	if len(notes) > 0 {
		b.WriteString(" (" + strings.Join(notes, ", ") + ")")
	}
	if rb.exact == nil {
		rb.exact = map[[2]uint8]string{}
	}
	rb.exact[key] = b.String()
	return rb.exact[key]
}

func (rb *reasonBuilder) lexReason(f field, mask uint64) string {
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
	if rb.lex == nil {
		rb.lex = map[lexKey]string{}
	}
	rb.lex[key] = s
	return s
}
