// Package search is the catalog's in-memory lexical index over project
// metadata (R16).
//
// It owns tokenisation, ranking, tie order, the short reasons attached to
// each hit and the spellings Suggest offers. It must never do I/O, read
// files, call GBrain, import code that does, or decide sharing: the caller
// passes a keep filter with every Search, List and Suggest, and a document
// the filter rejects never appears, never shapes a reason and is never
// suggested. (It still counts in corpus statistics — document frequencies
// and average field lengths — so it can nudge the scores of visible hits;
// nothing else of it is observable: in particular, which documents match a
// query, exactly or fuzzily, never depends on another document.)
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
	"bytes"
	"encoding/binary"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
	"unsafe"
)

// Doc is one project's searchable metadata.
type Doc struct {
	ID          string // opaque project id; empty ids are ignored
	SortKey     string // stable order for listings and ties (e.g. lowercased name + root)
	Name        string
	Aliases     []string
	Packages    []string // e.g. "@company/order-sdk", "github.com/acme/orders", "org.acme:orders-core"
	Keywords    []string
	Tags        []string
	Description string
	Readme      string
	Path        string // the root path; its segments are a low-weight field
}

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

// BM25F parameters. Names, packages and aliases are what people search by;
// keywords, tags and the description say what a project is; a README
// paragraph and path segments are noisy, so they only break near-ties.
// Short list-like fields get little length normalisation (b): a project with
// five keywords is not less about each of them than one with two.
var (
	fieldWeight = [numFields]float64{fName: 5, fAlias: 4, fPackage: 4, fKeyword: 2, fTag: 2, fDescription: 1.5, fReadme: 0.5, fPath: 0.5}
	fieldB      = [numFields]float64{fName: 0.3, fAlias: 0.3, fPackage: 0.3, fKeyword: 0.5, fTag: 0.5, fDescription: 0.75, fReadme: 0.75, fPath: 0.3}
)

const k1 = 1.2

// posting is one document's occurrence of a term: its slot and the term
// frequency in each field, four bits per field (saturating at 15 — BM25's
// saturation makes higher counts nearly irrelevant). 8 bytes, so 10k
// documents fit in a few megabytes.
type posting struct {
	slot uint32
	tfs  uint32
}

type termEntry struct {
	text string
	post []posting // sorted by slot, so a Put or Delete finds its entry by binary search
	ndf  uint32    // postings with the term in a name, alias or package name
	fpos int32     // 1 + its index in its fuzzy bucket; 0: not in the fuzzy dictionary
	// For a term of the base (see Index.bt): its postings and name-field
	// postings under tombstones.
	tombDF, tombNDF uint32
}

type docEntry struct {
	id, sortKey string
	live        bool
	// Name, aliases and package names as the document spells them,
	// trimmed, aliases and packages without repeats (case aside): what
	// exact matches compare (case-insensitively) and what a reason quotes.
	name              string
	aliases, packages []string
	terms             termList // to remove postings without re-tokenising
}

// maxWhole bounds the whole-value terms kept per document (name, package,
// its partial form: rarely more than two distinct).
const maxWhole = 3

// wholeTerms are the terms that are a whole name, alias, package name or
// its partial form (one-segment values only: react-router → reactrouter),
// as 1 + term id (0: none): how the fuzzy tier knows that a whole value
// is close to a whole query.
type wholeTerms [maxWhole]uint32

type exactKind uint8

const (
	exPkg     exactKind = iota // normalised full package name
	exPkgPart                  // normalised partial form (unscoped, last path segment, artifact id)
	exAlias
	exName
	numExact
)

