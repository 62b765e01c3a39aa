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

	l := ix.frozenLayout()
	exact := ix.mergedExact(l)
	docs, vals, ttext, exKeys := fw.writeStrings(ix, l, exact)
	fw.writeTermLists(l, docs)
	fw.writeDocs(docs, vals)
	sumLen := fw.writeLengths(ix, l)
	fw.writeRefs(secTText, ttext)
	tndf := fw.writePostings(ix, l)
	fw.writeFuzzy(ix, l, tndf)
	fw.writeOrder(l)
	fw.writeIDTable(l)
	fw.writeExact(exact, exKeys)

	fw.pad()
	fw.u64(uint64(len(l.slots)))
	fw.u64(uint64(len(l.terms)))
	fw.u64(Derivation())
	for _, v := range sumLen {
		fw.u64(v)
	}
	for _, s := range fw.secs {
		fw.u64(s[0])
		fw.u64(s[1])
	}
	if fw.err == nil {
		fw.err = fw.w.Flush()
	}
	return fw.n, fw.err
}

// frozenLayout is the numbering a frozen form is written in: its
// documents (live slots) in id order and its terms (those some live
// document has) in text order, with the maps from the index's slots and
// term ids to the new ones.
type frozenLayout struct {
	slots   []uint32    // index slot of each new slot
	newSlot []uint32    // index slot → new slot
	terms   []uint32    // index term id of each new term id
	newTerm []uint32    // index term id → new term id
	entries []*docEntry // per new slot
}

// frozenLayout numbers the live documents and terms. The base's are in
// order already (by construction); the overlay's are sorted and merged in.
func (ix *Index) frozenLayout() *frozenLayout {
	l := &frozenLayout{}
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
	l.slots = mergeSorted(baseSlots, overSlots, byID)
	l.newSlot = make([]uint32, total)
	l.entries = make([]*docEntry, len(l.slots))
	for i, s := range l.slots {
		l.newSlot[s] = uint32(i)
		l.entries[i] = ix.entry(s)
	}
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
	l.terms = mergeSorted(baseTerms, overTerms, byText)
	l.newTerm = make([]uint32, ix.nt+uint32(len(ix.terms)))
	for i, id := range l.terms {
		l.newTerm[id] = uint32(i)
	}
	return l
}

// exEntry is one key of an exact table with its (new) slots, in order.
type exEntry struct {
	key   string
	slots []uint32
}

// mergedExact is each exact table: the base's keys (in order, live slots
// renumbered) merged with the overlay's.
func (ix *Index) mergedExact(l *frozenLayout) (exact [numExact][]exEntry) {
	for k := range numExact {
		var bx, ox []exEntry
		if f := ix.base; f != nil {
			for i, r := range f.exKeys[k] {
				var sl []uint32
				for _, s := range f.exSlots[k][f.exOff[k][i]:f.exOff[k][i+1]] {
					if !ix.isTomb(s) {
						sl = append(sl, l.newSlot[s])
					}
				}
				if len(sl) > 0 {
					bx = append(bx, exEntry{f.s(r), sl})
				}
			}
		}
		for key, sl := range ix.exact[k] {
			nl := make([]uint32, len(sl))
			for i, s := range sl {
				nl[i] = l.newSlot[s]
			}
			slices.Sort(nl)
			ox = append(ox, exEntry{key, nl})
		}
		slices.SortFunc(ox, func(a, b exEntry) int { return strings.Compare(a.key, b.key) })
		exact[k] = mergeExact(bx, ox)
	}
	return exact
}

// mergeExact merges two key-sorted tables; a key in both gets the slots
// of both.
func mergeExact(bx, ox []exEntry) (out []exEntry) {
	i, j := 0, 0
	for i < len(bx) || j < len(ox) {
		switch {
		case j == len(ox) || i < len(bx) && bx[i].key < ox[j].key:
			out = append(out, bx[i])
			i++
		case i == len(bx) || ox[j].key < bx[i].key:
			out = append(out, ox[j])
			j++
		default:
			sl := append(bx[i].slots, ox[j].slots...)
			slices.Sort(sl)
			out = append(out, exEntry{bx[i].key, sl})
			i, j = i+1, j+1
		}
	}
	return out
}

