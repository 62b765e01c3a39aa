package search

// Writing an Index in the frozen form (see Frozen), step by step: the
// documents in id order and the terms in text order are fixed first, then
// each section is written from them. Part of Derivation: what the frozen
// form keeps of the live index is decided here.

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"strings"
)

// WriteFrozen writes the index's documents in the frozen form (see Frozen)
// and returns the number of bytes written. The index may itself be over a
// base: what is written is what it answers from.
func (ix *Index) WriteFrozen(w io.Writer) (n int64, err error) {
	defer func() {
		if ix.base != nil && ix.base.Faulted() && err == nil {
			err = fmt.Errorf("%w: its base changed while it was read", ErrFrozen)
		}
	}()
	defer ix.unguard(ix.guard())
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	fw := &frozenWriter{w: bufio.NewWriterSize(w, 1<<20)}
	fw.raw([]byte(frozenMagic))

	// Documents in id order: the base's are already (by construction), the
	// overlay's are sorted and merged in.
	total := ix.nb + uint32(len(ix.docs))
	var baseSlots, overSlots []uint32
	for s := range total {
		if ix.liveSlot(s) {
			if s < ix.nb {
				baseSlots = append(baseSlots, s)
			} else {
				overSlots = append(overSlots, s)
			}
		}
	}
	byID := func(a, b uint32) int { return strings.Compare(ix.id(a), ix.id(b)) }
	slices.SortFunc(overSlots, byID)
	slots := mergeSorted(baseSlots, overSlots, byID)
	newSlot := make([]uint32, total)
	for i, s := range slots {
		newSlot[s] = uint32(i)
	}
	// Terms in text order, those some live document has: the base's are in
	// text order already.
	var baseTerms, overTerms []uint32
	for id := range ix.nt {
		if ix.df(id) > 0 {
			baseTerms = append(baseTerms, id)
		}
	}
	for i := range ix.terms {
		if len(ix.terms[i].post) > 0 {
			overTerms = append(overTerms, ix.nt+uint32(i))
		}
	}
	byText := func(a, b uint32) int { return strings.Compare(ix.termText(a), ix.termText(b)) }
	slices.SortFunc(overTerms, byText)
	terms := mergeSorted(baseTerms, overTerms, byText)
	newTerm := make([]uint32, ix.nt+uint32(len(ix.terms)))
	for i, id := range terms {
		newTerm[id] = uint32(i)
	}

	var secs [numSec][2]uint64
	begin := func(i int) { fw.pad(); secs[i][0] = uint64(fw.n) }
	end := func(i int) { secs[i][1] = uint64(fw.n) - secs[i][0] }

	// Strings, remembering where each one went.
	begin(secStr)
	str := func(s string) strRef {
		r := strRef{uint32(uint64(fw.n) - secs[secStr][0]), uint32(len(s))}
		fw.str(s)
		return r
	}
	entries := make([]*docEntry, len(slots))
	docs := make([]docRec, len(slots))
	var vals []strRef
	for i, s := range slots {
		e := ix.entry(s)
		entries[i] = e
		d := &docs[i]
		d.id, d.sortKey, d.name = str(e.id), str(e.sortKey), str(e.name)
		d.vals, d.nAlias, d.nPkg = uint32(len(vals)), uint32(len(e.aliases)), uint32(len(e.packages))
		for _, v := range e.aliases {
			vals = append(vals, str(v))
		}
		for _, v := range e.packages {
			vals = append(vals, str(v))
		}
	}
	ttext := make([]strRef, len(terms))
	for i, id := range terms {
		ttext[i] = str(ix.termText(id))
	}
	type exEntry struct {
		key   string
		slots []uint32
	}
	// The exact tables: the base's keys (in order, live slots renumbered)
	// merged with the overlay's.
	var exact [numExact][]exEntry
	for k := range numExact {
		var bx, ox []exEntry
		if f := ix.base; f != nil {
			for i, r := range f.exKeys[k] {
				var l []uint32
				for _, s := range f.exSlots[k][f.exOff[k][i]:f.exOff[k][i+1]] {
					if !ix.isTomb(s) {
						l = append(l, newSlot[s])
					}
				}
				if len(l) > 0 {
					bx = append(bx, exEntry{f.s(r), l})
				}
			}
		}
		for key, l := range ix.exact[k] {
			nl := make([]uint32, len(l))
			for i, s := range l {
				nl[i] = newSlot[s]
			}
			slices.Sort(nl)
			ox = append(ox, exEntry{key, nl})
		}
		slices.SortFunc(ox, func(a, b exEntry) int { return strings.Compare(a.key, b.key) })
		i, j := 0, 0
		for i < len(bx) || j < len(ox) {
			switch {
			case j == len(ox) || i < len(bx) && bx[i].key < ox[j].key:
				exact[k] = append(exact[k], bx[i])
				i++
			case i == len(bx) || ox[j].key < bx[i].key:
				exact[k] = append(exact[k], ox[j])
				j++
			default:
				l := append(bx[i].slots, ox[j].slots...)
				slices.Sort(l)
				exact[k] = append(exact[k], exEntry{bx[i].key, l})
				i, j = i+1, j+1
			}
		}
	}
	exKeys := [numExact][]strRef{}
	for k := range numExact {
		for _, x := range exact[k] {
			exKeys[k] = append(exKeys[k], str(x.key))
		}
	}
	end(secStr)

	// Term lists, remapped and sorted again (overlay terms interleave).
	begin(secTList)
	var ids []uint32
	var enc []byte
	for i, e := range entries {
		ids = ids[:0]
		for it := (termIter{b: e.terms}); ; {
			t, ok := it.next()
			if !ok {
				break
			}
			ids = append(ids, newTerm[t])
		}
		slices.Sort(ids)
		enc = enc[:0]
		prev := uint32(0)
		for _, t := range ids {
			enc = binary.AppendUvarint(enc, uint64(t-prev))
			prev = t
		}
		docs[i].terms = strRef{uint32(uint64(fw.n) - secs[secTList][0]), uint32(len(enc))}
		fw.raw(enc)
	}
	end(secTList)

	begin(secDocs)
	for _, d := range docs {
		for _, v := range [...]uint32{d.id.off, d.id.n, d.sortKey.off, d.sortKey.n, d.name.off, d.name.n, d.vals, d.nAlias, d.nPkg, d.terms.off, d.terms.n} {
			fw.u32(v)
		}
	}
	end(secDocs)
	begin(secVals)
	for _, r := range vals {
		fw.u32(r.off)
		fw.u32(r.n)
	}
	end(secVals)

	var sumLen [numFields]uint64
	begin(secFlen)
	for _, s := range slots {
		fl := ix.flenOf(s)
		for f, v := range fl {
			fw.u16(v)
			sumLen[f] += uint64(v)
		}
	}
	end(secFlen)
	begin(secWhole)
	for _, s := range slots {
		for _, w := range ix.wholeOf(s) {
			if w != 0 {
				w = newTerm[w-1] + 1
			}
			fw.u32(w)
		}
	}
	end(secWhole)

	begin(secTText)
	for _, r := range ttext {
		fw.u32(r.off)
		fw.u32(r.n)
	}
	end(secTText)

	// Postings, term by term, in new slot order; with their counts. The
	// base's stay in order (its slots and the new ones are both by id); the
	// overlay's are sorted and merged in.
	begin(secPost)
	tpost := make([]uint64, 0, len(terms)+1)
	tndf := make([]uint32, 0, len(terms))
	var np uint64
	var out []byte
	var opost []posting
	for _, id := range terms {
		tpost = append(tpost, np)
		bp, op := ix.postLists(id)
		opost = opost[:0]
		for _, p := range op {
			opost = append(opost, posting{newSlot[p.slot], p.tfs})
		}
		slices.SortFunc(opost, func(a, b posting) int { return cmpU32(a.slot, b.slot) })
		ndf := uint32(0)
		out = out[:0]
		j := 0
		for _, p := range bp {
			if ix.isTomb(p.slot) {
				continue
			}
			ns := newSlot[p.slot]
			for ; j < len(opost) && opost[j].slot < ns; j++ {
				out = appendPosting(out, opost[j], &ndf)
			}
			out = appendPosting(out, posting{ns, p.tfs}, &ndf)
		}
		for ; j < len(opost); j++ {
			out = appendPosting(out, opost[j], &ndf)
		}
		fw.raw(out)
		tndf = append(tndf, ndf)
		np += uint64(len(out) / 8)
	}
	tpost = append(tpost, np)
	end(secPost)
	begin(secTPost)
	for _, v := range tpost {
		fw.u64(v)
	}
	end(secTPost)
	begin(secTNDF)
	for _, v := range tndf {
		fw.u32(v)
	}
	end(secTNDF)

	// The fuzzy dictionary: terms with a name-field posting, by length.
	var buckets [maxTermLen + 1][]uint32
	for i, id := range terms {
		if tndf[i] == 0 {
			continue
		}
		if l, ok := fuzzyTerm(ix.termText(id)); ok {
			buckets[l] = append(buckets[l], uint32(i))
		}
	}
	begin(secFzOff)
	off := uint32(0)
	for l := range buckets {
		fw.u32(off)
		off += uint32(len(buckets[l]))
	}
	fw.u32(off)
	end(secFzOff)
	begin(secFzID)
	for _, b := range buckets {
		for _, t := range b {
			fw.u32(t)
		}
	}
	end(secFzID)
	begin(secFzSig)
	for _, b := range buckets {
		for _, t := range b {
			fw.u64(letterSig(ix.termText(terms[t])))
		}
	}
	end(secFzSig)

	// Listing order.
	order := make([]uint32, len(slots))
	for i := range order {
		order[i] = uint32(i)
	}
	slices.SortFunc(order, func(a, b uint32) int {
		if c := strings.Compare(entries[a].sortKey, entries[b].sortKey); c != 0 {
			return c
		}
		return strings.Compare(entries[a].id, entries[b].id)
	})
	rank := make([]uint32, len(slots))
	for r, s := range order {
		rank[s] = uint32(r)
	}
	begin(secOrder)
	for _, v := range order {
		fw.u32(v)
	}
	end(secOrder)
	begin(secRank)
	for _, v := range rank {
		fw.u32(v)
	}
	end(secRank)

	// The id table: open addressing, at most half full.
	size := 8
	for size < 2*len(slots)+1 {
		size *= 2
	}
	table := make([]uint32, size)
	for i, e := range entries {
		h := hashString(e.id) & uint32(size-1)
		for table[h] != 0 {
			h = (h + 1) & uint32(size-1)
		}
		table[h] = uint32(i) + 1
	}
	begin(secIDHash)
	for _, v := range table {
		fw.u32(v)
	}
	end(secIDHash)

	for k := range int(numExact) {
		begin(secExKeys + k)
		for _, r := range exKeys[k] {
			fw.u32(r.off)
			fw.u32(r.n)
		}
		end(secExKeys + k)
		begin(secExOff + k)
		o := uint32(0)
		for _, x := range exact[k] {
			fw.u32(o)
			o += uint32(len(x.slots))
		}
		fw.u32(o)
		end(secExOff + k)
		begin(secExSlots + k)
		for _, x := range exact[k] {
			for _, s := range x.slots {
				fw.u32(s)
			}
		}
		end(secExSlots + k)
	}

	fw.pad()
	fw.u64(uint64(len(slots)))
	fw.u64(uint64(len(terms)))
	fw.u64(Derivation())
	for _, v := range sumLen {
		fw.u64(v)
	}
	for _, s := range secs {
		fw.u64(s[0])
		fw.u64(s[1])
	}
	if fw.err == nil {
		fw.err = fw.w.Flush()
	}
	return fw.n, fw.err
}

