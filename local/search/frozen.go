package search

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync/atomic"
	"unsafe"
)

// A Frozen index is an Index written in a compact binary form that a
// process maps instead of building: the term dictionary and postings, the
// exact-tier tables, field lengths, whole-value terms, the listing order and
// the fuzzy tier's dictionary, every array laid out as the Index reads it
// (little-endian, 8-byte aligned), so opening one reads a footer and checks
// bounds, nothing more. Several processes mapping the same file share one
// copy of it in the page cache.
//
// An Index opened over a Frozen base (NewOver) changes without touching
// it: a document replaced or deleted is a tombstone over its base slot, and
// what Put adds lives in the usual in-memory structures beside it (the
// overlay). Searches see the base minus tombstones merged with the overlay
// and answer exactly as an Index built from the same documents by Put: the
// same hits, order, scores, reasons, totals and suggestions (the
// differential tests in layered_test.go are the proof).
//
// The form is canonical: the same documents give the same bytes however
// the index that wrote them was built (documents in id order, terms in text
// order, postings in slot order). Slot i of a base is the i-th of its
// documents by id, so a caller that stores its own records in id order can
// address both by the same slot (Frozen.Slot).
//
// Strings of a mapped base point into the mapping. None of them leaves this
// package: ids in hits and lists, values in reasons and suggestions are
// copied or built anew, so the mapping can be released (by its owner, once
// nothing reachable refers to it) while answers live on.

const frozenMagic = "CGSRCH\x00\x02"

// strRef is a string in the string section: its offset and length.
type strRef struct{ off, n uint32 }

// docRec is a base document's fixed-size record. Every field is a uint32,
// so the section is an array of little-endian words.
type docRec struct {
	id, sortKey, name strRef
	vals              uint32 // index in the values section: its aliases, then its packages
	nAlias, nPkg      uint32
	terms             strRef // its term list (varint deltas of term ids) in the term-list section
}

// Sections of a frozen index, each an array of one element type.
const (
	secStr     = iota // bytes: every string
	secDocs           // docRec per slot
	secVals           // strRef: aliases and packages
	secFlen           // [numFields]uint16 per slot
	secWhole          // wholeTerms per slot
	secTList          // bytes: term lists
	secTText          // strRef per term, sorted by text
	secTPost          // uint64 per term + 1: index of its first posting
	secTNDF           // uint32 per term: name-field postings
	secPost           // posting, grouped by term, by slot within a term
	secFzOff          // uint32 per term length + 1: index of the bucket's first entry
	secFzID           // uint32: term ids of the fuzzy dictionary, by length
	secFzSig          // uint64: their letter signatures
	secOrder          // uint32 per slot: slots in listing order
	secRank           // uint32 per slot: its place in the listing order
	secIDHash         // uint32: 1 + slot, by hash of the id (open addressing)
	secExKeys         // strRef per key of each exact kind, numExact groups (see exSec)
	secExOff   = secExKeys + int(numExact)
	secExSlots = secExOff + int(numExact)
	numSec     = secExSlots + int(numExact)
)

// footer: document count, term count, the Derivation that built it, field
// length sums, then offset and length of each section.
const footerSize = 8 + 8 + 8 + 8*int(numFields) + 16*numSec

var hostLittleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// ErrFrozen says a frozen index is damaged or of another form.
var ErrFrozen = errors.New("frozen search index is damaged or of another format")

// ErrDerivation says a frozen index was built by another tokenizer, stemmer
// or builder (another Derivation): it is whole, but this code must not
// search it.
var ErrDerivation = errors.New("frozen search index was built by another version of the tokenizer")

// Frozen is a search index in its frozen form, read-only. It is safe for
// concurrent use.
type Frozen struct {
	owner   any // keeps the memory behind b reachable (a mapping's holder)
	faulted atomic.Bool
	b       []byte
	n, nt   uint32
	sumLen  [numFields]uint64

	str     []byte
	docs    []docRec
	vals    []strRef
	flen    [][numFields]uint16
	whole   []wholeTerms
	tlist   []byte
	ttext   []strRef
	tpost   []uint64
	tndf    []uint32
	post    []posting
	fzOff   []uint32
	fzID    []uint32
	fzSig   []uint64
	order   []uint32
	rank    []uint32
	idHash  []uint32
	exKeys  [numExact][]strRef
	exOff   [numExact][]uint32
	exSlots [numExact][]uint32
}

