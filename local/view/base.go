package view

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/pathid"
	"github.com/cgcat/cgcat/local/search"
	"github.com/zeebo/xxh3"
)

// A base file (format 3: records carry the manifest version) is laid out so that a reader maps it and answers
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
	gen     uint64 // which opening this is
	recOff  []uint64
	recs    []byte
	avail   []byte
	missing []int64
	roots   []uint32
	index   *search.Frozen
}

// Len is the number of records.
func (b *Base) Len() int { return len(b.recOff) - 1 }

// Index is the base's search index; its slot i is record i.
func (b *Base) Index() *search.Frozen { return b.index }

// Slot returns the slot of the record with id.
func (b *Base) Slot(id string) (uint32, bool) { return b.index.Slot(id) }

// ID is the id of the record at slot (a copy).
func (b *Base) ID(slot uint32) string { return b.index.ID(slot) }

func (b *Base) rec(slot uint32) []byte { return b.recs[b.recOff[slot]:b.recOff[slot+1]] }

// Record decodes the record at slot (nil if it cannot be read: the
// checksum makes that a defect, never a state).
func (b *Base) Record(slot uint32) *local.Project {
	p, err := decodeRecord(b.rec(slot))
	if err != nil {
		return nil
	}
	return p
}

// RecordLite is Record without the record's prose and the lists no
// comparison of records reads (description, README, keywords, tags,
// manifests, problems: left empty): a fraction of the cost.
func (b *Base) RecordLite(slot uint32) *local.Project {
	p, err := decodeRecordAs(b.rec(slot), true)
	if err != nil {
		return nil
	}
	return p
}