// Index is safe for concurrent use: Search, List and Len share a read lock;
// Put and Delete take the write lock and change only what the document
// touches.
//
// An Index may stand over a frozen base (NewOver): its documents are the
// global slots [0, nb) and its terms the ids [0, nt); everything below
// about slots and term ids is about the global ones. Documents put since
// live in the overlay: slot nb+i is docs[i], term nt+i is terms[i].
type Index struct {
	mu sync.RWMutex

	base   *Frozen  // nil: none
	nb, nt uint32   // base slots and terms
	tomb   []uint64 // base slots replaced or deleted since (bitmap)
	// bt is the overlay's part of base terms: postings of overlay
	// documents, and what tombstones took away.
	bt map[uint32]*termEntry
	// deadFz marks base terms of the base's fuzzy dictionary whose
	// name-field postings are all under tombstones (bitmap over terms).
	deadFz []uint64

	byID   map[string]uint32   // overlay documents: id → slot
	docs   []docEntry          // overlay documents
	idOf   []string            // per overlay slot: the id (dense: read for every hit and keep call)
	flen   [][numFields]uint16 // per overlay slot: tokens per field (dense: read on every posting)
	whole  []wholeTerms        // per overlay slot (dense: read for fuzzy candidates)
	free   []uint32            // dead overlay slots to reuse
	live   int                 // live documents, base and overlay
	sumLen [numFields]uint64   // tokens per field over live documents

	dict      map[string]uint32 // terms only the overlay has: text → id
	terms     []termEntry       // id nt+i
	freeTerms []uint32

	exact [numExact]map[string][]uint32 // overlay documents
	fuzzy [maxTermLen + 1]fuzzyBucket   // name-field terms by length in runes, except the base's own
	// noFuzzy turns the fuzzy tier off: benchmarks measure what it adds.
	noFuzzy bool

	// The listing order is kept lazily: writers record which slots changed,
	// the next reader merges just those in (under orderMu, since readers only
	// hold the read lock). Over a base with nothing changed, the base's own.
	orderMu      sync.Mutex
	orderPending []uint32
	ownOrder     bool     // order and rank below are in use (else the base's)
	order        []uint32 // live slots by (sortKey, id)
	rank         []uint32 // slot → position in order
	spare        []uint32 // the previous order's memory, reused by the next repair
}

// New returns an empty index.
func New() *Index {
	ix := &Index{byID: map[string]uint32{}, dict: map[string]uint32{}, bt: map[uint32]*termEntry{}}
	for k := range ix.exact {
		ix.exact[k] = map[string][]uint32{}
	}
	return ix
}

// NewOver returns an index that answers from base and takes changes in
// memory beside it; base is never written.
func NewOver(base *Frozen) *Index {
	ix := New()
	ix.base, ix.nb, ix.nt = base, base.n, base.nt
	ix.live, ix.sumLen = int(base.n), base.sumLen
	return ix
}

// Len is the number of documents in the index.
func (ix *Index) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.live
}

// builder tokenises one document outside the index lock.
type builder struct {
	tok   tokenizer
	emit  emitFunc
	f     field
	pos   map[string]int32
	terms []string
	tfs   []uint32
	flen  [numFields]uint16
	pairs []idTF
	enc   []byte
}

type idTF struct{ id, tfs uint32 }

// termList is a document's sorted term ids as varint deltas: about a third
// of the size of a []uint32, and only ever read in order.
type termList []byte

type termIter struct {
	b    []byte
	prev uint32
}

func (it *termIter) next() (uint32, bool) {
	if len(it.b) == 0 {
		return 0, false
	}
	d, n := binary.Uvarint(it.b)
	it.b = it.b[n:]
	it.prev += uint32(d)
	return it.prev, true
}

var builderPool = sync.Pool{New: func() any {
	b := &builder{pos: map[string]int32{}}
	b.emit = b.onTerm
	return b
}}

func (b *builder) onTerm(kind tokKind, term []byte, _, _, _ int) {
	if kind != kindJoined && b.flen[b.f] < 0xFFFF {
		b.flen[b.f]++
	}
	i, ok := b.pos[string(term)]
	if !ok {
		i = int32(len(b.terms))
		t := string(term)
		b.pos[t] = i
		b.terms = append(b.terms, t)
		b.tfs = append(b.tfs, 0)
	}
	sh := uint(b.f) * 4
	if (b.tfs[i]>>sh)&15 < 15 {
		b.tfs[i] += 1 << sh
	}
}

func (b *builder) add(f field, s string) {
	b.f = f
	b.tok.tokenize(s, b.emit)
}

