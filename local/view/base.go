package view

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/pathid"
	"github.com/cgcat/cgcat/local/search"
	"github.com/zeebo/xxh3"
)

// A base file (format 3) is laid out so that a reader maps it and answers
// at once, sharing the pages with every other process that maps it:
//
//	"CGVIEW\x00\x03"
//	sections, each 8-byte aligned:
//	  header   JSON: the snapshot's scan state, GBrain contact, cards, count
//	  records  each record in the binary form of record.go, by id
//	  recoff   uint64 per record + 1: where each starts in records
//	  avail    a byte per record: its availability (fast listings)
//	  missing  int64 per record: MissingSince in Unix nanoseconds
//	  roots    the root-key table: (1 + slot, hash bits) per entry, by
//	           hash of pathid.Key(root), open addressing; one record per key
//	           (the greatest id, as a full reload of records in id order
//	           would keep)
//	  index    the search index in its frozen form (search.Frozen); its
//	           slot i is record i
//	footer: offset and length of each section (uint64 pairs)
//	xxh3 of everything before, big-endian
//
// Numbers are little-endian except the checksum (as in format 1).
const (
	bsHeader = iota
	bsRecords
	bsRecOff
	bsAvail
	bsMissing
	bsRoots
	bsIndex
	numBS
)

const baseFooter = 16 * numBS

const baseMagic = "CGVIEW\x00\x03"

// noTime marks a zero MissingSince in the missing section.
const noTime = math.MinInt64

var availCodes = []local.Availability{"", local.Present, local.Missing, local.Inaccessible, local.Unknown}

const availOther = 255 // an availability of no code: read from the record

// Base is a published base as a reader holds it: records decoded on demand
// and the search index, over the mapped file. It is read-only and safe for
// concurrent use. Its memory is released once nothing refers to it (a
// reader that moved to a newer base keeps answering from this one until
// its last call ends); nothing it hands out points into it.
type Base struct {
	gen    uint64 // which opening this is
	mapped *mapping
	// indexBytes is the index section, until it is opened.
	indexBytes []byte
	recOff     []uint64
	recs       []byte
	avail      []byte
	missing    []int64
	roots      []uint32
	index      *search.Frozen
}

// Len is the number of records.
func (b *Base) Len() int { return len(b.recOff) - 1 }

// Index is the base's search index; its slot i is record i.
func (b *Base) Index() *search.Frozen { return b.index }

// Slot returns the slot of the record with id.
func (b *Base) Slot(id string) (slot uint32, ok bool) {
	defer b.mapped.unguard(b.mapped.guard())
	return b.index.Slot(id)
}

// ID is the id of the record at slot (a copy).
func (b *Base) ID(slot uint32) (id string) {
	defer b.mapped.unguard(b.mapped.guard())
	return b.index.ID(slot)
}

func (b *Base) rec(slot uint32) []byte { return b.recs[b.recOff[slot]:b.recOff[slot+1]] }

// Record decodes the record at slot (nil if it cannot be read: the
// checksum makes that a defect, never a state).
func (b *Base) Record(slot uint32) (p *local.Project) {
	defer b.mapped.unguard(b.mapped.guard())
	p, err := decodeRecord(b.rec(slot))
	if err != nil {
		return nil
	}
	return p
}

// RecordLite is Record without the record's prose and the lists no
// comparison of records reads (description, README, keywords, tags,
// manifests, problems: left empty): a fraction of the cost.
func (b *Base) RecordLite(slot uint32) (p *local.Project) {
	defer b.mapped.unguard(b.mapped.guard())
	p, err := decodeRecordAs(b.rec(slot), true)
	if err != nil {
		return nil
	}
	return p
}

// Availability is the record's availability, without decoding it.
func (b *Base) Availability(slot uint32) (a local.Availability) {
	defer b.mapped.unguard(b.mapped.guard())
	if c := b.avail[slot]; int(c) < len(availCodes) {
		return availCodes[c]
	}
	if p := b.Record(slot); p != nil {
		return p.Availability
	}
	return ""
}

// MissingSince is the record's MissingSince (the instant), without
// decoding it.
func (b *Base) MissingSince(slot uint32) (t time.Time) {
	defer b.mapped.unguard(b.mapped.guard())
	if ns := b.missing[slot]; ns != noTime {
		return time.Unix(0, ns).UTC()
	}
	return time.Time{}
}

