package search

import (
	"math"
	"math/bits"
	mbits "math/bits"
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
	maxValueRunes   = 48  // a name, alias or package name quoted from a document
	maxReasonRunes  = 160 // a reason that quotes document values stops adding items here
	// maxPairs bounds the joined neighbours a query tries (fast api → fastapi).
	maxPairs = 8
	// explainHits is how many hits of an answer get reasons that quote the
	// document's values (see Hit): a page of the largest size the tool
	// allows.
	explainHits = 50
)

// Bands, best last. A hit's Score is its band plus relevance in [0,1), so
// every exact hit outranks every lexical hit, which outranks every hit that
// only a fuzzy match found; a full package name outranks a partial one, and
// a literal (case-insensitive) match outranks one that only agrees once
// separators are removed.
const (
	bandFuzzy          = 0
	bandLexical        = 1
	bandNameNorm       = 3
	bandName           = 4
	bandAliasNorm      = 5
	bandAlias          = 6
	bandPkgPartialNorm = 7
	bandPkgPartial     = 8
	bandPkgNorm        = 9
	bandPkg            = 10
)

func tierOf(band uint8) Tier {
	switch {
	case band >= bandPkgPartialNorm:
		return TierPackage
	case band >= bandAliasNorm:
		return TierAlias
	case band >= bandNameNorm:
		return TierName
	case band == bandLexical:
		return TierLexical
	}
	return TierFuzzy
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
	// The package name the query wraps in a URL, registry page or install
	// command (see unwrap), in the same three forms; "" if none.
	altLower, altNorm, altQuoted string
	terms                        []string
	disp                         []string // per term: how a reason shows it
	groups                       []qgroup
	content                      uint64 // terms that are no host-only words
	fuzzy                        uint64 // terms with fuzzy keys
	whole                        uint64 // a one-word query: the term that is all of it
	fzKeys                       []fuzzyKey
	pairs                        []pairTerm
	phrases                      []pairTerm // a phrase's joined and short forms (phrases.go)
}

// qgroup is one compound ("order-sdk") or CJK run ("客户端") of the query
// with the bits of its terms. When a field matched every term of a group,
// a reason shows the group as the user wrote it; otherwise the pieces.
type qgroup struct {
	disp     string
	members  uint64
	complete bool   // false when the term cap cut the group
	text     string // lowercased, for the host-word test
	raw      string // normalize of the group: its letters and digits
}

// pairTerm is two neighbouring query words run together, for a name that
// writes them as one ("fast api" → fastapi, "oauth 2" → oauth2).
type pairTerm struct {
	text string
	bits uint64
}

