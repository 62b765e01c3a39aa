package search

// BM25F scoring: the field weights, a query's candidates and their
// per-field matches, and the passes over postings that score them.

import (
	"math"
	"math/bits"
	mbits "math/bits"
	"sync"
)

// BM25F parameters. Names, packages and aliases are what people search by;
// keywords, tags and the description say what a project is; a README
// paragraph and path segments are noisy, so they only break near-ties.
// Short list-like fields get little length normalisation (b): a project with
// five keywords is not less about each of them than one with two.
var (
	fieldWeight = [numFields]float64{fName: 5, fAlias: 4, fPackage: 4, fKeyword: 2, fTag: 2, fDescription: 1.5, fReadme: 0.5, fPath: 0.5}
	fieldB      = [numFields]float64{fName: 0.3, fAlias: 0.3, fPackage: 0.3, fKeyword: 0.5, fTag: 0.5, fDescription: 0.75, fReadme: 0.75, fPath: 0.3}
)

const k1 = 1.2

// cand is one document a query touched. It is kept small (40 bytes): a
// query that matches most of a large corpus walks tens of thousands.
type cand struct {
	slot  uint32
	band  uint8
	label uint8 // index into partialLabels for package partial matches
	score float64
	mask  uint64 // query terms matched anywhere
	// Query terms matched per field. For queries of at most narrowTerms
	// terms (nearly all: a package path with its compounds has a dozen),
	// packed here: bit 8·f+i of fm says term i matched field f, of fm2
	// term 8+i. Wider queries keep them in scratch.wide.
	fm, fm2 uint64
}

const narrowTerms = 16

type scratch struct {
	idx   []int32 // slot → 1 + index in cands; 0: not a candidate
	cands []cand
	wide  [][numFields]uint64 // per cand, for queries of more than narrowTerms terms
	keys  []uint64            // sort keys, see Search
	tmp   []uint64            // radix sort buffer
	fz    []fuzzyTarget
}

// nameBits returns the query terms cand ci matched in a name, alias or
// package name.
func (sc *scratch) nameBits(ci int, narrow bool) uint64 {
	if !narrow {
		w := &sc.wide[ci]
		return w[fName] | w[fAlias] | w[fPackage]
	}
	c := &sc.cands[ci]
	fm, fm2 := c.fm, c.fm2
	return (fm>>(8*fName)|fm>>(8*fAlias)|fm>>(8*fPackage))&0xff | ((fm2>>(8*fName)|fm2>>(8*fAlias)|fm2>>(8*fPackage))&0xff)<<8
}