func appendPosting(b []byte, p posting, ndf *uint32) []byte {
	if p.tfs&nameTFs != 0 {
		*ndf++
	}
	b = binary.LittleEndian.AppendUint32(b, p.slot)
	return binary.LittleEndian.AppendUint32(b, p.tfs)
}

func cmpU32(a, b uint32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// mergeSorted merges two lists sorted by cmp.
func mergeSorted(a, b []uint32, cmp func(x, y uint32) int) []uint32 {
	if len(b) == 0 {
		return a
	}
	out := make([]uint32, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if cmp(b[j], a[i]) < 0 {
			out = append(out, b[j])
			j++
		} else {
			out = append(out, a[i])
			i++
		}
	}
	out = append(out, a[i:]...)
	return append(out, b[j:]...)
}

type frozenWriter struct {
	w   *bufio.Writer
	n   int64
	err error
	b   [8]byte
}

func (fw *frozenWriter) raw(b []byte) {
	if fw.err == nil {
		_, fw.err = fw.w.Write(b)
	}
	fw.n += int64(len(b))
}

func (fw *frozenWriter) str(s string) {
	if fw.err == nil {
		_, fw.err = fw.w.WriteString(s)
	}
	fw.n += int64(len(s))
}

func (fw *frozenWriter) u16(v uint16) {
	binary.LittleEndian.PutUint16(fw.b[:], v)
	fw.raw(fw.b[:2])
}

func (fw *frozenWriter) u32(v uint32) {
	binary.LittleEndian.PutUint32(fw.b[:], v)
	fw.raw(fw.b[:4])
}

func (fw *frozenWriter) u64(v uint64) {
	binary.LittleEndian.PutUint64(fw.b[:], v)
	fw.raw(fw.b[:8])
}

func (fw *frozenWriter) pad() {
	for fw.n%8 != 0 {
		fw.raw([]byte{0})
	}
}
