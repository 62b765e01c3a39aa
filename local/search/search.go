// Package search is the catalog's in-memory lexical index over project
// metadata (R16).
//
// It owns what becomes a search field (DocOf, CardDoc), tokenisation,
// ranking, tie order, the short reasons attached to each hit and the
// spellings Suggest offers. It must never do I/O, read
// files, call GBrain, import code that does, or decide sharing: the caller
// passes a keep filter with every Search, List and Suggest, and a document
// the filter rejects never appears, never shapes a reason and is never
// suggested. (It still counts in corpus statistics — document frequencies
// and average field lengths — so it can nudge the scores of visible hits;
// nothing else of it is observable: in particular, which documents match a
// query, exactly or fuzzily, never depends on another document.)
//
// A record goes one way: DocOf (document.go) → analyze, the one term
// pipeline (analyze.go over tokenize.go) → Index.Put (index.go,
// postings.go) → WriteFrozen (frozen_write.go) → a Frozen base
// (frozen.go) that NewOver answers from beneath an overlay (slots.go
// tells the two apart). A query goes parseQuery (query.go) → score,
// matchExact, expand (score.go, exact.go, fuzzy.go) → rankKeys and hits
// with reasons (search.go, reasons.go, reason_values.go).
//
// Ranking, best first:
//
//  1. Exact tiers: the whole query is a package name (full, then the
//     unscoped / last-path-segment / artifact-id form), an alias, or the
//     project name. Case never matters; within each, a literal match beats
//     one that only agrees once separators are removed (react router dom,
//     react_router_dom and reactRouterDom all meet react-router-dom). A
//     query that wraps a package name in a URL, a registry page or an
//     install command (https://github.com/a/b.git, npmjs.com/package/x,
//     npm install x, pip install x) is also tried as that name.
//  2. BM25F over name, aliases, packages (high weight), keywords, tags,
//     description (medium), README excerpt and path segments (low), times
//     a coordination factor: the share of the query's distinct terms a
//     document matches. Terms: lowercase words split at separators,
//     camelCase humps and letter/digit changes, plus each compound joined
//     (orderSdk and order-sdk share "ordersdk"); plural stemming; CJK runs
//     as overlapping bigrams. Neighbouring query words also meet a name
//     that writes them as one (fast api → fastapi). Host-only words
//     (github.com, npm, https, www, com — see host.go for the list and why)
//     never make a document a hit on their own when the query has other
//     words.
//  3. Fuzzy: a query word of 4–7 runes one edit, of 8 or more two edits
//     (Damerau: swapped neighbours are one edit) from a term of a name,
//     alias or package name; numeronyms (i18n, a11y) by first and last
//     letter and length. Only documents that matched nothing else come
//     here; a document that did gets a fuzzy match of another word counted
//     at a discount. The dictionary is the name-field terms only, in
//     buckets by length with a letter signature per term (fuzzy.go), so a
//     query never scans documents or prose to find its candidates.
//  4. Ties: SortKey, then ID.
//
// Reasons quote the query's words, fixed field names, and — for a name,
// alias or package name — the value that matched and the word of it that
// did: `package "@acme/refund-worker" matches "refund"`, `name "cobra" is
// close to "cobar"`. Those values are identifiers the catalog already shows
// (a project's name), never prose: descriptions, README text, keywords and
// paths are never quoted. Anything quoted goes through clean (control and
// format characters — bidi overrides, zero-width and tag characters —
// dropped, whitespace collapsed, invalid UTF-8 replaced), is cut to 48
// runes (a value) or 32 (a word) and Go-quoted, and a hit has at most three
// reasons, so a reason stays one short line that can carry no more than an
// identifier can. They are safe to show to an agent as data.
package search

import (
	"math"
	"math/bits"
	"slices"
)

// Tier says why a hit ranks where it does. Lower tiers always rank first.
type Tier int

const (
	TierPackage Tier = iota // the query is a package name (full, or unscoped / last segment / artifact id)
	TierAlias               // the query is an alias
	TierName                // the query is the project name
	TierLexical             // BM25F relevance only
	TierFuzzy               // only a misspelt name, alias or package name matched
)

func (t Tier) String() string {
	switch t {
	case TierPackage:
		return "package"
	case TierAlias:
		return "alias"
	case TierName:
		return "name"
	case TierLexical:
		return "lexical"
	case TierFuzzy:
		return "fuzzy"
	}
	return "unknown"
}

// Hit is one search result. Score never increases down a result list: it
// is the band (an integer: 0 for fuzzy hits, 1 for lexical ones, 3–10 for
// the exact tiers) plus the relevance squashed into [0,1), at float32
// precision. Scores compare only within one Search call.
// Reasons are at most three short phrases. Those of the first 50 hits of
// an answer (a page of the largest size the tool allows) quote the value
// of a name, alias or package name that matched; later lexical and fuzzy
// hits name the field and the query's words (`name contains "refunds"`,
// `name is close to "cobar"`), which costs nothing per hit — quoting costs
// a few hundred nanoseconds a hit, and a caller may keep a thousand hits
// for paging.
// Hits with the same reasons share one slice: treat it as read-only.
type Hit struct {
	ID      string
	Score   float64
	Tier    Tier
	Reasons []string
}

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

	keys := ix.rankKeys(q, sc, narrow, keep, rank)
	total = len(keys)
	if n >= 0 && n < len(keys) {
		keys = smallest(keys, n)
	}
	sc.tmp = sortKeys(keys, sc.tmp)
	if len(keys) > 0 {
		hits = ix.hits(q, sc, narrow, keys, order)
	}
	sc.release(keys)
	return hits, total
}

// rankKeys gives each candidate keep accepts one sort key: the score as
// float32 bits, inverted so that higher scores sort first, then its rank
// in the listing order for ties. Positive float32 bits order like the
// values, and sorting plain uint64s is several times faster than a
// comparator over structs. Scores are reported at the same float32
// precision, so the list order and the reported scores always agree.
// Candidates are filtered before anything about them becomes observable.
func (ix *Index) rankKeys(q *query, sc *scratch, narrow bool, keep Filter, rank []uint32) []uint64 {
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
	return keys
}

// hits turns sorted keys into hits with their reasons.
func (ix *Index) hits(q *query, sc *scratch, narrow bool, keys []uint64, order []uint32) []Hit {
	hits := make([]Hit, len(keys))
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
	return hits
}