// OpenFrozen reads a frozen index from b without copying it. owner is kept
// reachable as long as the Frozen (and any Index over it) is: pass the
// holder of b's memory when something releases it once unreachable.
func OpenFrozen(b []byte, owner any) (*Frozen, error) {
	if !hostLittleEndian {
		return nil, fmt.Errorf("%w: frozen indexes are read on little-endian hosts only", ErrFrozen)
	}
	if len(b) < len(frozenMagic)+footerSize || string(b[:len(frozenMagic)]) != frozenMagic {
		return nil, ErrFrozen
	}
	if len(b) > 0 && uintptr(unsafe.Pointer(&b[0]))%8 != 0 {
		// Mapped files and large allocations are aligned; anything else is
		// copied once to memory that is.
		w := make([]uint64, (len(b)+7)/8)
		c := unsafe.Slice((*byte)(unsafe.Pointer(&w[0])), len(b))
		copy(c, b)
		b = c
	}
	f := &Frozen{owner: owner, b: b}
	ft := b[len(b)-footerSize:]
	u64 := func() uint64 { v := binary.LittleEndian.Uint64(ft); ft = ft[8:]; return v }
	n, nt, derived := u64(), u64(), u64()
	if n >= 1<<31 || nt >= 1<<31 {
		return nil, ErrFrozen
	}
	f.n, f.nt = uint32(n), uint32(nt)
	for i := range f.sumLen {
		f.sumLen[i] = u64()
	}
	var secs [numSec][]byte
	for i := range secs {
		off, l := u64(), u64()
		if off%8 != 0 || off < uint64(len(frozenMagic)) || off > uint64(len(b)-footerSize) || l > uint64(len(b)-footerSize)-off {
			return nil, ErrFrozen
		}
		secs[i] = b[off : off+l]
	}
	ok := true
	arr := func(i int, size int, want int) []byte {
		s := secs[i]
		if len(s)%size != 0 || (want >= 0 && len(s)/size != want) {
			ok = false
			return nil
		}
		return s
	}
	f.str = secs[secStr]
	f.tlist = secs[secTList]
	f.docs = cast[docRec](arr(secDocs, int(unsafe.Sizeof(docRec{})), int(n)))
	f.vals = cast[strRef](arr(secVals, 8, -1))
	f.flen = cast[[numFields]uint16](arr(secFlen, 2*int(numFields), int(n)))
	f.whole = cast[wholeTerms](arr(secWhole, 4*maxWhole, int(n)))
	f.ttext = cast[strRef](arr(secTText, 8, int(nt)))
	f.tpost = cast[uint64](arr(secTPost, 8, int(nt)+1))
	f.tndf = cast[uint32](arr(secTNDF, 4, int(nt)))
	f.post = cast[posting](arr(secPost, 8, -1))
	f.fzOff = cast[uint32](arr(secFzOff, 4, maxTermLen+2))
	f.fzID = cast[uint32](arr(secFzID, 4, -1))
	f.fzSig = cast[uint64](arr(secFzSig, 8, len(secs[secFzID])/4))
	f.order = cast[uint32](arr(secOrder, 4, int(n)))
	f.rank = cast[uint32](arr(secRank, 4, int(n)))
	f.idHash = cast[uint32](arr(secIDHash, 4, -1))
	for k := range int(numExact) {
		f.exKeys[k] = cast[strRef](arr(secExKeys+k, 8, -1))
		f.exOff[k] = cast[uint32](arr(secExOff+k, 4, len(secs[secExKeys+k])/8+1))
		f.exSlots[k] = cast[uint32](arr(secExSlots+k, 4, -1))
	}
	if !ok || len(f.idHash)&(len(f.idHash)-1) != 0 || len(f.idHash) <= int(n) {
		return nil, ErrFrozen
	}
	// Offsets into other sections must run forward and end at their
	// section's end, or a slice of them would reach outside it.
	if !monotone(f.tpost, uint64(len(f.post))) || !monotone(f.fzOff, uint32(len(f.fzID))) {
		return nil, ErrFrozen
	}
	for k := range numExact {
		if !monotone(f.exOff[k], uint32(len(f.exSlots[k]))) {
			return nil, ErrFrozen
		}
	}
	if !f.check() {
		return nil, ErrFrozen
	}
	if derived != Derivation() {
		return f, ErrDerivation
	}
	return f, nil
}

