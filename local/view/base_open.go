package view

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/cgcat/cgcat/local/search"
	"github.com/zeebo/xxh3"
)

// Opening a base: it is mapped (or read), then checked whole before any of
// it is used — its checksum (accidental damage), and every reference it
// holds against what it points into (a crafted file passes any checksum):
// every section's bounds, every record whole and under its slot's id,
// every root-table entry, and every offset, slot and term id of its
// search index (search.OpenFrozen). The checksum and the records' walk run
// beside the index's check, on a second core when there is one.

// openBase maps a base file and checks it whole (its checksum, every
// offset of its index) before anything is read from it. A mapped base keeps
// its file open, to notice a change under the mapping (Base.Moved).
func openBase(path string) (*Snapshot, error) {
	f, fi, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	keep := false
	defer func() {
		if !keep {
			f.Close()
		}
	}()
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
	var m *mapping
	if mapped {
		m = &mapping{file: f, ident: identOf(fi)}
	}
	s, b, err := parseGuarded(data, m)
	if err != nil {
		release()
		return nil, err
	}
	keep = mapped
	b.gen = baseGen.Add(1)
	runtime.AddCleanup(b, func(r released) {
		r.release()
		r.mapped.close()
		releasedBases.Store(r.gen, true)
	}, released{release, m, b.gen})
	return s, nil
}

// parseGuarded is parseBase with faults of the mapping (the file truncated
// while it is checked) turned into ErrDamaged.
func parseGuarded(data []byte, m *mapping) (s *Snapshot, b *Base, err error) {
	defer func() {
		if m != nil && m.faulted.Load() {
			s, b, err = nil, nil, fmt.Errorf("%w: %w", ErrDamaged, errFault)
		}
	}()
	defer m.unguard(m.guard())
	s, b, err = parseBase(data, m)
	if b != nil {
		b.mapped = m
	}
	return s, b, err
}

// readNotMap makes openBase read bases instead of mapping them (as on
// Windows), for tests.
var readNotMap bool

type released struct {
	release func()
	mapped  *mapping
	gen     uint64
}

var (
	baseGen       atomic.Uint64
	releasedBases sync.Map // gens of bases released (for tests)
)

// parseBase reads a base from data, which it keeps (mapped: a file
// mapping, whose pages can be dropped from the resident set once checked).
func parseBase(data []byte, m *mapping) (*Snapshot, *Base, error) {
	if len(data) < len(baseMagic)+baseFooter+8 || string(data[:len(baseMagic)]) != baseMagic {
		return nil, nil, ErrDamaged
	}
	body, sum := data[:len(data)-8], binary.BigEndian.Uint64(data[len(data)-8:])
	s, b, err := parseSections(body)
	if err != nil {
		return nil, nil, err
	}
	// Beside the index's check: the checksum, and every record walked.
	var sumOK, whole bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer m.unguard(m.guard())
		sumOK = xxh3.Hash(body) == sum
		whole = sumOK && b.recordsWhole()
	}()
	ix, ierr := search.OpenFrozen(b.indexBytes, b)
	wg.Wait()
	switch {
	case !sumOK:
		return nil, nil, ErrDamaged
	case !whole:
		return nil, nil, fmt.Errorf("%w: a record is not whole", ErrDamaged)
	case errors.Is(ierr, search.ErrDerivation) && ix.Len() == b.Len():
		// Whole, but derived by another tokenizer: its records are good,
		// its index is built again here (the next writer publishes one).
		if ix, err = b.indexAgain(); err != nil {
			return nil, nil, err
		}
		s.Reindexed = true
	case ierr != nil || ix.Len() != b.Len():
		return nil, nil, fmt.Errorf("%w: %v", ErrDamaged, ierr)
	}
	b.index = ix
	if !b.idsMatch() {
		return nil, nil, fmt.Errorf("%w: a record does not match its slot", ErrDamaged)
	}
	if m != nil {
		dropResident(data) // never on memory of our own: that would zero it
	}
	s.Base = b
	return s, b, nil
}

// parseSections reads the footer, the header and the fixed-size sections,
// each checked against the others.
func parseSections(body []byte) (*Snapshot, *Base, error) {
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
	if err := json.Unmarshal(secs[bsHeader], &hdr); err != nil || hdr.Count < 0 || hdr.Count > len(body)/8 {
		return nil, nil, ErrDamaged
	}
	if err := checkCards(hdr.Cards, nil); err != nil {
		return nil, nil, err
	}
	n := hdr.Count
	b := &Base{recs: secs[bsRecords], avail: secs[bsAvail], indexBytes: secs[bsIndex]}
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
	for i := 0; i < len(b.roots); i += 2 {
		if int(b.roots[i]) > n {
			return nil, nil, ErrDamaged
		}
	}
	return hdr.Snapshot, b, nil
}

// recordsWhole reports whether every record decodes whole.
func (b *Base) recordsWhole() bool {
	for i := range b.Len() {
		if _, ok := checkRecord(b.rec(uint32(i))); !ok {
			return false
		}
	}
	return true
}

// idsMatch reports whether every record has the id of its slot in the
// index (what every lookup by slot relies on).
func (b *Base) idsMatch() bool {
	for i := range b.Len() {
		r := recReader{b: b.rec(uint32(i))}
		if id := r.str(); r.err || !b.index.IDIs(uint32(i), id) {
			return false
		}
	}
	return true
}

// indexAgain builds the base's search index from its records with this
// binary's tokenizer, in memory.
func (b *Base) indexAgain() (*search.Frozen, error) {
	ix := search.New()
	for i := range b.Len() {
		p, err := decodeRecord(b.rec(uint32(i)))
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrDamaged, err)
		}
		ix.Put(search.DocOf(p))
	}
	return frozenInMemory(ix)
}

// frozenInMemory writes ix in its frozen form to memory and opens it.
func frozenInMemory(ix *search.Index) (*search.Frozen, error) {
	var buf alignedBuffer
	if _, err := ix.WriteFrozen(&buf); err != nil {
		return nil, err
	}
	return search.OpenFrozen(buf.bytes(), nil)
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
