package search

import (
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
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

// quote makes query text safe to show: printable characters only (control
// and format characters dropped, whitespace runs made one space, invalid
// UTF-8 replaced), at most n runes, then quoted. strconv.Quote then only
// has quotes and backslashes left to escape, so a reason stays one short
// line.
func quote(s string, n int) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		switch {
		case unicode.IsSpace(r):
			space = b.Len() > 0
			continue
		case !unicode.IsPrint(r) && r != utf8.RuneError:
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return strconv.Quote(bound(b.String(), n))
}

// cand is one document a query touched. It is kept small (32 bytes): a
// query that matches most of a large corpus walks tens of thousands.
type cand struct {
	slot  uint32
	band  uint8
	label uint8 // index into partialLabels for package partial matches
	score float64
	mask  uint64 // query terms matched anywhere
	// Query terms matched per field. For queries of at most narrowTerms
	// terms (nearly all), packed here: bit 8·f+i says term i matched field
	// f. Wider queries keep them in scratch.wide.
	fm uint64
}

const narrowTerms = 8

type scratch struct {
	idx   []int32 // slot → 1 + index in cands; 0: not a candidate
	cands []cand
	wide  [][numFields]uint64 // per cand, for queries of more than narrowTerms terms
	keys  []uint64            // sort keys, see Search
	tmp   []uint64            // radix sort buffer
}

// fieldMasks returns, per field, the query terms cand ci matched there.
func (sc *scratch) fieldMasks(ci int, narrow bool) (fm [numFields]uint64) {
	if !narrow {
		return sc.wide[ci]
	}
	for f := range fm {
		fm[f] = sc.cands[ci].fm >> (8 * f) & 0xff
	}
	return fm
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// cand returns the index of slot's candidate, adding one if needed.
func (sc *scratch) cand(slot uint32, narrow bool) int {
	ci := sc.idx[slot]
	if ci == 0 {
		sc.cands = append(sc.cands, cand{slot: slot})
		if !narrow {
			sc.wide = append(sc.wide, [numFields]uint64{})
		}
		ci = int32(len(sc.cands))
		sc.idx[slot] = ci
	}
	return int(ci - 1)
}

// Search returns every document that matches query and that keep accepts
// (nil keeps all), best first; ties break by SortKey, then ID. An empty or
// whitespace query returns nil: listing is List's job. keep runs under the
// index's read lock, so it must not call back into the Index.
func (ix *Index) Search(query string, keep func(id string) bool) []Hit {
	hits, _ := ix.SearchTop(query, keep, -1)
	return hits
}

// SearchTop is Search cut to the best n hits (n < 0: all), with the number
// of hits Search would return. The first n hits are exactly Search's first
// n, so a page at offset o of size l is SearchTop(q, keep, o+l)[o:]. It
// saves most of the cost of a query that matches much of the catalog: only
// the returned hits are sorted and given reasons.
func (ix *Index) SearchTop(query string, keep func(id string) bool, n int) (hits []Hit, total int) {
	q := parseQuery(query)
	if q == nil || (len(q.terms) == 0 && q.norm == "") || n == 0 {
		return nil, 0
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.live == 0 {
		return nil, 0
	}
	order, rank := ix.ensureOrder()

	sc := scratchPool.Get().(*scratch)
	if len(sc.idx) < len(ix.docs) {
		sc.idx = make([]int32, len(ix.docs))
	}
	sc.cands, sc.wide = sc.cands[:0], sc.wide[:0]
	narrow := len(q.terms) <= narrowTerms
	ix.score(q, sc, narrow)
	ix.matchExact(q, sc, narrow)

	// Filter before anything about a candidate becomes observable. Each
	// kept candidate gets one sort key: the score as float32 bits, inverted
	// so that higher scores sort first, then its rank in the listing order
	// for ties. Positive float32 bits order like the values, and sorting
	// plain uint64s is several times faster than a comparator over structs.
	// Scores are reported at the same float32 precision, so the list order
	// and the reported scores always agree.
	nq := float64(len(q.terms))
	keys := sc.keys[:0]
	for ci := range sc.cands {
		c := &sc.cands[ci]
		if keep != nil && !keep(ix.idOf[c.slot]) {
			continue
		}
		lex := 0.0
		if nq > 0 {
			// Coordination: a document matching more of the query's
			// distinct terms ranks higher.
			lex = c.score * float64(bits.OnesCount64(c.mask)) / nq
		}
		// lex/(lex+1) < 1 keeps bands apart; the cap keeps float32
		// rounding from ever reaching the next band.
		score := float32(float64(c.band) + min(lex/(lex+1), 0.999))
		keys = append(keys, uint64(^math.Float32bits(score))<<32|uint64(rank[c.slot]))
	}
	total = len(keys)
	if n >= 0 && n < len(keys) {
		keys = smallest(keys, n)
	}
	sc.tmp = sortKeys(keys, sc.tmp)

	if len(keys) > 0 {
		hits = make([]Hit, len(keys))
		rb := &reasonBuilder{q: q}
		for i, k := range keys {
			slot := order[uint32(k)]
			ci := int(sc.idx[slot] - 1)
			c := &sc.cands[ci]
			key := reasonKey{band: c.band, label: c.label}
			if narrow {
				key.fm[0] = c.fm // packed: a cheaper key, same meaning within one query
			} else {
				key.fm = sc.wide[ci]
			}
			hits[i] = Hit{
				ID:      ix.idOf[slot],
				Score:   float64(math.Float32frombits(^uint32(k >> 32))),
				Tier:    tierOf(c.band),
				Reasons: rb.reasons(&key, sc, ci, narrow),
			}
		}
	}
	for _, c := range sc.cands {
		sc.idx[c.slot] = 0
	}
	sc.keys = keys[:0]
	scratchPool.Put(sc)
	return hits, total
}

// smallest moves the n smallest keys (unordered) to the front of keys and
// returns them, keeping a max-heap of the best n seen: most keys lose to the
// heap's top in one comparison.
func smallest(keys []uint64, n int) []uint64 {
	h := keys[:n]
	for i := n/2 - 1; i >= 0; i-- {
		siftDown(h, i)
	}
	for _, k := range keys[n:] {
		if k < h[0] {
			h[0] = k
			siftDown(h, 0)
		}
	}
	return h
}

func siftDown(h []uint64, i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		if r := l + 1; r < len(h) && h[r] > h[l] {
			l = r
		}
		if h[i] >= h[l] {
			return
		}
		h[i], h[l] = h[l], h[i]
		i = l
	}
}

// sortKeys sorts keys ascending and returns the (possibly grown) buffer.
// Large answers use an LSD radix sort, a byte per pass, skipping bytes that
// are the same in every key (most of the rank's high bytes, often the
// score's exponent): linear time where a comparison sort of a query that
// matches most of the corpus would dominate the query's cost.
func sortKeys(keys, buf []uint64) []uint64 {
	if len(keys) < 512 {
		slices.Sort(keys)
		return buf
	}
	if cap(buf) < len(keys) {
		buf = make([]uint64, len(keys))
	}
	src, dst := keys, buf[:len(keys)]
	for shift := uint(0); shift < 64; shift += 8 {
		var count [256]int
		for _, k := range src {
			count[byte(k>>shift)]++
		}
		if count[byte(src[0]>>shift)] == len(src) {
			continue // every key has this byte: the pass would not move anything
		}
		pos := 0
		for i, n := range count {
			count[i] = pos
			pos += n
		}
		for _, k := range src {
			b := byte(k >> shift)
			dst[count[b]] = k
			count[b]++
		}
		src, dst = dst, src
	}
	if &src[0] != &keys[0] {
		copy(keys, src)
	}
	return buf
}

// score accumulates BM25F over the query terms into sc.cands.
func (ix *Index) score(q *query, sc *scratch, narrow bool) {
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
			ci := sc.cand(p.slot, narrow)
			cd := &sc.cands[ci]
			tf := 0.0
			for tfs := p.tfs; tfs != 0; {
				sh := uint(bits.TrailingZeros32(tfs)) &^ 3
				f := sh >> 2
				tf += fieldWeight[f] * float64((tfs>>sh)&15) / (a[f] + c[f]*float64(fl[f]))
				if narrow {
					cd.fm |= bit << (8 * f)
				} else {
					sc.wide[ci][f] |= bit
				}
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
func (ix *Index) matchExact(q *query, sc *scratch, narrow bool) {
	if q.norm == "" {
		return
	}
	for k := range numExact {
		for _, slot := range ix.exact[k][q.norm] {
			band, label := ix.exactBand(exactKind(k), slot, q)
			if c := &sc.cands[sc.cand(slot, narrow)]; band > c.band {
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

// reasonBuilder memoises reasons within one Search: they depend only on the
// query and on which terms matched in which fields, and a query's hits fall
// into few such patterns. A direct-mapped table over a hash of the pattern
// finds a known one with a single key comparison; a collision only costs a
// rebuild.
type reasonBuilder struct {
	q     *query
	sets  []reasonSet
	table [1 << reasonTableBits]int32 // hash → 1 + index in sets
	last  int32                       // 1 + index of the last pattern returned
	exact map[[2]uint8]string
	short [numFields][]maskReason
	lex   map[lexKey]string
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

// reasons returns the reasons for a match pattern; hits with the same
// pattern share the slice. A new pattern is expanded from candidate ci.
func (rb *reasonBuilder) reasons(key *reasonKey, sc *scratch, ci int, narrow bool) []string {
	if rb.last > 0 && rb.sets[rb.last-1].key == *key { // neighbours in score order often match alike
		return rb.sets[rb.last-1].reasons
	}
	slot := key.hash() >> (64 - reasonTableBits)
	if i := rb.table[slot]; i > 0 && rb.sets[i-1].key == *key {
		rb.last = i
		return rb.sets[i-1].reasons
	}
	rs := rb.build(key.band, key.label, sc.fieldMasks(ci, narrow))
	rb.sets = append(rb.sets, reasonSet{*key, rs})
	rb.table[slot] = int32(len(rb.sets))
	rb.last = int32(len(rb.sets))
	return rs
}

func (rb *reasonBuilder) build(band, label uint8, fm [numFields]uint64) []string {
	dst := make([]string, 0, maxReasons)
	skip := field(numFields)
	if band > bandLexical {
		dst = append(dst, rb.exactReason(band, label))
		switch tierOf(band) {
		case TierPackage:
			skip = fPackage
		case TierAlias:
			skip = fAlias
		case TierName:
			skip = fName
		}
	}
	for f := range numFields {
		if len(dst) == maxReasons {
			break
		}
		if f == skip || fm[f] == 0 {
			continue
		}
		dst = append(dst, rb.lexReason(f, fm[f]))
	}
	return dst[:len(dst):len(dst)]
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