// Decide calls fn with the record's root and lineage, which point into the
// base: fn must not keep them (a policy decision reads them and is done).
func (b *Base) Decide(slot uint32, lineage []string, fn func(root string, lineage []string) bool) (ok bool) {
	defer b.mapped.unguard(b.mapped.guard())
	root, lin, ok := rootLineage(b.rec(slot), lineage)
	return ok && fn(root, lin)
}

// Root is the record's root (a copy).
func (b *Base) Root(slot uint32) (r string) {
	defer b.mapped.unguard(b.mapped.guard())
	root, _, _ := rootLineage(b.rec(slot), nil)
	return strings.Clone(root)
}

// RootSlot returns the slot of the record whose root has the given
// pathid.Key (the greatest id when several have).
func (b *Base) RootSlot(key string) (slot uint32, ok bool) {
	defer b.mapped.unguard(b.mapped.guard())
	n := uint64(len(b.roots) / 2)
	if n == 0 {
		return 0, false
	}
	h := xxh3.HashString(key)
	// At most one probe per entry: a table with no free entry (crafted,
	// the checksum passing) ends the search instead of looping.
	for i, probes := h&(n-1), uint64(0); probes < n; i, probes = (i+1)&(n-1), probes+1 {
		v := b.roots[2*i]
		if v == 0 {
			return 0, false
		}
		if int(v-1) >= b.Len() {
			return 0, false // checked at open; never here
		}
		if b.roots[2*i+1] == uint32(h>>32) {
			if root, _, ok := rootLineage(b.rec(v-1), nil); ok && pathid.Key(root) == key {
				return v - 1, true
			}
		}
	}
	return 0, false
}

type baseHeader struct {
	*Snapshot
	Count int `json:"count"`
}

// countingWriter hashes and counts what goes through it, and where each
// section of a base begins and how long it is.
type countingWriter struct {
	w    *bufio.Writer
	h    *xxh3.Hasher
	n    int64
	err  error
	secs [numBS][2]uint64
}

// begin starts section i at the next 8-byte boundary; end closes it.
func (c *countingWriter) begin(i int) { c.pad(); c.secs[i][0] = uint64(c.n) }
func (c *countingWriter) end(i int)   { c.secs[i][1] = uint64(c.n) - c.secs[i][0] }

func (c *countingWriter) Write(b []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	c.h.Write(b)
	n, err := c.w.Write(b)
	c.n += int64(n)
	c.err = err
	return n, err
}

func (c *countingWriter) pad() {
	var z [8]byte
	if r := c.n % 8; r != 0 {
		c.Write(z[:8-r])
	}
}

func (c *countingWriter) u32(v uint32) { c.Write(binary.LittleEndian.AppendUint32(nil, v)) }

// writeBase writes s (its Records) as a base file. With from (the base
// published before, of the same store), the search index is built over it:
// only records whose encoding changed are tokenised again, and records it
// has that s has not are deleted — the same index as one built from
// nothing (the frozen form is canonical), at a fraction of the cost.
func writeBase(w io.Writer, s *Snapshot, from *Base) error {
	recs := byID(s.Records)
	cw := &countingWriter{w: bufio.NewWriterSize(w, 1<<20), h: xxh3.New()}
	cw.Write([]byte(baseMagic))

	hdr, err := json.Marshal(baseHeader{s, len(recs)})
	if err != nil {
		return err
	}
	cw.begin(bsHeader)
	cw.Write(hdr)
	cw.end(bsHeader)

	offs, ix := cw.writeRecords(recs, from)
	cw.begin(bsRecOff)
	for _, o := range offs {
		cw.Write(binary.LittleEndian.AppendUint64(nil, o))
	}
	cw.end(bsRecOff)
	cw.writeAvail(recs)
	cw.writeMissing(recs)
	cw.begin(bsRoots)
	for _, v := range rootTable(recs) {
		cw.u32(v)
	}
	cw.end(bsRoots)
	cw.begin(bsIndex)
	if _, err := ix.WriteFrozen(cw); err != nil {
		return err
	}
	cw.end(bsIndex)

	for _, s := range cw.secs {
		cw.Write(binary.LittleEndian.AppendUint64(nil, s[0]))
		cw.Write(binary.LittleEndian.AppendUint64(nil, s[1]))
	}
	if cw.err != nil {
		return cw.err
	}
	cw.w.Write(binary.BigEndian.AppendUint64(nil, cw.h.Sum64()))
	return cw.w.Flush()
}

