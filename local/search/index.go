package search

// The live index: documents put and deleted in memory, beside a frozen base
// or alone. Put installs what analyze derives; slots.go says where a slot
// or term lives, postings.go keeps the postings and their counts.

import (
	"bytes"
	"encoding/binary"
	"slices"
	"sync"
)

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

// wholeTerms are the terms that are a whole name, alias, package name or
// its partial form (one-segment values only: react-router → reactrouter),
// as 1 + term id (0: none): how the fuzzy tier knows that a whole value
// is close to a whole query.
type wholeTerms [maxWhole]uint32

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

// Put adds d, or replaces the document with the same ID. Only the postings
// whose terms changed are touched; a document of the base is replaced by a
// tombstone over its slot and a new overlay document.
func (ix *Index) Put(d Doc) {
	if d.ID == "" {
		return
	}
	defer ix.unguard(ix.guard())
	a := analyze(&d)
	defer a.release()

	ix.mu.Lock()
	defer ix.mu.Unlock()
	slot, old := ix.slotFor(d.ID, d.SortKey)
	pairs := a.pairs[:0]
	for i, t := range a.terms {
		pairs = append(pairs, idTF{ix.termID(t), a.tfs[i]})
	}
	var whole wholeTerms
	for n, i := range a.whole {
		whole[n] = pairs[i].id + 1
	}
	slices.SortFunc(pairs, func(a, b idTF) int { return int(a.id) - int(b.id) })
	a.pairs = pairs
	ix.mergePostings(slot, old, pairs)

	a.enc = a.enc[:0]
	prev := uint32(0)
	for _, p := range pairs {
		a.enc = binary.AppendUvarint(a.enc, uint64(p.id-prev))
		prev = p.id
	}
	entry := a.entry
	entry.terms = termList(bytes.Clone(a.enc))
	o := slot - ix.nb
	ix.whole[o] = whole
	ix.docs[o] = entry
	ix.idOf[o] = d.ID
	ix.flen[o] = a.flen
	ix.addLens(slot, 1)
	ix.indexExact(slot, true)
}

// slotFor is the overlay slot a document with id goes to, emptied of its
// lengths and exact keys, and the term list it held (nil for a new slot).
// A live base document with the id is tombstoned. The write lock is held.
func (ix *Index) slotFor(id, sortKey string) (slot uint32, old termList) {
	slot, exists := ix.byID[id]
	if exists {
		e := ix.over1(slot)
		ix.indexExact(slot, false)
		ix.addLens(slot, -1)
		if e.sortKey != sortKey {
			ix.orderPending = append(ix.orderPending, slot)
		}
		return slot, e.terms
	}
	if bs, ok := ix.baseSlot(id); ok {
		ix.tombstone(bs)
	}
	slot = ix.allocSlot()
	ix.byID[id] = slot
	ix.live++
	ix.orderPending = append(ix.orderPending, slot)
	return slot, nil
}

// mergePostings walks slot's old and new sorted term lists together:
// drops, updates or adds postings.
func (ix *Index) mergePostings(slot uint32, old termList, pairs []idTF) {
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

// tombstone hides base slot s: its terms lose a posting each (counted, the
// base is never written), its lengths leave the totals.
func (ix *Index) tombstone(s uint32) {
	if ix.tomb == nil {
		ix.tomb = make([]uint64, (ix.nb+63)/64)
	}
	ix.tomb[s>>6] |= 1 << (s & 63)
	for it := (termIter{b: ix.base.termList(s)}); ; {
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