// Availability is the record's availability, without decoding it.
func (b *Base) Availability(slot uint32) local.Availability {
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
func (b *Base) MissingSince(slot uint32) time.Time {
	if ns := b.missing[slot]; ns != noTime {
		return time.Unix(0, ns).UTC()
	}
	return time.Time{}
}

// Decide calls fn with the record's root and lineage, which point into the
// base: fn must not keep them (a policy decision reads them and is done).
func (b *Base) Decide(slot uint32, lineage []string, fn func(root string, lineage []string) bool) bool {
	root, lin, ok := rootLineage(b.rec(slot), lineage)
	return ok && fn(root, lin)
}

// Root is the record's root (a copy).
func (b *Base) Root(slot uint32) string {
	root, _, _ := rootLineage(b.rec(slot), nil)
	return strings.Clone(root)
}

// RootSlot returns the slot of the record whose root has the given
// pathid.Key (the greatest id when several have).
func (b *Base) RootSlot(key string) (uint32, bool) {
	n := uint64(len(b.roots) / 2)
	if n == 0 {
		return 0, false
	}
	h := xxh3.HashString(key)
	for i := h & (n - 1); ; i = (i + 1) & (n - 1) {
		v := b.roots[2*i]
		if v == 0 {
			return 0, false
		}
		if b.roots[2*i+1] == uint32(h>>32) {
			if root, _, ok := rootLineage(b.rec(v-1), nil); ok && pathid.Key(root) == key {
				return v - 1, true
			}
		}
	}
}

// DocOf is a record's search document: what the index of a base and of
// every reader's overlay holds for it.
func DocOf(p *local.Project) search.Doc {
	m := p.Meta
	return search.Doc{
		ID:          p.ID,
		SortKey:     strings.ToLower(m.Name) + "\x00" + p.Root,
		Name:        m.Name,
		Aliases:     m.Aliases,
		Packages:    m.Packages,
		Keywords:    m.Keywords,
		Tags:        m.Tags,
		Description: m.Description,
		Readme:      m.Readme,
		Path:        tailPath(p.Root, 3),
	}
}

// tailPath keeps the last n segments of a root: the folders that name a
// project (".../services/payments") without the ones every project shares
// ("/home/me/code"), which would make every project match "code".
func tailPath(root string, n int) string {
	parts := strings.FieldsFunc(root, func(r rune) bool { return r == '/' || r == '\\' })
	if len(parts) > n {
		parts = parts[len(parts)-n:]
	}
	return strings.Join(parts, "/")
}

type baseHeader struct {
	*Snapshot
	Count int `json:"count"`
}

// countingWriter hashes and counts what goes through it.
type countingWriter struct {
	w   *bufio.Writer
	h   *xxh3.Hasher
	n   int64
	err error
}

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
	// Records by id, one per id.
	recs := slices.Clone(s.Records)
	recs = slices.DeleteFunc(recs, func(p *local.Project) bool { return p == nil || p.ID == "" })
	slices.SortStableFunc(recs, func(a, b *local.Project) int { return strings.Compare(a.ID, b.ID) })
	kept := recs[:0]
	for i, p := range recs {
		if i+1 < len(recs) && recs[i+1].ID == p.ID {
			continue // the last record given for an id wins
		}
		kept = append(kept, p)
	}
	recs = kept
	ix := search.New()
	if from != nil {
		ix = search.NewOver(from.Index())
	}

	cw := &countingWriter{w: bufio.NewWriterSize(w, 1<<20), h: xxh3.New()}
	cw.Write([]byte(baseMagic))
	var secs [numBS][2]uint64
	begin := func(i int) { cw.pad(); secs[i][0] = uint64(cw.n) }
	end := func(i int) { secs[i][1] = uint64(cw.n) - secs[i][0] }

	hdr, err := json.Marshal(baseHeader{s, len(recs)})
	if err != nil {
		return err
	}
	begin(bsHeader)
	cw.Write(hdr)
	end(bsHeader)

	begin(bsRecords)
	offs := make([]uint64, 0, len(recs)+1)
	var buf []byte
	next := uint32(0) // walks from's records alongside (both by id)
	for _, p := range recs {
		offs = append(offs, uint64(cw.n)-secs[bsRecords][0])
		buf = appendRecord(buf[:0], p)
		cw.Write(buf)
		if from == nil {
			ix.Put(DocOf(p))
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
		ix.Put(DocOf(p))
	}
	for ; from != nil && int(next) < from.Len(); next++ {
		ix.Delete(from.index.ID(next))
	}
	offs = append(offs, uint64(cw.n)-secs[bsRecords][0])
	end(bsRecords)

	begin(bsRecOff)
	for _, o := range offs {
		cw.Write(binary.LittleEndian.AppendUint64(nil, o))
	}
	end(bsRecOff)

	begin(bsAvail)
	av := make([]byte, len(recs))
	for i, p := range recs {
		av[i] = availOther
		if c := slices.Index(availCodes, p.Availability); c >= 0 {
			av[i] = byte(c)
		}
	}
	cw.Write(av)
	end(bsAvail)

	begin(bsMissing)
	for _, p := range recs {
		ns := int64(noTime)
		if !p.MissingSince.IsZero() {
			ns = p.MissingSince.UnixNano()
		}
		cw.Write(binary.LittleEndian.AppendUint64(nil, uint64(ns)))
	}
	end(bsMissing)

	begin(bsRoots)
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
	for _, v := range table {
		cw.u32(v)
	}
	end(bsRoots)

	begin(bsIndex)
	if _, err := ix.WriteFrozen(cw); err != nil {
		return err
	}
	end(bsIndex)

	for _, s := range secs {
		cw.Write(binary.LittleEndian.AppendUint64(nil, s[0]))
		cw.Write(binary.LittleEndian.AppendUint64(nil, s[1]))
	}
	if cw.err != nil {
		return cw.err
	}
	cw.w.Write(binary.BigEndian.AppendUint64(nil, cw.h.Sum64()))
	return cw.w.Flush()
}

// openBase maps a base file and checks it whole (its checksum) before
// anything is read from it.
func openBase(path string) (*Snapshot, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := fi.Size()
	if size < int64(len(baseMagic))+baseFooter+8 || int64(int(size)) != size {
		return nil, ErrDamaged
	}
	open := mapFile
	if readNotMap {
		open = readFile
	}
	data, release, mapped, err := open(f, int(size))
	if err != nil {
		return nil, err
	}
	s, b, err := parseBase(data, mapped)
	if err != nil {
		release()
		return nil, err
	}
	b.gen = baseGen.Add(1)
	runtime.AddCleanup(b, func(r released) { r.release(); releasedBases.Store(r.gen, true) }, released{release, b.gen})
	return s, nil
}

// readNotMap makes openBase read bases instead of mapping them (as on
// Windows), for tests.
var readNotMap bool

type released struct {
	release func()
	gen     uint64
}

var (
	baseGen       atomic.Uint64
	releasedBases sync.Map // gens of bases released (for tests)
)

// parseBase reads a base from data, which it keeps (mapped: a file
// mapping, whose pages can be dropped from the resident set once checked).
func parseBase(data []byte, mapped bool) (*Snapshot, *Base, error) {
	if len(data) < len(baseMagic)+baseFooter+8 || string(data[:len(baseMagic)]) != baseMagic {
		return nil, nil, ErrDamaged
	}
	body, sum := data[:len(data)-8], binary.BigEndian.Uint64(data[len(data)-8:])
	if xxh3.Hash(body) != sum {
		return nil, nil, ErrDamaged
	}
	if mapped {
		dropResident(data) // never on memory of our own: that would zero it
	}
	ft := body[len(body)-baseFooter:]
	var secs [numBS][]byte
	for i := range secs {
		off, l := binary.LittleEndian.Uint64(ft[16*i:]), binary.LittleEndian.Uint64(ft[16*i+8:])
		limit := uint64(len(body) - baseFooter)
		if off%8 != 0 || off > limit || l > limit-off {
			return nil, nil, ErrDamaged
		}
		secs[i] = body[off : off+l]
	}
	var hdr baseHeader
	hdr.Snapshot = &Snapshot{}
	if err := json.Unmarshal(secs[bsHeader], &hdr); err != nil || hdr.Count < 0 {
		return nil, nil, ErrDamaged
	}
	n := hdr.Count
	b := &Base{recs: secs[bsRecords], avail: secs[bsAvail]}
	if len(secs[bsRecOff]) != 8*(n+1) || len(b.avail) != n || len(secs[bsMissing]) != 8*n || len(secs[bsRoots])%8 != 0 {
		return nil, nil, ErrDamaged
	}
	b.recOff = words[uint64](secs[bsRecOff])
	b.missing = words[int64](secs[bsMissing])
	b.roots = words[uint32](secs[bsRoots])
	if m := len(b.roots) / 2; m&(m-1) != 0 {
		return nil, nil, ErrDamaged
	}
	prev := uint64(0)
	for _, o := range b.recOff {
		if o < prev || o > uint64(len(b.recs)) {
			return nil, nil, ErrDamaged
		}
		prev = o
	}
	ix, err := search.OpenFrozen(secs[bsIndex], b)
	if err != nil || ix.Len() != n {
		return nil, nil, fmt.Errorf("%w: %v", ErrDamaged, err)
	}
	b.index = ix
	s := hdr.Snapshot
	s.Base = b
	return s, b, nil
}

// words views a section as little-endian words (copied where the host or
// the alignment does not allow a view).
func words[T uint32 | uint64 | int64](b []byte) []T {
	var z T
	size := int(unsafe.Sizeof(z))
	if len(b) == 0 {
		return nil
	}
	if hostLittleEndian && uintptr(unsafe.Pointer(&b[0]))%uintptr(size) == 0 {
		return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), len(b)/size)
	}
	out := make([]T, len(b)/size)
	for i := range out {
		if size == 4 {
			out[i] = T(binary.LittleEndian.Uint32(b[4*i:]))
		} else {
			out[i] = T(binary.LittleEndian.Uint64(b[8*i:]))
		}
	}
	return out
}

var hostLittleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1