// writeStrings writes the string section — per document its id, sort key,
// name, aliases and packages, then the term texts, then the exact keys —
// and returns where each went.
func (fw *frozenWriter) writeStrings(ix *Index, l *frozenLayout, exact [numExact][]exEntry) (docs []docRec, vals, ttext []strRef, exKeys [numExact][]strRef) {
	fw.begin(secStr)
	docs = make([]docRec, len(l.slots))
	for i, e := range l.entries {
		d := &docs[i]
		d.id, d.sortKey, d.name = fw.strRef(e.id), fw.strRef(e.sortKey), fw.strRef(e.name)
		d.vals, d.nAlias, d.nPkg = uint32(len(vals)), uint32(len(e.aliases)), uint32(len(e.packages))
		for _, v := range e.aliases {
			vals = append(vals, fw.strRef(v))
		}
		for _, v := range e.packages {
			vals = append(vals, fw.strRef(v))
		}
	}
	ttext = make([]strRef, len(l.terms))
	for i, id := range l.terms {
		ttext[i] = fw.strRef(ix.termText(id))
	}
	for k := range numExact {
		for _, x := range exact[k] {
			exKeys[k] = append(exKeys[k], fw.strRef(x.key))
		}
	}
	fw.end(secStr)
	return docs, vals, ttext, exKeys
}

// writeTermLists writes each document's term list, its ids renumbered and
// sorted again (overlay terms interleave), and records where it went.
func (fw *frozenWriter) writeTermLists(l *frozenLayout, docs []docRec) {
	fw.begin(secTList)
	var ids []uint32
	var enc []byte
	for i, e := range l.entries {
		ids = ids[:0]
		for it := (termIter{b: e.terms}); ; {
			t, ok := it.next()
			if !ok {
				break
			}
			ids = append(ids, l.newTerm[t])
		}
		slices.Sort(ids)
		enc = enc[:0]
		prev := uint32(0)
		for _, t := range ids {
			enc = binary.AppendUvarint(enc, uint64(t-prev))
			prev = t
		}
		docs[i].terms = strRef{uint32(uint64(fw.n) - fw.secs[secTList][0]), uint32(len(enc))}
		fw.raw(enc)
	}
	fw.end(secTList)
}

func (fw *frozenWriter) writeDocs(docs []docRec, vals []strRef) {
	fw.begin(secDocs)
	for _, d := range docs {
		for _, v := range [...]uint32{d.id.off, d.id.n, d.sortKey.off, d.sortKey.n, d.name.off, d.name.n, d.vals, d.nAlias, d.nPkg, d.terms.off, d.terms.n} {
			fw.u32(v)
		}
	}
	fw.end(secDocs)
	fw.writeRefs(secVals, vals)
}

// writeRefs writes a section of string references.
func (fw *frozenWriter) writeRefs(sec int, refs []strRef) {
	fw.begin(sec)
	for _, r := range refs {
		fw.u32(r.off)
		fw.u32(r.n)
	}
	fw.end(sec)
}

// writeLengths writes each document's field lengths and whole-value terms
// (renumbered), and returns the field length sums.
func (fw *frozenWriter) writeLengths(ix *Index, l *frozenLayout) (sumLen [numFields]uint64) {
	fw.begin(secFlen)
	for _, s := range l.slots {
		for f, v := range ix.flenOf(s) {
			fw.u16(v)
			sumLen[f] += uint64(v)
		}
	}
	fw.end(secFlen)
	fw.begin(secWhole)
	for _, s := range l.slots {
		for _, w := range ix.wholeOf(s) {
			if w != 0 {
				w = l.newTerm[w-1] + 1
			}
			fw.u32(w)
		}
	}
	fw.end(secWhole)
	return sumLen
}