func parseQuery(s string) *query {
	s = strings.TrimSpace(cutUTF8(s, maxQueryBytes))
	if s == "" {
		return nil
	}
	q := &query{lower: lowerFold(s), norm: normalize(s), quoted: quote(s, maxQueryRunes)}
	if alt := unwrap(s); alt != "" && normalize(alt) != q.norm && normalize(alt) != "" {
		q.altLower, q.altNorm, q.altQuoted = lowerFold(alt), normalize(alt), quote(alt, maxQueryRunes)
	}
	// Words come from the query without what a URL wraps around a path
	// (scheme, user, ".git"): those are no words anyone searches for.
	s = trimURL(s)

	type raw struct {
		term, disp string
		group      int
		start, end int
		stop       bool
		cjk        bool
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
		raws = append(raws, raw{string(term), disp, group, start, end, kind == kindPart && stopwords[string(term)], kind == kindCJK})
	})
	content := slices.ContainsFunc(raws, func(r raw) bool { return !r.stop })

	pos := map[string]int{}
	var raw1 []string // per term: its letters and digits as typed, unstemmed
	var cjk uint64
	cur := -1 // group id of the last qgroup
	var gStart, gEnd int
	finish := func() {
		if n := len(q.groups); n > 0 {
			g := &q.groups[n-1]
			g.disp = bound(s[gStart:gEnd], maxDisplayRunes)
			g.text = string(appendLower(nil, s[gStart:gEnd]))
			g.raw = normalize(s[gStart:gEnd])
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
			raw1 = append(raw1, normalize(s[r.start:r.end]))
			if r.cjk {
				cjk |= 1 << i
			}
		}
		g.members |= 1 << i
	}
	finish()
	q.groups = slices.DeleteFunc(q.groups, func(g qgroup) bool { return g.members == 0 })

	// Host-only words are qualifiers, unless the query has nothing else.
	texts := make([]string, len(q.groups))
	for i, g := range q.groups {
		texts[i] = g.text
	}
	var hostBits, contentBits uint64
	host := hostGroups(texts)
	for i, g := range q.groups {
		if host[i] {
			hostBits |= g.members
		} else {
			contentBits |= g.members
		}
	}
	q.content = contentBits
	if contentBits == 0 {
		q.content = hostBits
		clear(host)
	}

	// Fuzzy keys: each content word of four runes or more (or a numeronym)
	// by its stem and, when that differs, as typed.
	for i, term := range q.terms {
		if q.content&(1<<i) == 0 || cjk&(1<<i) != 0 || bits.OnesCount64(q.fuzzy) == maxFuzzyTerms {
			continue
		}
		d := fuzzyBound(utf8.RuneCountInString(raw1[i]))
		_, ok := fuzzyTerm(term)
		if ok || numeronym(term) > 0 {
			q.fzKeys = append(q.fzKeys, fuzzyKey{i, term, d})
		}
		if _, rok := fuzzyTerm(raw1[i]); rok && raw1[i] != term {
			q.fzKeys = append(q.fzKeys, fuzzyKey{i, raw1[i], d})
			ok = true
		}
		if ok || numeronym(term) > 0 {
			q.fuzzy |= 1 << i
		}
	}

	if len(q.groups) == 1 {
		for i := range q.terms {
			if raw1[i] == q.groups[0].raw && q.fuzzy&(1<<i) != 0 {
				q.whole = 1 << i
			}
		}
	}

	// Neighbouring one-word groups run together.
	for i := 1; i < len(q.groups) && len(q.pairs) < maxPairs; i++ {
		a, b := &q.groups[i-1], &q.groups[i]
		if host[i-1] || host[i] || bits.OnesCount64(a.members) != 1 || bits.OnesCount64(b.members) != 1 ||
			(a.members|b.members)&cjk != 0 || !isASCII(a.raw) || !isASCII(b.raw) {
			continue
		}
		joined := stem([]byte(a.raw + b.raw))
		if len(joined) >= minFuzzyRunes && len(joined) <= maxTermLen {
			q.pairs = append(q.pairs, pairTerm{string(joined), a.members | b.members})
		}
	}
	q.addPhrases()
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

// quote makes text safe to show: cleaned (see clean), at most n runes, then
// quoted. strconv.Quote then only has quotes and backslashes left to
// escape, so a reason stays one short line.
func quote(s string, n int) string {
	if plain(s, n) {
		return `"` + s + `"` // what the rest would return, without its work
	}
	return strconv.Quote(clean(s, n))
}

// plain reports printable ASCII of at most n bytes that clean leaves alone
// and strconv.Quote does not escape: no quotes, backslashes, control
// characters or runs of spaces, none at the ends.
func plain(s string, n int) bool {
	if len(s) > n || s == "" || s[0] == ' ' || s[len(s)-1] == ' ' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < ' ' || c > '~' || c == '"' || c == '\\' || (c == ' ' && s[i-1] == ' ') {
			return false
		}
	}
	return true
}

// clean keeps printable characters only (control and format characters —
// bidi overrides, zero-width characters, tag characters — dropped,
// whitespace runs made one space, invalid UTF-8 replaced) and cuts the
// result to n runes, marking the cut. Document text goes through it before
// it is shown: local/meta.Clean does the same upstream, but this package
// must not rely on, or import, the code that reads files.
func clean(s string, n int) string {
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
	return bound(b.String(), n)
}

// cand is one document a query touched. It is kept small (40 bytes): a
// query that matches most of a large corpus walks tens of thousands.
type cand struct {
	slot  uint32
	band  uint8
	label uint8 // index into partialLabels for package partial matches
	score float64
	mask  uint64 // query terms matched anywhere
	// Query terms matched per field. For queries of at most narrowTerms
	// terms (nearly all: a package path with its compounds has a dozen),
	// packed here: bit 8·f+i of fm says term i matched field f, of fm2
	// term 8+i. Wider queries keep them in scratch.wide.
	fm, fm2 uint64
}

const narrowTerms = 16

type scratch struct {
	idx   []int32 // slot → 1 + index in cands; 0: not a candidate
	cands []cand
	wide  [][numFields]uint64 // per cand, for queries of more than narrowTerms terms
	keys  []uint64            // sort keys, see Search
	tmp   []uint64            // radix sort buffer
	fz    []fuzzyTarget
}

