package search

// The listing order (SortKey, then ID) kept lazily over changes, List, and
// the Filter every read takes.

import (
	"slices"
	"strings"
)

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
	kept, add := ix.dropChanged()
	merged := mergeInOrder(slices.Grow(ix.spare[:0], len(kept)+len(add)), kept, add, ix.orderLess)
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

// orderLess orders slots by (sortKey, id): the listing order.
func (ix *Index) orderLess(a, b uint32) int {
	if c := strings.Compare(ix.sortKeyOf(a), ix.sortKeyOf(b)); c != 0 {
		return c
	}
	return strings.Compare(ix.id(a), ix.id(b))
}

// dropChanged returns the order without the slots changed since it was
// made (kept, in place), and those of them still live (add), sorted.
func (ix *Index) dropChanged() (kept, add []uint32) {
	pending := ix.orderPending
	slices.Sort(pending)
	pending = slices.Compact(pending)

	// A slot's old rank finds it; the check order[r] == s rejects ranks
	// that are stale or out of range.
	var drop []uint32
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
	kept = ix.order[:0]
	for r, s := range ix.order {
		if len(drop) > 0 && drop[0] == uint32(r) {
			drop = drop[1:]
			continue
		}
		kept = append(kept, s)
	}
	slices.SortFunc(add, ix.orderLess)
	return kept, add
}

// mergeInOrder appends kept and add (both sorted by less) to merged in
// order: when add is few, each placed by binary search with the runs
// between copied, else in one merge pass.
func mergeInOrder(merged, kept, add []uint32, less func(a, b uint32) int) []uint32 {
	if len(add)*32 < len(kept) {
		from := 0
		for _, s := range add {
			at, _ := slices.BinarySearchFunc(kept[from:], s, less)
			merged = append(merged, kept[from:from+at]...)
			merged = append(merged, s)
			from += at
		}
		return append(merged, kept[from:]...)
	}
	i := 0
	for _, s := range kept {
		for i < len(add) && less(add[i], s) < 0 {
			merged = append(merged, add[i])
			i++
		}
		merged = append(merged, s)
	}
	return append(merged, add[i:]...)
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