// byID is the records by id, one per id: the last record given for an id
// wins.
func byID(records []*local.Project) []*local.Project {
	recs := slices.Clone(records)
	recs = slices.DeleteFunc(recs, func(p *local.Project) bool { return p == nil || p.ID == "" })
	slices.SortStableFunc(recs, func(a, b *local.Project) int { return strings.Compare(a.ID, b.ID) })
	kept := recs[:0]
	for i, p := range recs {
		if i+1 < len(recs) && recs[i+1].ID == p.ID {
			continue
		}
		kept = append(kept, p)
	}
	return kept
}

// writeRecords writes the records section and returns where each record
// starts (and where the last ends), with the search index of the records:
// over from's when given, walking from's records alongside (both by id).
func (cw *countingWriter) writeRecords(recs []*local.Project, from *Base) (offs []uint64, ix *search.Index) {
	ix = search.New()
	if from != nil {
		ix = search.NewOver(from.Index())
	}
	cw.begin(bsRecords)
	offs = make([]uint64, 0, len(recs)+1)
	var buf []byte
	next := uint32(0) // from's next record
	for _, p := range recs {
		offs = append(offs, uint64(cw.n)-cw.secs[bsRecords][0])
		buf = appendRecord(buf[:0], p)
		cw.Write(buf)
		if from == nil {
			ix.Put(search.DocOf(p))
			continue
		}
		for ; int(next) < from.Len() && from.index.ID(next) < p.ID; next++ {
			ix.Delete(from.index.ID(next))
		}
		if int(next) < from.Len() && from.index.ID(next) == p.ID {
			same := bytes.Equal(from.rec(next), buf)
			next++
			if same {
				continue
			}
		}
		ix.Put(search.DocOf(p))
	}
	for ; from != nil && int(next) < from.Len(); next++ {
		ix.Delete(from.index.ID(next))
	}
	offs = append(offs, uint64(cw.n)-cw.secs[bsRecords][0])
	cw.end(bsRecords)
	return offs, ix
}

// writeAvail writes a byte per record: its availability's code.
func (cw *countingWriter) writeAvail(recs []*local.Project) {
	cw.begin(bsAvail)
	av := make([]byte, len(recs))
	for i, p := range recs {
		av[i] = availOther
		if c := slices.Index(availCodes, p.Availability); c >= 0 {
			av[i] = byte(c)
		}
	}
	cw.Write(av)
	cw.end(bsAvail)
}

// writeMissing writes each record's MissingSince in Unix nanoseconds.
func (cw *countingWriter) writeMissing(recs []*local.Project) {
	cw.begin(bsMissing)
	for _, p := range recs {
		ns := int64(noTime)
		if !p.MissingSince.IsZero() {
			ns = p.MissingSince.UnixNano()
		}
		cw.Write(binary.LittleEndian.AppendUint64(nil, uint64(ns)))
	}
	cw.end(bsMissing)
}

// rootTable is the root-key table: (1 + slot, hash bits) per entry, by
// hash of pathid.Key(root), open addressing, at most half full; one record
// per key, the greatest id.
func rootTable(recs []*local.Project) []uint32 {
	size := 8
	for size < 2*len(recs)+1 {
		size *= 2
	}
	table := make([]uint32, 2*size)
	for i, p := range recs {
		key := pathid.Key(p.Root)
		h := xxh3.HashString(key)
		for j := h & uint64(size-1); ; j = (j + 1) & uint64(size-1) {
			v := table[2*j]
			if v == 0 {
				table[2*j], table[2*j+1] = uint32(i)+1, uint32(h>>32)
				break
			}
			if table[2*j+1] == uint32(h>>32) && pathid.Key(recs[v-1].Root) == key {
				table[2*j] = uint32(i) + 1 // the greater id
				break
			}
		}
	}
	return table
}
