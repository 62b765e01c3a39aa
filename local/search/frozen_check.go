package search

import (
	"encoding/binary"
	"runtime/debug"
)

// A frozen index comes from a file anyone with write access to the data dir
// could have written: its checksum proves only accidental damage. So
// OpenFrozen checks every offset, count and slot it holds against the
// sections they point into (check), every loop over it is bounded (Slot
// probes at most once per entry), and an Index over a mapped base reads it
// guarded against the file being truncated under it (guard): a memory fault
// becomes a zero answer and marks the base faulted, for its owner to read
// the published files again.

// check reports whether every reference inside f stays inside f. It runs
// once at open, over every document, term and posting (a few milliseconds
// at 100k documents: PERFORMANCE.md, "damaged views").
func (f *Frozen) check() bool {
	n, nt := f.n, f.nt
	str, tl := uint64(len(f.str)), uint64(len(f.tlist))
	in := func(r strRef, size uint64) bool { return uint64(r.off)+uint64(r.n) <= size }
	for i := range f.docs {
		d := &f.docs[i]
		if !in(d.id, str) || !in(d.sortKey, str) || !in(d.name, str) || !in(d.terms, tl) ||
			uint64(d.vals)+uint64(d.nAlias)+uint64(d.nPkg) > uint64(len(f.vals)) ||
			!termListOK(f.tlist[d.terms.off:d.terms.off+d.terms.n], nt) {
			return false
		}
	}
	for _, refs := range [][]strRef{f.vals, f.ttext, f.exKeys[0], f.exKeys[1], f.exKeys[2], f.exKeys[3]} {
		for _, r := range refs {
			if !in(r, str) {
				return false
			}
		}
	}
	for t := range nt {
		ndf := uint32(0)
		post := f.post[f.tpost[t]:f.tpost[t+1]]
		for i, p := range post {
			if p.slot >= n || (i > 0 && p.slot <= post[i-1].slot) {
				return false
			}
			if p.tfs&nameTFs != 0 {
				ndf++
			}
		}
		if ndf != f.tndf[t] {
			return false
		}
	}
	for _, w := range f.whole {
		for _, v := range w {
			if v > nt {
				return false
			}
		}
	}
	return allBelow(f.fzID, nt) && allBelow(f.exSlots[0], n) && allBelow(f.exSlots[1], n) &&
		allBelow(f.exSlots[2], n) && allBelow(f.exSlots[3], n) && allBelow(f.idHash, n+1) &&
		permutation(f.order, f.rank)
}

// termListOK reports whether b is a term list of increasing term ids below
// nt, whole varints to its end.
func termListOK(b []byte, nt uint32) bool {
	prev, first := uint64(0), true
	for len(b) > 0 {
		var d uint64
		if b[0] < 0x80 { // one byte: most gaps between term ids
			d, b = uint64(b[0]), b[1:]
		} else {
			v, w := binary.Uvarint(b)
			if w <= 0 {
				return false
			}
			d, b = v, b[w:]
		}
		if d >= uint64(nt) || (!first && d == 0) || prev+d >= uint64(nt) {
			return false
		}
		prev, first = prev+d, false
	}
	return true
}

func allBelow(vs []uint32, limit uint32) bool {
	for _, v := range vs {
		if v >= limit {
			return false
		}
	}
	return true
}

// permutation reports whether order holds every slot once and rank is its
// inverse.
func permutation(order, rank []uint32) bool {
	if len(order) != len(rank) {
		return false
	}
	for i, s := range order {
		if int(s) >= len(rank) || rank[s] != uint32(i) {
			return false
		}
	}
	return true
}

// Faulted reports whether reading f faulted (its file was truncated under
// its mapping): its answers since are not to be trusted.
func (f *Frozen) Faulted() bool { return f.faulted.Load() }

// guard makes a memory fault in the calling goroutine a panic while an
// index over a base reads it; unguard, the deferred call, recovers it and
// marks the base faulted. An index without a base guards nothing.
func (ix *Index) guard() bool {
	if ix.base == nil {
		return false
	}
	return debug.SetPanicOnFault(true)
}

func (ix *Index) unguard(old bool) {
	if ix.base == nil {
		return
	}
	debug.SetPanicOnFault(old)
	if r := recover(); r != nil {
		if _, fault := r.(interface{ Addr() uintptr }); !fault {
			panic(r)
		}
		ix.base.faulted.Store(true)
	}
}

// IDIs reports whether the document at slot has id (without copying it).
func (f *Frozen) IDIs(slot uint32, id string) bool {
	return slot < f.n && f.s(f.docs[slot].id) == id
}
