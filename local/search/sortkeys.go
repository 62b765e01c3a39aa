package search

// Ordering a query's hits: the best n keys, and a sort of plain uint64
// keys fast enough for answers that match most of a catalog.

import "slices"

// smallest moves the n smallest keys (unordered) to the front of keys and
// returns them, keeping a max-heap of the best n seen: most keys lose to the
// heap's top in one comparison.
func smallest(keys []uint64, n int) []uint64 {
	h := keys[:n]
	for i := n/2 - 1; i >= 0; i-- {
		siftDown(h, i)
	}
	for _, k := range keys[n:] {
		if k < h[0] {
			h[0] = k
			siftDown(h, 0)
		}
	}
	return h
}

func siftDown(h []uint64, i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		if r := l + 1; r < len(h) && h[r] > h[l] {
			l = r
		}
		if h[i] >= h[l] {
			return
		}
		h[i], h[l] = h[l], h[i]
		i = l
	}
}

// sortKeys sorts keys ascending and returns the (possibly grown) buffer.
// Large answers use an LSD radix sort, a byte per pass, skipping bytes that
// are the same in every key (most of the rank's high bytes, often the
// score's exponent): linear time where a comparison sort of a query that
// matches most of the corpus would dominate the query's cost.
func sortKeys(keys, buf []uint64) []uint64 {
	if len(keys) < 512 {
		slices.Sort(keys)
		return buf
	}
	if cap(buf) < len(keys) {
		buf = make([]uint64, len(keys))
	}
	src, dst := keys, buf[:len(keys)]
	for shift := uint(0); shift < 64; shift += 8 {
		var count [256]int
		for _, k := range src {
			count[byte(k>>shift)]++
		}
		if count[byte(src[0]>>shift)] == len(src) {
			continue // every key has this byte: the pass would not move anything
		}
		pos := 0
		for i, n := range count {
			count[i] = pos
			pos += n
		}
		for _, k := range src {
			b := byte(k >> shift)
			dst[count[b]] = k
			count[b]++
		}
		src, dst = dst, src
	}
	if &src[0] != &keys[0] {
		copy(keys, src)
	}
	return buf
}
