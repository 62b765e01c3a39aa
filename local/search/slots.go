package search

// Where a slot or a term lives: an Index over a frozen base reads its
// first nb slots and nt terms from the base (minus tombstones), the rest
// from the overlay. What tells the two apart is here, so the rest of the
// index reads one numbering (scoring reads the base's arrays directly:
// it is the hot loop).

import (
	"strings"
	"unsafe"
)

// baseSlot is the slot of a live base document with id.
func (ix *Index) baseSlot(id string) (uint32, bool) {
	if ix.base == nil {
		return 0, false
	}
	s, ok := ix.base.Slot(id)
	return s, ok && !ix.isTomb(s)
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
