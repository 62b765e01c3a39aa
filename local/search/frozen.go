package search

import (
	"encoding/binary"
	"errors"
	"fmt"
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
	ok := f.viewSections(&secs)
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

// viewSections views each section as the array it holds, in place, and
// reports whether every one has a whole number of elements and the count
// the footer implies.
func (f *Frozen) viewSections(secs *[numSec][]byte) bool {
	n, nt := int(f.n), int(f.nt)
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
	f.docs = cast[docRec](arr(secDocs, int(unsafe.Sizeof(docRec{})), n))
	f.vals = cast[strRef](arr(secVals, 8, -1))
	f.flen = cast[[numFields]uint16](arr(secFlen, 2*int(numFields), n))
	f.whole = cast[wholeTerms](arr(secWhole, 4*maxWhole, n))
	f.ttext = cast[strRef](arr(secTText, 8, nt))
	f.tpost = cast[uint64](arr(secTPost, 8, nt+1))
	f.tndf = cast[uint32](arr(secTNDF, 4, nt))
	f.post = cast[posting](arr(secPost, 8, -1))
	f.fzOff = cast[uint32](arr(secFzOff, 4, maxTermLen+2))
	f.fzID = cast[uint32](arr(secFzID, 4, -1))
	f.fzSig = cast[uint64](arr(secFzSig, 8, len(secs[secFzID])/4))
	f.order = cast[uint32](arr(secOrder, 4, n))
	f.rank = cast[uint32](arr(secRank, 4, n))
	f.idHash = cast[uint32](arr(secIDHash, 4, -1))
	for k := range int(numExact) {
		f.exKeys[k] = cast[strRef](arr(secExKeys+k, 8, -1))
		f.exOff[k] = cast[uint32](arr(secExOff+k, 4, len(secs[secExKeys+k])/8+1))
		f.exSlots[k] = cast[uint32](arr(secExSlots+k, 4, -1))
	}
	return ok
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
	e.terms = f.termList(slot)
	return e
}

// termList is slot's sorted term ids (see termList).
func (f *Frozen) termList(slot uint32) termList {
	d := &f.docs[slot]
	return termList(f.tlist[d.terms.off : d.terms.off+d.terms.n])
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