// nameBits returns the query terms cand ci matched in a name, alias or
// package name.
func (sc *scratch) nameBits(ci int, narrow bool) uint64 {
	if !narrow {
		w := &sc.wide[ci]
		return w[fName] | w[fAlias] | w[fPackage]
	}
	c := &sc.cands[ci]
	fm, fm2 := c.fm, c.fm2
	return (fm>>(8*fName)|fm>>(8*fAlias)|fm>>(8*fPackage))&0xff | ((fm2>>(8*fName)|fm2>>(8*fAlias)|fm2>>(8*fPackage))&0xff)<<8
}

// fieldMasks returns, per field, the query terms cand ci matched there.
func (sc *scratch) fieldMasks(ci int, narrow bool) (fm [numFields]uint64) {
	if !narrow {
		return sc.wide[ci]
	}
	c := &sc.cands[ci]
	for f := range fm {
		fm[f] = c.fm>>(8*f)&0xff | (c.fm2>>(8*f)&0xff)<<8
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
	return ix.SearchFilter(query, Filter{ID: keep}, n)
}

// SearchFilter is SearchTop with a Filter.
func (ix *Index) SearchFilter(query string, keep Filter, n int) (hits []Hit, total int) {
	defer ix.unguard(ix.guard())
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
	if total := int(ix.nb) + len(ix.docs); len(sc.idx) < total {
		sc.idx = make([]int32, total)
	}
	sc.cands, sc.wide, sc.fz = sc.cands[:0], sc.wide[:0], sc.fz[:0]
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
	nq := float64(bits.OnesCount64(q.content))
	// The terms within the bound of a one-word query as a whole, sorted.
	var wholeIDs []uint32
	for _, t := range sc.fz {
		if q.whole == 1<<t.qi {
			wholeIDs = append(wholeIDs, t.id)
		}
	}
	slices.Sort(wholeIDs)
	keys := sc.keys[:0]
	for ci := range sc.cands {
		c := &sc.cands[ci]
		// Words matched only by a fuzzy match: none of the document's own
		// exact matches of a word is ever counted twice.
		fz := sc.nameBits(ci, narrow) & q.fuzzy &^ c.mask
		if c.band == bandFuzzy && c.mask != 0 {
			// Host-only words never make a candidate, so every candidate
			// matched a word exactly (lexical), fuzzily, or the whole query.
			c.band = bandLexical
		}
		if !keep.keeps(ix, c.slot) {
			continue
		}
		lex := 0.0
		if nq > 0 {
			// Coordination: a document matching more of the query's
			// distinct terms ranks higher; a fuzzy match counts less.
			lex = c.score * (float64(bits.OnesCount64(c.mask)) + fuzzyCoordScale*float64(bits.OnesCount64(fz))) / nq
		}
		// lex/(lex+1) < 1 keeps bands apart; the cap keeps float32
		// rounding from ever reaching the next band.
		rel := lex / (lex + 1)
		if c.band <= bandLexical && len(wholeIDs) > 0 {
			// As the exact tiers do for the query itself: a name, alias or
			// package name that is, as a whole, a misspelling of the
			// whole query comes first within its band.
			rel /= 2
			if fz&q.whole != 0 && wholeClose(ix.wholeOf(c.slot), wholeIDs) {
				rel += 0.5
			}
		}
		score := float32(float64(c.band) + min(rel, 0.999))
		keys = append(keys, uint64(^math.Float32bits(score))<<32|uint64(rank[c.slot]))
	}
	total = len(keys)
	if n >= 0 && n < len(keys) {
		keys = smallest(keys, n)
	}
	sc.tmp = sortKeys(keys, sc.tmp)

	if len(keys) > 0 {
		hits = make([]Hit, len(keys))
		ids := ix.hitIDs(keys, order)
		rb := &reasonBuilder{q: q, ix: ix, targets: sc.fz}
		var weak []string // the reason that marks a weaker match, once built
		exactTop := false
		for i, k := range keys {
			slot := order[uint32(k)]
			ci := int(sc.idx[slot] - 1)
			c := &sc.cands[ci]
			if i == 0 {
				exactTop = c.band >= bandNameNorm
			}
			var reasons []string
			if c.band <= bandLexical && (i >= explainHits || sc.nameBits(ci, narrow) == 0) {
				// Reasons from the query's words alone: shared by every hit
				// that matched alike.
				key := reasonKey{band: c.band, label: c.label, fuzzy: sc.nameBits(ci, narrow) & q.fuzzy &^ c.mask}
				if narrow {
					key.fm[0], key.fm[1] = c.fm, c.fm2 // packed: a cheaper key, same meaning within one query
				} else {
					key.fm = sc.wide[ci]
				}
				reasons = rb.reasons(&key, sc, ci, narrow)
			} else {
				reasons = rb.docReasons(slot, c.band, c.label, sc.fieldMasks(ci, narrow))
			}
			if exactTop && c.band <= bandLexical {
				// The query is exactly another project's package, alias or
				// name: this one only shares words with it (issue 25:
				// "@acme/order-sdk" listed half a tree through "acme").
				// Said last, so its own reasons keep their places.
				if weak == nil {
					weak = []string{"weaker match: another project is exactly " + q.quoted}
				}
				reasons = append(reasons[:min(len(reasons), maxReasons-1):min(len(reasons), maxReasons-1)], weak[0])
			}
			hits[i] = Hit{
				ID:      ids[i],
				Score:   float64(math.Float32frombits(^uint32(k >> 32))),
				Tier:    tierOf(c.band),
				Reasons: reasons,
			}
		}
	}
	if len(sc.cands) > len(sc.idx)/16 {
		clear(sc.idx) // one sweep beats scattered writes
	} else {
		for _, c := range sc.cands {
			sc.idx[c.slot] = 0
		}
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

// bm25 holds one query's per-field length normalisation:
// tf·w / (a + c·len).
type bm25 struct {
	n    float64
	a, c [numFields]float64
}

func (ix *Index) bm25() *bm25 {
	w := &bm25{n: float64(ix.live)}
	for f := range numFields {
		w.a[f] = 1 - fieldB[f]
		if ix.sumLen[f] > 0 {
			w.c[f] = fieldB[f] * w.n / float64(ix.sumLen[f])
		}
	}
	return w
}

func (w *bm25) idf(df int) float64 {
	return math.Log(1 + (w.n-float64(df)+0.5)/(float64(df)+0.5))
}

// tf is the field-weighted, length-normalised frequency of a posting over
// the fields tfs holds, and the fields it found.
func (w *bm25) tf(fl *[numFields]uint16, tfs uint32) (tf float64, fields uint8) {
	for tfs != 0 {
		sh := uint(bits.TrailingZeros32(tfs)) &^ 3
		f := sh >> 2
		tf += fieldWeight[f] * float64((tfs>>sh)&15) / (w.a[f] + w.c[f]*float64(fl[f]))
		fields |= 1 << f
		tfs &^= 15 << sh
	}
	return tf, fields
}

// mark records that the query terms in bits matched cand ci in fields.
func (sc *scratch) mark(ci int, narrow bool, bits uint64, fields uint8) {
	cd := &sc.cands[ci]
	for fs := fields; fs != 0; fs &= fs - 1 {
		f := uint(bits8(fs))
		if narrow {
			cd.fm |= (bits & 0xff) << (8 * f)
			cd.fm2 |= (bits >> 8 & 0xff) << (8 * f)
		} else {
			sc.wide[ci][f] |= bits
		}
	}
}

func bits8(x uint8) int { return bits.TrailingZeros8(x) }

// score accumulates BM25F into sc.cands: the query's words, then words run
// together, then fuzzy matches of name-field terms, then host-only words
// (which only add to documents already found).
func (ix *Index) score(q *query, sc *scratch, narrow bool) {
	w := ix.bm25()
	for i, t := range q.terms {
		if q.content&(1<<i) == 0 {
			continue
		}
		if id, ok := ix.lookup(t); ok {
			ix.scoreTerm(w, sc, narrow, id, ^uint32(0), 1<<i, 1)
		}
	}
	for _, p := range q.pairs {
		if id, ok := ix.lookup(p.text); ok && ix.ndf(id) > 0 {
			ix.scoreTerm(w, sc, narrow, id, nameTFs, p.bits, 1)
		}
	}
	for _, p := range q.phrases {
		if id, ok := ix.lookup(p.text); ok {
			ix.scoreTerm(w, sc, narrow, id, ^uint32(0), p.bits, 1)
		}
	}
	if len(q.fzKeys) > 0 && !ix.noFuzzy {
		sc.fz = ix.expand(q.fzKeys, sc.fz[:0])
		for _, t := range sc.fz {
			if t.dist > 0 {
				ix.scoreFuzzy(w, sc, narrow, t)
			}
		}
	}
	for i, t := range q.terms {
		if q.content&(1<<i) != 0 {
			continue
		}
		id, ok := ix.lookup(t)
		if !ok {
			continue
		}
		idf := w.idf(ix.df(id))
		bp, op := ix.postLists(id)
		for _, p := range bp {
			ci := sc.idx[p.slot]
			if ci == 0 {
				continue // a tombstoned slot is never a candidate
			}
			tf, _ := w.tf(&ix.base.flen[p.slot], p.tfs)
			sc.cands[ci-1].score += hostWeight * idf * tf / (k1 + tf)
		}
		for _, p := range op {
			ci := sc.idx[p.slot]
			if ci == 0 {
				continue
			}
			tf, _ := w.tf(&ix.flen[p.slot-ix.nb], p.tfs)
			sc.cands[ci-1].score += hostWeight * idf * tf / (k1 + tf)
		}
	}
}

// scoreTerm adds term id's postings in the fields sel selects, crediting
// the query terms in bits.
func (ix *Index) scoreTerm(w *bm25, sc *scratch, narrow bool, id, sel uint32, bits uint64, weight float64) {
	idf := w.idf(ix.df(id))
	bp, op := ix.postLists(id)
	if len(bp) > 0 {
		ix.scorePostings(w, sc, narrow, bp, ix.base.flen, 0, ix.tomb, sel, bits, weight*idf)
	}
	if len(op) > 0 {
		ix.scorePostings(w, sc, narrow, op, ix.flen, ix.nb, nil, sel, bits, weight*idf)
	}
}

// scorePostings is scoreTerm over one list: flen[slot-off] holds the field
// lengths of its slots, tomb the slots to skip.
func (ix *Index) scorePostings(w *bm25, sc *scratch, narrow bool, post []posting, flen [][numFields]uint16, off uint32, tomb []uint64, sel uint32, bits uint64, wi float64) {
	if narrow {
		scoreNarrow(w, sc, post, flen, off, tomb, sel, bits, wi)
		return
	}
	for _, p := range post {
		tfs := p.tfs & sel
		if tfs == 0 {
			continue
		}
		if tomb != nil && tomb[p.slot>>6]&(1<<(p.slot&63)) != 0 {
			continue
		}
		tf, fields := w.tf(&flen[p.slot-off], tfs)
		ci := sc.cand(p.slot, narrow)
		sc.mark(ci, narrow, bits, fields)
		cd := &sc.cands[ci]
		cd.score += wi * tf / (k1 + tf)
		cd.mask |= bits
	}
}

// scoreNarrow is scorePostings for a query of at most narrowTerms terms
// (nearly all), in one pass per posting: the same arithmetic, the
// candidate's fields marked as the frequencies are summed, the scratch
// arrays held in locals. A query that meets most of a large catalog walks
// hundreds of thousands of postings here.
func scoreNarrow(w *bm25, sc *scratch, post []posting, flen [][numFields]uint16, off uint32, tomb []uint64, sel uint32, bits uint64, wi float64) {
	idx, cands := sc.idx, sc.cands
	lo, hi := bits&0xff, bits>>8&0xff
	for _, p := range post {
		tfs := p.tfs & sel
		if tfs == 0 {
			continue
		}
		if tomb != nil && tomb[p.slot>>6]&(1<<(p.slot&63)) != 0 {
			continue
		}
		fl := &flen[p.slot-off]
		var tf float64
		var fm, fm2 uint64
		for t := tfs; t != 0; {
			sh := uint(mbits.TrailingZeros32(t)) &^ 3
			f := (sh >> 2) & 7
			tf += fieldWeight[f] * float64((t>>sh)&15) / (w.a[f] + w.c[f]*float64(fl[f]))
			fm |= lo << (8 * f)
			fm2 |= hi << (8 * f)
			t &^= 15 << sh
		}
		ci := idx[p.slot]
		if ci == 0 {
			cands = append(cands, cand{slot: p.slot})
			ci = int32(len(cands))
			idx[p.slot] = ci
		}
		cd := &cands[ci-1]
		cd.fm |= fm
		cd.fm2 |= fm2
		cd.score += wi * tf / (k1 + tf)
		cd.mask |= bits
	}
	sc.cands = cands
}

// scoreFuzzy credits a document once per query word for its best spelling
// of it in a name, alias or package name — never for a word the document
// also matched exactly. Targets come best first (see expand), so the
// first credit is the best. The name-field bits of a fuzzy word are free
// for this: a document with the word itself in such a field would have
// its exact bit set.
func (ix *Index) scoreFuzzy(w *bm25, sc *scratch, narrow bool, t fuzzyTarget) {
	weight := fuzzyWeight1
	if t.dist > 1 {
		weight = fuzzyWeight2
	}
	wi := weight * w.idf(ix.df(t.id))
	bp, op := ix.postLists(t.id)
	if len(bp) > 0 {
		ix.scoreFuzzyPostings(w, sc, narrow, bp, ix.base.flen, 0, ix.tomb, uint64(1)<<t.qi, wi)
	}
	if len(op) > 0 {
		ix.scoreFuzzyPostings(w, sc, narrow, op, ix.flen, ix.nb, nil, uint64(1)<<t.qi, wi)
	}
}

func (ix *Index) scoreFuzzyPostings(w *bm25, sc *scratch, narrow bool, post []posting, flen [][numFields]uint16, off uint32, tomb []uint64, bit uint64, wi float64) {
	for _, p := range post {
		tfs := p.tfs & nameTFs
		if tfs == 0 {
			continue
		}
		if tomb != nil && tomb[p.slot>>6]&(1<<(p.slot&63)) != 0 {
			continue
		}
		if ci := sc.idx[p.slot]; ci > 0 && (sc.cands[ci-1].mask|sc.nameBits(int(ci-1), narrow))&bit != 0 {
			continue
		}
		tf, fields := w.tf(&flen[p.slot-off], tfs)
		ci := sc.cand(p.slot, narrow)
		sc.mark(ci, narrow, bit, fields)
		sc.cands[ci].score += wi * tf / (k1 + tf)
	}
}

var partialLabels = []string{"without scope", "artifact id", "last path segment"}

// exactKey is one form of the query the exact tiers compare: the query
// itself, or the package name it wraps (alt).
type exactKey struct {
	lower, norm, quoted string
	alt                 bool
}

func (q *query) exactKeys() []exactKey {
	keys := []exactKey{{q.lower, q.norm, q.quoted, false}}
	if q.altNorm != "" {
		keys = append(keys, exactKey{q.altLower, q.altNorm, q.altQuoted, true})
	}
	return keys
}

// matchExact raises the band of documents whose package, alias or name is
// the query, or the package name the query wraps.
func (ix *Index) matchExact(q *query, sc *scratch, narrow bool) {
	for _, key := range q.exactKeys() {
		if key.norm == "" {
			continue
		}
		for k := range numExact {
			if ix.base != nil {
				for _, slot := range ix.base.exact(exactKind(k), key.norm) {
					if ix.isTomb(slot) {
						continue
					}
					band, label, _ := ix.base.entry(slot).exactMatch(exactKind(k), key)
					if c := &sc.cands[sc.cand(slot, narrow)]; band > c.band {
						c.band, c.label = band, label
					}
				}
			}
			for _, slot := range ix.exact[k][key.norm] {
				band, label, _ := ix.over1(slot).exactMatch(exactKind(k), key)
				if c := &sc.cands[sc.cand(slot, narrow)]; band > c.band {
					c.band, c.label = band, label
				}
			}
		}
	}
}

// exactMatch returns the band of the document's best match of kind k with
// key, the partial form's label, and which package or alias matched (-1:
// the name).
func (e *docEntry) exactMatch(k exactKind, key exactKey) (band, label uint8, idx int) {
	list := e.packages
	lit, norm := bandPkg, bandPkgNorm
	switch k {
	case exPkgPart:
		idx = -1
		for i, p := range e.packages {
			form, flabel := partialOf(p)
			b := uint8(0)
			switch {
			case form == "":
			case foldEq(form, key.lower):
				b = bandPkgPartial
			case normalize(form) == key.norm:
				b = bandPkgPartialNorm
			}
			if b > band {
				band, label, idx = b, uint8(slices.Index(partialLabels, flabel)), i
			}
		}
		return band, label, idx
	case exAlias:
		list, lit, norm = e.aliases, bandAlias, bandAliasNorm
	case exName:
		switch {
		case foldEq(e.name, key.lower):
			return bandName, 0, -1
		case normalize(e.name) == key.norm:
			return bandNameNorm, 0, -1
		}
		return 0, 0, -1
	}
	if i := slices.IndexFunc(list, func(v string) bool { return foldEq(v, key.lower) }); i >= 0 {
		return uint8(lit), 0, i
	}
	for i, v := range list {
		if normalize(v) == key.norm {
			return uint8(norm), 0, i
		}
	}
	return 0, 0, -1
}