// fieldMasks returns, per field, the query terms cand ci matched there.
func (sc *scratch) fieldMasks(ci int, narrow bool) (fm [numFields]uint64) {
	if !narrow {
		return sc.wide[ci]
	}
	c := &sc.cands[ci]
	for f := range fm {
		fm[f] = c.fm>>(8*f)&0xff | (c.fm2>>(8*f)&0xff)<<8
	}
	return fm
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// release clears the candidates' marks and returns sc to the pool, with
// keys' memory for the next query.
func (sc *scratch) release(keys []uint64) {
	if len(sc.cands) > len(sc.idx)/16 {
		clear(sc.idx) // one sweep beats scattered writes
	} else {
		for _, c := range sc.cands {
			sc.idx[c.slot] = 0
		}
	}
	sc.keys = keys[:0]
	scratchPool.Put(sc)
}

// cand returns the index of slot's candidate, adding one if needed.
func (sc *scratch) cand(slot uint32, narrow bool) int {
	ci := sc.idx[slot]
	if ci == 0 {
		sc.cands = append(sc.cands, cand{slot: slot})
		if !narrow {
			sc.wide = append(sc.wide, [numFields]uint64{})
		}
		ci = int32(len(sc.cands))
		sc.idx[slot] = ci
	}
	return int(ci - 1)
}

// bm25 holds one query's per-field length normalisation:
// tf·w / (a + c·len).
type bm25 struct {
	n    float64
	a, c [numFields]float64
}

func (ix *Index) bm25() *bm25 {
	w := &bm25{n: float64(ix.live)}
	for f := range numFields {
		w.a[f] = 1 - fieldB[f]
		if ix.sumLen[f] > 0 {
			w.c[f] = fieldB[f] * w.n / float64(ix.sumLen[f])
		}
	}
	return w
}

func (w *bm25) idf(df int) float64 {
	return math.Log(1 + (w.n-float64(df)+0.5)/(float64(df)+0.5))
}

// tf is the field-weighted, length-normalised frequency of a posting over
// the fields tfs holds, and the fields it found.
func (w *bm25) tf(fl *[numFields]uint16, tfs uint32) (tf float64, fields uint8) {
	for tfs != 0 {
		sh := uint(bits.TrailingZeros32(tfs)) &^ 3
		f := sh >> 2
		tf += fieldWeight[f] * float64((tfs>>sh)&15) / (w.a[f] + w.c[f]*float64(fl[f]))
		fields |= 1 << f
		tfs &^= 15 << sh
	}
	return tf, fields
}

// mark records that the query terms in bits matched cand ci in fields.
func (sc *scratch) mark(ci int, narrow bool, bits uint64, fields uint8) {
	cd := &sc.cands[ci]
	for fs := fields; fs != 0; fs &= fs - 1 {
		f := uint(bits8(fs))
		if narrow {
			cd.fm |= (bits & 0xff) << (8 * f)
			cd.fm2 |= (bits >> 8 & 0xff) << (8 * f)
		} else {
			sc.wide[ci][f] |= bits
		}
	}
}

func bits8(x uint8) int { return bits.TrailingZeros8(x) }

// score accumulates BM25F into sc.cands: the query's words, then words run
// together, then fuzzy matches of name-field terms, then host-only words
// (which only add to documents already found).
func (ix *Index) score(q *query, sc *scratch, narrow bool) {
	w := ix.bm25()
	for i, t := range q.terms {
		if q.content&(1<<i) == 0 {
			continue
		}
		if id, ok := ix.lookup(t); ok {
			ix.scoreTerm(w, sc, narrow, id, ^uint32(0), 1<<i, 1)
		}
	}
	for _, p := range q.pairs {
		if id, ok := ix.lookup(p.text); ok && ix.ndf(id) > 0 {
			ix.scoreTerm(w, sc, narrow, id, nameTFs, p.bits, 1)
		}
	}
	for _, p := range q.phrases {
		if id, ok := ix.lookup(p.text); ok {
			ix.scoreTerm(w, sc, narrow, id, ^uint32(0), p.bits, 1)
		}
	}
	if len(q.fzKeys) > 0 && !ix.noFuzzy {
		sc.fz = ix.expand(q.fzKeys, sc.fz[:0])
		for _, t := range sc.fz {
			if t.dist > 0 {
				ix.scoreFuzzy(w, sc, narrow, t)
			}
		}
	}
	for i, t := range q.terms {
		if q.content&(1<<i) != 0 {
			continue
		}
		id, ok := ix.lookup(t)
		if !ok {
			continue
		}
		idf := w.idf(ix.df(id))
		bp, op := ix.postLists(id)
		for _, p := range bp {
			ci := sc.idx[p.slot]
			if ci == 0 {
				continue // a tombstoned slot is never a candidate
			}
			tf, _ := w.tf(&ix.base.flen[p.slot], p.tfs)
			sc.cands[ci-1].score += hostWeight * idf * tf / (k1 + tf)
		}
		for _, p := range op {
			ci := sc.idx[p.slot]
			if ci == 0 {
				continue
			}
			tf, _ := w.tf(&ix.flen[p.slot-ix.nb], p.tfs)
			sc.cands[ci-1].score += hostWeight * idf * tf / (k1 + tf)
		}
	}
}

// scoreTerm adds term id's postings in the fields sel selects, crediting
// the query terms in bits.
func (ix *Index) scoreTerm(w *bm25, sc *scratch, narrow bool, id, sel uint32, bits uint64, weight float64) {
	idf := w.idf(ix.df(id))
	bp, op := ix.postLists(id)
	if len(bp) > 0 {
		ix.scorePostings(w, sc, narrow, bp, ix.base.flen, 0, ix.tomb, sel, bits, weight*idf)
	}
	if len(op) > 0 {
		ix.scorePostings(w, sc, narrow, op, ix.flen, ix.nb, nil, sel, bits, weight*idf)
	}
}

// scorePostings is scoreTerm over one list: flen[slot-off] holds the field
// lengths of its slots, tomb the slots to skip.
func (ix *Index) scorePostings(w *bm25, sc *scratch, narrow bool, post []posting, flen [][numFields]uint16, off uint32, tomb []uint64, sel uint32, bits uint64, wi float64) {
	if narrow {
		scoreNarrow(w, sc, post, flen, off, tomb, sel, bits, wi)
		return
	}
	for _, p := range post {
		tfs := p.tfs & sel
		if tfs == 0 {
			continue
		}
		if tomb != nil && tomb[p.slot>>6]&(1<<(p.slot&63)) != 0 {
			continue
		}
		tf, fields := w.tf(&flen[p.slot-off], tfs)
		ci := sc.cand(p.slot, narrow)
		sc.mark(ci, narrow, bits, fields)
		cd := &sc.cands[ci]
		cd.score += wi * tf / (k1 + tf)
		cd.mask |= bits
	}
}

// scoreNarrow is scorePostings for a query of at most narrowTerms terms
// (nearly all), in one pass per posting: the same arithmetic, the
// candidate's fields marked as the frequencies are summed, the scratch
// arrays held in locals. A query that meets most of a large catalog walks
// hundreds of thousands of postings here.
func scoreNarrow(w *bm25, sc *scratch, post []posting, flen [][numFields]uint16, off uint32, tomb []uint64, sel uint32, bits uint64, wi float64) {
	idx, cands := sc.idx, sc.cands
	lo, hi := bits&0xff, bits>>8&0xff
	for _, p := range post {
		tfs := p.tfs & sel
		if tfs == 0 {
			continue
		}
		if tomb != nil && tomb[p.slot>>6]&(1<<(p.slot&63)) != 0 {
			continue
		}
		fl := &flen[p.slot-off]
		var tf float64
		var fm, fm2 uint64
		for t := tfs; t != 0; {
			sh := uint(mbits.TrailingZeros32(t)) &^ 3
			f := (sh >> 2) & 7
			tf += fieldWeight[f] * float64((t>>sh)&15) / (w.a[f] + w.c[f]*float64(fl[f]))
			fm |= lo << (8 * f)
			fm2 |= hi << (8 * f)
			t &^= 15 << sh
		}
		ci := idx[p.slot]
		if ci == 0 {
			cands = append(cands, cand{slot: p.slot})
			ci = int32(len(cands))
			idx[p.slot] = ci
		}
		cd := &cands[ci-1]
		cd.fm |= fm
		cd.fm2 |= fm2
		cd.score += wi * tf / (k1 + tf)
		cd.mask |= bits
	}
	sc.cands = cands
}

// scoreFuzzy credits a document once per query word for its best spelling
// of it in a name, alias or package name — never for a word the document
// also matched exactly. Targets come best first (see expand), so the
// first credit is the best. The name-field bits of a fuzzy word are free
// for this: a document with the word itself in such a field would have
// its exact bit set.
func (ix *Index) scoreFuzzy(w *bm25, sc *scratch, narrow bool, t fuzzyTarget) {
	weight := fuzzyWeight1
	if t.dist > 1 {
		weight = fuzzyWeight2
	}
	wi := weight * w.idf(ix.df(t.id))
	bp, op := ix.postLists(t.id)
	if len(bp) > 0 {
		ix.scoreFuzzyPostings(w, sc, narrow, bp, ix.base.flen, 0, ix.tomb, uint64(1)<<t.qi, wi)
	}
	if len(op) > 0 {
		ix.scoreFuzzyPostings(w, sc, narrow, op, ix.flen, ix.nb, nil, uint64(1)<<t.qi, wi)
	}
}

func (ix *Index) scoreFuzzyPostings(w *bm25, sc *scratch, narrow bool, post []posting, flen [][numFields]uint16, off uint32, tomb []uint64, bit uint64, wi float64) {
	for _, p := range post {
		tfs := p.tfs & nameTFs
		if tfs == 0 {
			continue
		}
		if tomb != nil && tomb[p.slot>>6]&(1<<(p.slot&63)) != 0 {
			continue
		}
		if ci := sc.idx[p.slot]; ci > 0 && (sc.cands[ci-1].mask|sc.nameBits(int(ci-1), narrow))&bit != 0 {
			continue
		}
		tf, fields := w.tf(&flen[p.slot-off], tfs)
		ci := sc.cand(p.slot, narrow)
		sc.mark(ci, narrow, bit, fields)
		sc.cands[ci].score += wi * tf / (k1 + tf)
	}
}