func monotone[T uint32 | uint64](offs []T, end T) bool {
	if len(offs) == 0 || offs[0] != 0 || offs[len(offs)-1] != end {
		return false
	}
	for i := 1; i < len(offs); i++ {
		if offs[i] < offs[i-1] {
			return false
		}
	}
	return true
}

// cast views b as a slice of T (b is 8-byte aligned and little-endian, and
// T is made of little-endian words: checked by OpenFrozen).
func cast[T any](b []byte) []T {
	var z T
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), len(b)/int(unsafe.Sizeof(z)))
}

// Len is the number of documents in the base.
func (f *Frozen) Len() int { return int(f.n) }

// Slot returns the slot of the document with id: its place among the
// base's documents in id order.
func (f *Frozen) Slot(id string) (uint32, bool) {
	if f.n == 0 {
		return 0, false
	}
	mask := uint32(len(f.idHash) - 1)
	// At most one probe per entry: a table with no free entry (crafted,
	// the checksum passing) ends the search instead of looping for ever.
	for h, probes := hashString(id)&mask, 0; probes < len(f.idHash); h, probes = (h+1)&mask, probes+1 {
		v := f.idHash[h]
		if v == 0 {
			return 0, false
		}
		if f.s(f.docs[v-1].id) == id {
			return v - 1, true
		}
	}
	return 0, false
}

// ID returns the id of the document at slot (a copy).
func (f *Frozen) ID(slot uint32) string { return strings.Clone(f.s(f.docs[slot].id)) }

// s is a string of the string section, without copying: it must not leave
// the package.
func (f *Frozen) s(r strRef) string {
	b := f.str[r.off : r.off+r.n]
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// entry is slot's document as the ranking code reads it (strings point into
// the base).
func (f *Frozen) entry(slot uint32) *docEntry {
	d := &f.docs[slot]
	e := &docEntry{id: f.s(d.id), sortKey: f.s(d.sortKey), live: true, name: f.s(d.name)}
	if d.nAlias > 0 {
		e.aliases = make([]string, d.nAlias)
		for i := range e.aliases {
			e.aliases[i] = f.s(f.vals[d.vals+uint32(i)])
		}
	}
	if d.nPkg > 0 {
		e.packages = make([]string, d.nPkg)
		for i := range e.packages {
			e.packages[i] = f.s(f.vals[d.vals+d.nAlias+uint32(i)])
		}
	}
	e.terms = termList(f.tlist[d.terms.off : d.terms.off+d.terms.n])
	return e
}

// term finds a term's id by binary search over the sorted dictionary.
func (f *Frozen) term(t string) (uint32, bool) {
	i, ok := slices.BinarySearchFunc(f.ttext, t, func(r strRef, t string) int { return strings.Compare(f.s(r), t) })
	return uint32(i), ok
}

func (f *Frozen) postings(id uint32) []posting { return f.post[f.tpost[id]:f.tpost[id+1]] }

// posting returns slot's posting of term id.
func (f *Frozen) posting(id, slot uint32) (posting, bool) {
	post := f.postings(id)
	i, ok := searchSlot(post, slot)
	if !ok {
		return posting{}, false
	}
	return post[i], true
}

func (f *Frozen) fuzzyBucket(l int) (ids []uint32, sigs []uint64) {
	a, z := f.fzOff[l], f.fzOff[l+1]
	return f.fzID[a:z], f.fzSig[a:z]
}

// exact returns the slots under a normalised key of kind k.
func (f *Frozen) exact(k exactKind, key string) []uint32 {
	keys := f.exKeys[k]
	i, ok := slices.BinarySearchFunc(keys, key, func(r strRef, t string) int { return strings.Compare(f.s(r), t) })
	if !ok {
		return nil
	}
	return f.exSlots[k][f.exOff[k][i]:f.exOff[k][i+1]]
}

// hashString is FNV-1a, for the id table: stable across processes and
// builds, unlike maphash.
func hashString(s string) uint32 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return uint32(h ^ h>>32)
}

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

// eachExact calls fn with every normalised key the document is found under
// in the exact tiers (what indexExact indexes).
func (e *docEntry) eachExact(fn func(k exactKind, key string)) {
	put := func(k exactKind, s string) {
		if key := normalize(s); key != "" {
			fn(k, key)
		}
	}
	put(exName, e.name)
	for _, a := range e.aliases {
		put(exAlias, a)
	}
	for _, p := range e.packages {
		put(exPkg, p)
		for _, pf := range partialForms(p) {
			put(exPkgPart, pf.form)
		}
	}
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
