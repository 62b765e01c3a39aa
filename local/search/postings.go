package search

// The overlay's term dictionary and postings: adding, updating and
// removing one document's postings, and the counts (name-field document
// frequency, the fuzzy dictionary) that follow them. Callers hold the
// write lock.

import "slices"

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

// countName keeps a term's count of name-field postings as one posting's
// tfs goes from old to new, and its place in the fuzzy dictionary with it.
// Callers hold the write lock.
func (ix *Index) countName(id uint32, te *termEntry, old, new uint32) {
	was, is := old&nameTFs != 0, new&nameTFs != 0
	if was == is {
		return
	}
	if is {
		te.ndf++
	} else {
		te.ndf--
	}
	if id < ix.nt && ix.base.tndf[id] > 0 {
		ix.syncDead(id, te) // in the base's dictionary
		return
	}
	switch {
	case is && te.ndf == 1:
		ix.fuzzyAdd(id, te)
	case !is && te.ndf == 0:
		ix.fuzzyRemove(id, te)
	}
}

func (ix *Index) fuzzyAdd(id uint32, te *termEntry) {
	text := ix.termText(id)
	n, ok := fuzzyTerm(text)
	if !ok {
		return
	}
	b := &ix.fuzzy[n]
	b.ids = append(b.ids, id)
	b.sigs = append(b.sigs, letterSig(text))
	te.fpos = int32(len(b.ids))
}

func (ix *Index) fuzzyRemove(id uint32, te *termEntry) {
	if te.fpos == 0 {
		return
	}
	n, _ := fuzzyTerm(ix.termText(id))
	b := &ix.fuzzy[n]
	i, last := int(te.fpos-1), len(b.ids)-1
	if i != last {
		b.ids[i], b.sigs[i] = b.ids[last], b.sigs[last]
		ix.over(b.ids[i]).fpos = int32(i + 1)
	}
	b.ids, b.sigs = b.ids[:last], b.sigs[:last]
	te.fpos = 0
}