func (b *builder) build(d *Doc) {
	clear(b.pos)
	b.terms, b.tfs, b.flen = b.terms[:0], b.tfs[:0], [numFields]uint16{}
	b.add(fName, d.Name)
	for _, s := range d.Aliases {
		b.add(fAlias, s)
	}
	for _, s := range d.Packages {
		b.add(fPackage, s)
	}
	for _, s := range d.Keywords {
		b.add(fKeyword, s)
	}
	for _, s := range d.Tags {
		b.add(fTag, s)
	}
	b.add(fDescription, d.Description)
	b.add(fReadme, d.Readme)
	b.add(fPath, d.Path)
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

// Put adds d, or replaces the document with the same ID. Only the postings
// whose terms changed are touched; a document of the base is replaced by a
// tombstone over its slot and a new overlay document.
func (ix *Index) Put(d Doc) {
	if d.ID == "" {
		return
	}
	defer ix.unguard(ix.guard())
	b := builderPool.Get().(*builder)
	defer builderPool.Put(b)
	b.build(&d)
	entry := docEntry{
		id: d.ID, sortKey: d.SortKey, live: true,
		name: strings.TrimSpace(d.Name), aliases: distinct(d.Aliases), packages: distinct(d.Packages),
	}
	wholes := entry.wholeForms()

	ix.mu.Lock()
	defer ix.mu.Unlock()
	slot, exists := ix.byID[d.ID]
	var old termList
	if exists {
		e := ix.over1(slot)
		old = e.terms
		ix.indexExact(slot, false)
		ix.addLens(slot, -1)
		if e.sortKey != d.SortKey {
			ix.orderPending = append(ix.orderPending, slot)
		}
	} else {
		if bs, ok := ix.baseSlot(d.ID); ok {
			ix.tombstone(bs)
		}
		slot = ix.allocSlot()
		ix.byID[d.ID] = slot
		ix.live++
		ix.orderPending = append(ix.orderPending, slot)
	}

	pairs := b.pairs[:0]
	for i, t := range b.terms {
		pairs = append(pairs, idTF{ix.termID(t), b.tfs[i]})
	}
	// Whole-value terms are the document's own terms (one-segment values:
	// react-router gives reactrouter, React Router gives none), so they
	// never depend on other documents.
	var whole wholeTerms
	n := 0
	for _, w := range wholes {
		if i, ok := b.pos[w]; ok && n < maxWhole && !slices.Contains(whole[:n], pairs[i].id+1) {
			whole[n] = pairs[i].id + 1
			n++
		}
	}
	slices.SortFunc(pairs, func(a, b idTF) int { return int(a.id) - int(b.id) })
	b.pairs = pairs

	// Merge the old and new sorted term lists: drop, update or add postings.
	it := termIter{b: old}
	ov, ook := it.next()
	for j := 0; ook || j < len(pairs); {
		switch {
		case j == len(pairs) || (ook && ov < pairs[j].id):
			ix.removePosting(ov, slot)
			ov, ook = it.next()
		case !ook || pairs[j].id < ov:
			ix.setPosting(pairs[j].id, slot, pairs[j].tfs)
			j++
		default:
			ix.setPosting(pairs[j].id, slot, pairs[j].tfs)
			j++
			ov, ook = it.next()
		}
	}
	b.enc = b.enc[:0]
	prev := uint32(0)
	for _, p := range pairs {
		b.enc = binary.AppendUvarint(b.enc, uint64(p.id-prev))
		prev = p.id
	}
	entry.terms = termList(bytes.Clone(b.enc))
	o := slot - ix.nb
	ix.whole[o] = whole
	ix.docs[o] = entry
	ix.idOf[o] = d.ID
	ix.flen[o] = b.flen
	ix.addLens(slot, 1)
	ix.indexExact(slot, true)
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

// Delete removes the document with this id, if present.
func (ix *Index) Delete(id string) {
	defer ix.unguard(ix.guard())
	ix.mu.Lock()
	defer ix.mu.Unlock()
	slot, ok := ix.byID[id]
	if !ok {
		if bs, ok := ix.baseSlot(id); ok {
			ix.tombstone(bs)
		}
		return
	}
	o := slot - ix.nb
	for it := (termIter{b: ix.docs[o].terms}); ; {
		t, ok := it.next()
		if !ok {
			break
		}
		ix.removePosting(t, slot)
	}
	ix.indexExact(slot, false)
	ix.addLens(slot, -1)
	ix.docs[o] = docEntry{}
	ix.idOf[o] = ""
	ix.flen[o] = [numFields]uint16{}
	ix.whole[o] = wholeTerms{}
	delete(ix.byID, id)
	ix.free = append(ix.free, slot)
	ix.live--
	ix.orderPending = append(ix.orderPending, slot)
}

// baseSlot is the slot of a live base document with id.
func (ix *Index) baseSlot(id string) (uint32, bool) {
	if ix.base == nil {
		return 0, false
	}
	s, ok := ix.base.Slot(id)
	return s, ok && !ix.isTomb(s)
}

// tombstone hides base slot s: its terms lose a posting each (counted, the
// base is never written), its lengths leave the totals.
func (ix *Index) tombstone(s uint32) {
	if ix.tomb == nil {
		ix.tomb = make([]uint64, (ix.nb+63)/64)
	}
	ix.tomb[s>>6] |= 1 << (s & 63)
	d := &ix.base.docs[s]
	for it := (termIter{b: ix.base.tlist[d.terms.off : d.terms.off+d.terms.n]}); ; {
		t, ok := it.next()
		if !ok {
			break
		}
		te := ix.overMake(t)
		te.tombDF++
		if p, ok := ix.base.posting(t, s); ok && p.tfs&nameTFs != 0 {
			te.tombNDF++
			ix.syncDead(t, te)
		}
	}
	ix.addLens(s, -1)
	ix.live--
	ix.orderPending = append(ix.orderPending, s)
}

func (ix *Index) isTomb(s uint32) bool {
	return s < ix.nb && ix.tomb != nil && ix.tomb[s>>6]&(1<<(s&63)) != 0
}

// liveSlot reports whether slot holds a live document.
func (ix *Index) liveSlot(s uint32) bool {
	if s < ix.nb {
		return !ix.isTomb(s)
	}
	return ix.docs[s-ix.nb].live
}

// over1 is an overlay slot's entry.
func (ix *Index) over1(s uint32) *docEntry { return &ix.docs[s-ix.nb] }

// entry is slot's document (a base document's strings point into the base).
func (ix *Index) entry(s uint32) *docEntry {
	if s < ix.nb {
		return ix.base.entry(s)
	}
	return &ix.docs[s-ix.nb]
}

// id is slot's id (a base document's points into the base: copy it before
// it leaves the package).
func (ix *Index) id(s uint32) string {
	if s < ix.nb {
		return ix.base.s(ix.base.docs[s].id)
	}
	return ix.idOf[s-ix.nb]
}

// hitIDs are the ids of the hits (keys by listing rank), to hand out: a
// base's are copied into one string (one allocation, not one per hit).
func (ix *Index) hitIDs(keys []uint64, order []uint32) []string {
	ids := make([]string, len(keys))
	n := 0
	for _, k := range keys {
		if s := order[uint32(k)]; s < ix.nb {
			n += len(ix.id(s))
		}
	}
	buf := make([]byte, 0, n)
	for _, k := range keys {
		if s := order[uint32(k)]; s < ix.nb {
			buf = append(buf, ix.id(s)...)
		}
	}
	all := unsafe.String(unsafe.SliceData(buf), len(buf)) // buf is never written again
	for i, k := range keys {
		s := order[uint32(k)]
		if s >= ix.nb {
			ids[i] = ix.idOf[s-ix.nb]
			continue
		}
		l := len(ix.id(s))
		ids[i], all = all[:l], all[l:]
	}
	return ids
}

// hitID is slot's id to hand out.
func (ix *Index) hitID(s uint32) string {
	if s < ix.nb {
		return strings.Clone(ix.id(s))
	}
	return ix.idOf[s-ix.nb]
}

func (ix *Index) sortKeyOf(s uint32) string {
	if s < ix.nb {
		return ix.base.s(ix.base.docs[s].sortKey)
	}
	return ix.docs[s-ix.nb].sortKey
}

func (ix *Index) flenOf(s uint32) *[numFields]uint16 {
	if s < ix.nb {
		return &ix.base.flen[s]
	}
	return &ix.flen[s-ix.nb]
}

func (ix *Index) wholeOf(s uint32) *wholeTerms {
	if s < ix.nb {
		return &ix.base.whole[s]
	}
	return &ix.whole[s-ix.nb]
}

// over is the overlay's entry of term id (nil for a base term the overlay
// never touched).
func (ix *Index) over(id uint32) *termEntry {
	if id >= ix.nt {
		return &ix.terms[id-ix.nt]
	}
	return ix.bt[id]
}

func (ix *Index) overMake(id uint32) *termEntry {
	if id >= ix.nt {
		return &ix.terms[id-ix.nt]
	}
	te := ix.bt[id]
	if te == nil {
		te = &termEntry{}
		ix.bt[id] = te
	}
	return te
}

func (ix *Index) termText(id uint32) string {
	if id < ix.nt {
		return ix.base.s(ix.base.ttext[id])
	}
	return ix.terms[id-ix.nt].text
}

// lookup finds a term's id.
func (ix *Index) lookup(t string) (uint32, bool) {
	if ix.base != nil {
		if id, ok := ix.base.term(t); ok {
			return id, true
		}
	}
	id, ok := ix.dict[t]
	return id, ok
}

// postLists are term id's postings: the base's (some under tombstones)
// and the overlay's.
func (ix *Index) postLists(id uint32) (base, over []posting) {
	if id < ix.nt {
		base = ix.base.postings(id)
	}
	if te := ix.over(id); te != nil {
		over = te.post
	}
	return base, over
}

// df is the number of live documents with term id.
func (ix *Index) df(id uint32) int {
	if id >= ix.nt {
		return len(ix.terms[id-ix.nt].post)
	}
	n := int(ix.base.tpost[id+1] - ix.base.tpost[id])
	if te := ix.bt[id]; te != nil {
		n += len(te.post) - int(te.tombDF)
	}
	return n
}

// ndf is the number of live documents with term id in a name field.
func (ix *Index) ndf(id uint32) uint32 {
	if id >= ix.nt {
		return ix.terms[id-ix.nt].ndf
	}
	n := ix.base.tndf[id]
	if te := ix.bt[id]; te != nil {
		n += te.ndf - te.tombNDF
	}
	return n
}

// syncDead keeps a term of the base's fuzzy dictionary out of it while no
// live document has it in a name field.
func (ix *Index) syncDead(id uint32, te *termEntry) {
	if ix.base.tndf[id] == 0 {
		return // not in the base's dictionary: the overlay's keeps it
	}
	dead := ix.base.tndf[id]+te.ndf-te.tombNDF == 0
	if dead && ix.deadFz == nil {
		ix.deadFz = make([]uint64, (ix.nt+63)/64)
	}
	if ix.deadFz == nil {
		return
	}
	if dead {
		ix.deadFz[id>>6] |= 1 << (id & 63)
	} else {
		ix.deadFz[id>>6] &^= 1 << (id & 63)
	}
}

func (ix *Index) allocSlot() uint32 {
	if n := len(ix.free); n > 0 {
		s := ix.free[n-1]
		ix.free = ix.free[:n-1]
		return s
	}
	ix.docs = append(ix.docs, docEntry{})
	ix.idOf = append(ix.idOf, "")
	ix.flen = append(ix.flen, [numFields]uint16{})
	ix.whole = append(ix.whole, wholeTerms{})
	return ix.nb + uint32(len(ix.docs)-1)
}

func (ix *Index) addLens(slot uint32, sign int) {
	for f, n := range ix.flenOf(slot) {
		if sign > 0 {
			ix.sumLen[f] += uint64(n)
		} else {
			ix.sumLen[f] -= uint64(n)
		}
	}
}

func (ix *Index) termID(t string) uint32 {
	if id, ok := ix.lookup(t); ok {
		return id
	}
	var id uint32
	if n := len(ix.freeTerms); n > 0 {
		id = ix.freeTerms[n-1]
		ix.freeTerms = ix.freeTerms[:n-1]
		ix.terms[id-ix.nt] = termEntry{text: t}
	} else {
		id = ix.nt + uint32(len(ix.terms))
		ix.terms = append(ix.terms, termEntry{text: t})
	}
	ix.dict[t] = id
	return id
}

func searchSlot(post []posting, slot uint32) (int, bool) {
	return slices.BinarySearchFunc(post, slot, func(p posting, s uint32) int {
		switch {
		case p.slot < s:
			return -1
		case p.slot > s:
			return 1
		}
		return 0
	})
}

// setPosting inserts or updates slot's posting for term id (slot is an
// overlay slot).
func (ix *Index) setPosting(id, slot, tfs uint32) {
	te := ix.overMake(id)
	if n := len(te.post); n == 0 || te.post[n-1].slot < slot { // bulk loads append
		te.post = append(te.post, posting{slot, tfs})
		ix.countName(id, te, 0, tfs)
		return
	}
	i, found := searchSlot(te.post, slot)
	if found {
		old := te.post[i].tfs
		te.post[i].tfs = tfs
		ix.countName(id, te, old, tfs)
		return
	}
	te.post = slices.Insert(te.post, i, posting{slot, tfs})
	ix.countName(id, te, 0, tfs)
}

func (ix *Index) removePosting(id, slot uint32) {
	te := ix.over(id)
	if te == nil {
		return
	}
	i, found := searchSlot(te.post, slot)
	if !found {
		return
	}
	ix.countName(id, te, te.post[i].tfs, 0)
	te.post = slices.Delete(te.post, i, i+1)
	if len(te.post) == 0 && id >= ix.nt {
		// Recycle the term so that churn does not grow the dictionary.
		delete(ix.dict, te.text)
		*te = termEntry{}
		ix.freeTerms = append(ix.freeTerms, id)
	} else if cap(te.post) > 64 && len(te.post) < cap(te.post)/4 {
		te.post = slices.Clip(slices.Clone(te.post))
	}
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

// indexExact adds (or removes) overlay slot under the normalised keys of
// its name, aliases and packages.
func (ix *Index) indexExact(slot uint32, add bool) {
	ix.over1(slot).eachExact(func(k exactKind, key string) {
		m := ix.exact[k]
		list := m[key]
		i := slices.Index(list, slot)
		switch {
		case add && i < 0:
			m[key] = append(list, slot)
		case !add && i >= 0:
			if list = slices.Delete(list, i, i+1); len(list) == 0 {
				delete(m, key)
			} else {
				m[key] = list
			}
		}
	})
}

// ensureOrder returns the live slots in (sortKey, id) order and each slot's
// rank in it, bringing in the slots changed since the last call. Callers
// hold the read lock.
//
// The order is repaired, not rebuilt: changed slots are dropped from it
// (found through their old rank), then re-inserted — by binary search when
// they are few, which costs a handful of string comparisons instead of one
// per document, or by one merge pass after a bulk load. The slices are
// reused in place: a reader only holds them within one read-lock period,
// and a repair only happens after a writer, so no reader can still be
// looking at them.
func (ix *Index) ensureOrder() (order, rank []uint32) {
	ix.orderMu.Lock()
	defer ix.orderMu.Unlock()
	if !ix.ownOrder {
		if len(ix.orderPending) == 0 && ix.base != nil {
			return ix.base.order, ix.base.rank
		}
		if ix.base != nil {
			// The first change over a base: from here on the order is
			// this index's own, starting from the base's.
			ix.order = slices.Clone(ix.base.order)
			ix.rank = slices.Clone(ix.base.rank)
		}
		ix.ownOrder = true
	}
	total := int(ix.nb) + len(ix.docs)
	if len(ix.orderPending) == 0 && len(ix.rank) == total {
		return ix.order, ix.rank
	}
	less := func(a, b uint32) int {
		if c := strings.Compare(ix.sortKeyOf(a), ix.sortKeyOf(b)); c != 0 {
			return c
		}
		return strings.Compare(ix.id(a), ix.id(b))
	}
	pending := ix.orderPending
	slices.Sort(pending)
	pending = slices.Compact(pending)

	// Drop every changed slot still in the order. A slot's old rank finds it;
	// the check order[r] == s rejects ranks that are stale or out of range.
	var drop []uint32
	var add []uint32
	for _, s := range pending {
		if int(s) < len(ix.rank) {
			if r := ix.rank[s]; int(r) < len(ix.order) && ix.order[r] == s {
				drop = append(drop, r)
			}
		}
		if ix.liveSlot(s) {
			add = append(add, s)
		}
	}
	slices.Sort(drop)
	kept := ix.order[:0]
	for r, s := range ix.order {
		if len(drop) > 0 && drop[0] == uint32(r) {
			drop = drop[1:]
			continue
		}
		kept = append(kept, s)
	}

	slices.SortFunc(add, less)
	merged := slices.Grow(ix.spare[:0], len(kept)+len(add))
	if len(add)*32 < len(kept) {
		// Few changes: place each by binary search, copy the runs between.
		from := 0
		for _, s := range add {
			at, _ := slices.BinarySearchFunc(kept[from:], s, func(k, t uint32) int { return less(k, t) })
			merged = append(merged, kept[from:from+at]...)
			merged = append(merged, s)
			from += at
		}
		merged = append(merged, kept[from:]...)
	} else {
		i := 0
		for _, s := range kept {
			for i < len(add) && less(add[i], s) < 0 {
				merged = append(merged, add[i])
				i++
			}
			merged = append(merged, s)
		}
		merged = append(merged, add[i:]...)
	}

	rank = ix.rank
	if len(rank) < total {
		rank = make([]uint32, total, int(ix.nb)+cap(ix.docs))
	}
	rank = rank[:total]
	for r, s := range merged {
		rank[s] = uint32(r)
	}
	ix.spare = ix.order[:0]
	ix.order, ix.rank, ix.orderPending = merged, rank, ix.orderPending[:0]
	return ix.order, ix.rank
}

// List returns the ids of all documents keep accepts (nil keeps all), in
// stable order: SortKey, then ID. Like Search, keep must not call back
// into the Index.
func (ix *Index) List(keep func(id string) bool) []string {
	return ix.ListFilter(Filter{ID: keep})
}

// ListFilter is List with a Filter.
func (ix *Index) ListFilter(f Filter) (out []string) {
	defer ix.unguard(ix.guard())
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	order, _ := ix.ensureOrder()
	out = make([]string, 0, len(order))
	for _, s := range order {
		if f.keeps(ix, s) {
			out = append(out, ix.hitID(s))
		}
	}
	return out
}

// Filter decides which documents a Search, List or Suggest may see (the
// sharing policy: a document it rejects never appears, never shapes a
// reason and is never suggested). It runs under the index's read lock, so
// it must not call back into the Index, and must not keep the id it is
// given past the call.
type Filter struct {
	// ID decides a document by its id (nil: every document).
	ID func(id string) bool
	// Base, when set, decides the documents of the frozen base by their
	// slot (Frozen.Slot) instead: a caller that keeps its decisions per
	// slot saves a string lookup per candidate.
	Base func(slot uint32) bool
}

func (f *Filter) keeps(ix *Index, s uint32) bool {
	if s < ix.nb {
		if f.Base != nil {
			return f.Base(s)
		}
		if f.ID == nil {
			return true
		}
		return f.ID(strings.Clone(ix.id(s)))
	}
	return f.ID == nil || f.ID(ix.idOf[s-ix.nb])
}

// foldEq reports whether lowerFold(s) == lower, without allocating: exact
// matches compare a document's values with the query this way.
func foldEq(s, lower string) bool {
	s = strings.TrimSpace(s)
	var buf [utf8.UTFMax]byte
	j := 0
	for _, r := range s {
		if r < utf8.RuneSelf {
			c := byte(r)
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if j >= len(lower) || lower[j] != c {
				return false
			}
			j++
			continue
		}
		n := utf8.EncodeRune(buf[:], unicode.ToLower(foldWidth(r)))
		if len(lower)-j < n || lower[j:j+n] != string(buf[:n]) {
			return false
		}
		j += n
	}
	return j == len(lower)
}