// writePostings writes the postings term by term, in new slot order, with
// each term's first posting and its name-field count, which it returns.
// The base's postings stay in order (its slots and the new ones are both
// by id); the overlay's are sorted and merged in.
func (fw *frozenWriter) writePostings(ix *Index, l *frozenLayout) (tndf []uint32) {
	fw.begin(secPost)
	tpost := make([]uint64, 0, len(l.terms)+1)
	tndf = make([]uint32, 0, len(l.terms))
	var np uint64
	var out []byte
	var opost []posting
	for _, id := range l.terms {
		tpost = append(tpost, np)
		bp, op := ix.postLists(id)
		opost = opost[:0]
		for _, p := range op {
			opost = append(opost, posting{l.newSlot[p.slot], p.tfs})
		}
		slices.SortFunc(opost, func(a, b posting) int { return cmpU32(a.slot, b.slot) })
		ndf := uint32(0)
		out = out[:0]
		j := 0
		for _, p := range bp {
			if ix.isTomb(p.slot) {
				continue
			}
			ns := l.newSlot[p.slot]
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
	fw.end(secPost)
	fw.begin(secTPost)
	for _, v := range tpost {
		fw.u64(v)
	}
	fw.end(secTPost)
	fw.writeU32s(secTNDF, tndf)
	return tndf
}

// writeFuzzy writes the fuzzy dictionary: the terms with a name-field
// posting, in buckets by length, with their letter signatures.
func (fw *frozenWriter) writeFuzzy(ix *Index, l *frozenLayout, tndf []uint32) {
	var buckets [maxTermLen + 1][]uint32
	for i, id := range l.terms {
		if tndf[i] == 0 {
			continue
		}
		if n, ok := fuzzyTerm(ix.termText(id)); ok {
			buckets[n] = append(buckets[n], uint32(i))
		}
	}
	fw.begin(secFzOff)
	off := uint32(0)
	for n := range buckets {
		fw.u32(off)
		off += uint32(len(buckets[n]))
	}
	fw.u32(off)
	fw.end(secFzOff)
	fw.begin(secFzID)
	for _, b := range buckets {
		for _, t := range b {
			fw.u32(t)
		}
	}
	fw.end(secFzID)
	fw.begin(secFzSig)
	for _, b := range buckets {
		for _, t := range b {
			fw.u64(letterSig(ix.termText(l.terms[t])))
		}
	}
	fw.end(secFzSig)
}

// writeOrder writes the listing order (SortKey, then ID) and each slot's
// rank in it.
func (fw *frozenWriter) writeOrder(l *frozenLayout) {
	order := make([]uint32, len(l.slots))
	for i := range order {
		order[i] = uint32(i)
	}
	slices.SortFunc(order, func(a, b uint32) int {
		if c := strings.Compare(l.entries[a].sortKey, l.entries[b].sortKey); c != 0 {
			return c
		}
		return strings.Compare(l.entries[a].id, l.entries[b].id)
	})
	rank := make([]uint32, len(l.slots))
	for r, s := range order {
		rank[s] = uint32(r)
	}
	fw.writeU32s(secOrder, order)
	fw.writeU32s(secRank, rank)
}

// writeIDTable writes the id table: open addressing, at most half full.
func (fw *frozenWriter) writeIDTable(l *frozenLayout) {
	size := 8
	for size < 2*len(l.slots)+1 {
		size *= 2
	}
	table := make([]uint32, size)
	for i, e := range l.entries {
		h := hashString(e.id) & uint32(size-1)
		for table[h] != 0 {
			h = (h + 1) & uint32(size-1)
		}
		table[h] = uint32(i) + 1
	}
	fw.writeU32s(secIDHash, table)
}

// writeExact writes each exact table: its keys, where each key's slots
// start, and the slots.
func (fw *frozenWriter) writeExact(exact [numExact][]exEntry, exKeys [numExact][]strRef) {
	for k := range int(numExact) {
		fw.writeRefs(secExKeys+k, exKeys[k])
		fw.begin(secExOff + k)
		o := uint32(0)
		for _, x := range exact[k] {
			fw.u32(o)
			o += uint32(len(x.slots))
		}
		fw.u32(o)
		fw.end(secExOff + k)
		fw.begin(secExSlots + k)
		for _, x := range exact[k] {
			for _, s := range x.slots {
				fw.u32(s)
			}
		}
		fw.end(secExSlots + k)
	}
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

// frozenWriter writes the frozen form's bytes, counting them, and where
// each section begins and how long it is.
type frozenWriter struct {
	w    *bufio.Writer
	n    int64
	err  error
	b    [8]byte
	secs [numSec][2]uint64 // offset and length of each section
}

// begin starts section i at the next 8-byte boundary; end closes it.
func (fw *frozenWriter) begin(i int) { fw.pad(); fw.secs[i][0] = uint64(fw.n) }
func (fw *frozenWriter) end(i int)   { fw.secs[i][1] = uint64(fw.n) - fw.secs[i][0] }

// strRef writes s into the string section and says where it went.
func (fw *frozenWriter) strRef(s string) strRef {
	r := strRef{uint32(uint64(fw.n) - fw.secs[secStr][0]), uint32(len(s))}
	fw.str(s)
	return r
}

// writeU32s writes a section of uint32s.
func (fw *frozenWriter) writeU32s(sec int, vs []uint32) {
	fw.begin(sec)
	for _, v := range vs {
		fw.u32(v)
	}
	fw.end(sec)
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
