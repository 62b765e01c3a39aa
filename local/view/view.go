// Package view publishes the catalog for readers that must never wait for
// the store's lock.
//
// LevelDB admits one process at a time, and a process frozen inside a batch
// (Ctrl-Z, a hung volume) would otherwise keep every other process from even
// reading. So the process that commits a change also publishes it as small
// immutable files in dataDir/views: a base (every record, the scan state,
// the last GBrain contact) and one delta per later commit (only what
// changed), each written to a temporary name and renamed into place, and a
// pointer file (dataDir/revision) that names the newest base and head.
// Readers stat the pointer, read the deltas they have not seen (O(changes),
// not a reload), or a base when they start, when the chain has moved past
// them, or when the data dir holds another store than before.
//
// A base is laid out to be mapped, not decoded (base.go): records in a
// compact binary form, decoded one at a time when asked, and the search
// index already built (search.Frozen), so a reader answers as soon as it
// has mapped and checked the file, and every reader of the data dir shares
// one copy of it in the page cache.
//
// The store (LevelDB) stays the authority; these files are a published
// copy that any writer can rebuild. This package owns only their format and
// their files: it never opens the store and never decides what is shared.
package view

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cgcat/cgcat/local"
	"github.com/zeebo/xxh3"
)

// Format is the version of the files this package writes. A reader ignores
// files of another format (an older or newer cgcat on the same data dir);
// the next writer publishes a base of its own format.
//
// Format 2: a base is records in a compact binary form plus the prebuilt
// search index (search.Frozen), mapped by readers rather than decoded
// (base.go). Deltas are JSON, as in format 1.
//
// Format 3: records carry the manifest's version; the base's index records
// the version of the tokenizer that built it (search.Derivation), and so
// does the pointer; the bounds of every file are checked before use. A format-2 reader (an older cgcat
// still running beside a newer one) ignores format-3 files rather than
// search them with its own tokenizer.
const Format = 3

// Snapshot is one complete published state of the catalog.
type Snapshot struct {
	StoreID   string              `json:"storeId"`
	MachineID string              `json:"machineId"`
	Seq       uint64              `json:"seq"`      // publication number
	Revision  uint64              `json:"revision"` // catalogRevision
	State     local.ScanState     `json:"state"`
	GBrain    local.GBrainContact `json:"gbrain"`
	// Cards is the local mirror of GBrain's project cards.
	Cards []*local.Card `json:"cards,omitempty"`
	// Forgotten are the ids forgotten in this store (`cgcat forget`,
	// `cgcat prune`): a reader that starts from this base still knows
	// them as gone for good, whatever a GBrain card not yet retracted
	// says. Absent from bases written before it was added.
	Forgotten []string `json:"forgotten,omitempty"`
	// Records are every record, for PublishBase.
	Records []*local.Project `json:"-"`
	// Base is what ReadBase gives instead of Records: the base as mapped,
	// records decoded on demand, with its search index.
	Base *Base `json:"-"`
	// Reindexed says the base's search index was built by another version
	// of the tokenizer, and was built again by this reader from the
	// base's records: whole and right, but a writer should publish a base
	// of its own.
	Reindexed bool `json:"-"`
}

// Projects returns every record of the snapshot, decoded.
func (s *Snapshot) Projects() []*local.Project {
	if s.Base == nil {
		return s.Records
	}
	out := make([]*local.Project, 0, s.Base.Len())
	for i := range s.Base.Len() {
		if p := s.Base.Record(uint32(i)); p != nil {
			out = append(out, p)
		}
	}
	return out
}

// Delta is what one commit changed. State and GBrain are always whole.
type Delta struct {
	StoreID      string              `json:"storeId"`
	Seq          uint64              `json:"seq"`
	Revision     uint64              `json:"revision"`
	State        local.ScanState     `json:"state"`
	GBrain       local.GBrainContact `json:"gbrain"`
	Records      []*local.Project    `json:"records,omitempty"`      // changed, whole
	Deleted      []string            `json:"deleted,omitempty"`      // forgotten ids
	Cards        []*local.Card       `json:"cards,omitempty"`        // mirrored cards changed, whole
	DeletedCards []string            `json:"deletedCards,omitempty"` // slugs gone from GBrain
}

// Pointer is the content of the pointer file: which store, which base and
// which head are published.
type Pointer struct {
	StoreID  string
	Base     uint64
	Head     uint64
	Revision uint64
	// DeltaBytes is the size of the deltas after Base and BaseBytes the
	// size of Base, to decide when a new base is cheaper for readers (and
	// for a writer to notice a file cut short).
	DeltaBytes, BaseBytes int64
	// Index is the search.Derivation of the base's index.
	Index uint64
}

// Dir is where the files live, in a data dir.
func Dir(dataDir string) string { return filepath.Join(dataDir, "views") }

// PointerFile is the file readers stat to notice a publication.
func PointerFile(dataDir string) string { return filepath.Join(dataDir, "revision") }

func baseName(seq uint64) string  { return fmt.Sprintf("base-%016x.v%d", seq, Format) }
func deltaName(seq uint64) string { return fmt.Sprintf("delta-%016x.v%d", seq, Format) }

const pointerMagic = "cgview"

func (p Pointer) String() string {
	return fmt.Sprintf("%s %d %s %d %d %d %d %d %x\n", pointerMagic, Format, p.StoreID, p.Base, p.Head, p.Revision, p.DeltaBytes, p.BaseBytes, p.Index)
}

// ReadPointer reads the pointer file. ok is false when there is none, or
// it is of another format or unreadable (a reader then has nothing newer).
func ReadPointer(dataDir string) (p Pointer, ok bool) {
	p, err := readPointer(dataDir)
	return p, err == nil
}

// ErrOutdated says the catalog was published by a newer cgcat, in a
// format this binary does not read: it answers from the store instead,
// and a restart brings the newer binary.
var ErrOutdated = errors.New("the catalog was published by a newer cgcat; this process is outdated (restart it to run the newer one)")

// readPointer reads the pointer file, bounded and without blocking. Its
// error says why there is no usable pointer: ErrNoView (none, or one of an
// older format: the next writer publishes this format), ErrOutdated (a
// newer format), ErrDamaged (anything else).
func readPointer(dataDir string) (Pointer, error) {
	var p Pointer
	b, err := readBounded(PointerFile(dataDir), maxPointerFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return p, ErrNoView
	case err != nil:
		return p, fmt.Errorf("catalog pointer: %w: %v", ErrDamaged, err)
	}
	f := strings.Fields(string(b))
	if len(f) >= 2 && f[0] == pointerMagic && f[1] != strconv.Itoa(Format) {
		if v, err := strconv.Atoi(f[1]); err == nil && v > Format {
			return p, fmt.Errorf("%w (format %d, this one reads %d)", ErrOutdated, v, Format)
		}
		return p, fmt.Errorf("%w: the catalog was published in the older format %s", ErrNoView, f[1])
	}
	if len(f) != 9 || f[0] != pointerMagic {
		return p, fmt.Errorf("catalog pointer: %w", ErrDamaged)
	}
	index, err := strconv.ParseUint(f[8], 16, 64)
	if err != nil {
		return p, fmt.Errorf("catalog pointer: %w", ErrDamaged)
	}
	nums := make([]uint64, 5)
	for i := range nums {
		n, err := strconv.ParseUint(f[3+i], 10, 64)
		if err != nil || n > math.MaxInt64 {
			return p, fmt.Errorf("catalog pointer: %w", ErrDamaged)
		}
		nums[i] = n
	}
	p = Pointer{StoreID: f[2], Base: nums[0], Head: nums[1], Revision: nums[2], DeltaBytes: int64(nums[3]), BaseBytes: int64(nums[4]), Index: index}
	if p.StoreID == "" || p.Head < p.Base || p.Head-p.Base > maxChain {
		return p, fmt.Errorf("catalog pointer: %w (base %d, head %d)", ErrDamaged, p.Base, p.Head)
	}
	return p, nil
}

// maxChain bounds the deltas a pointer may name after its base (a writer
// publishes a base after maxDeltas): a crafted pointer cannot make a
// reader try billions of files.
const maxChain = 4 * maxDeltas

// ErrDamaged says a published file is truncated or altered; a reader treats
// it as absent (a writer republishes).
var ErrDamaged = errors.New("published catalog file is damaged")

var fileMagic = []byte("CGVIEW\x00\x01")

// seal appends the checksum trailer.
func seal(b []byte) []byte {
	return binary.BigEndian.AppendUint64(b, xxh3.Hash(b))
}

func unseal(b []byte) ([]byte, error) {
	if len(b) < len(fileMagic)+8 || !bytes.Equal(b[:len(fileMagic)], fileMagic) {
		return nil, ErrDamaged
	}
	body, sum := b[:len(b)-8], binary.BigEndian.Uint64(b[len(b)-8:])
	if xxh3.Hash(body) != sum {
		return nil, ErrDamaged
	}
	return body[len(fileMagic):], nil
}

func encodeDelta(d *Delta) ([]byte, error) {
	b, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	return seal(append(append([]byte{}, fileMagic...), b...)), nil
}

func decodeDelta(b []byte) (*Delta, error) {
	body, err := unseal(b)
	if err != nil {
		return nil, err
	}
	d := new(Delta)
	if err := json.Unmarshal(body, d); err != nil {
		return nil, ErrDamaged
	}
	if err := d.check(); err != nil {
		return nil, err
	}
	return d, nil
}

// check refuses a delta whose parts no writer makes (a record or card that
// is null or has no id): the checksum only proves accidental damage, and
// every reader (store recover too) relies on these.
func (d *Delta) check() error {
	if d.StoreID == "" {
		return fmt.Errorf("%w: no store id", ErrDamaged)
	}
	for _, p := range d.Records {
		if p == nil || p.ID == "" || p.Root == "" {
			return fmt.Errorf("%w: a record without id or root", ErrDamaged)
		}
	}
	for _, id := range d.Deleted {
		if id == "" {
			return fmt.Errorf("%w: an empty deleted id", ErrDamaged)
		}
	}
	return checkCards(d.Cards, d.DeletedCards)
}

func checkCards(cards []*local.Card, deleted []string) error {
	for _, c := range cards {
		if c == nil || c.Slug == "" {
			return fmt.Errorf("%w: a card without slug", ErrDamaged)
		}
	}
	for _, s := range deleted {
		if s == "" {
			return fmt.Errorf("%w: an empty deleted card", ErrDamaged)
		}
	}
	return nil
}

// ReadBase reads the base published at seq (mapped, see Base).
func ReadBase(dataDir string, seq uint64) (*Snapshot, error) {
	s, err := openBase(filepath.Join(Dir(dataDir), baseName(seq)))
	if err != nil {
		if errors.Is(err, ErrDamaged) {
			return nil, fmt.Errorf("%s: %w", baseName(seq), err)
		}
		return nil, err
	}
	if s.Seq != seq {
		return nil, fmt.Errorf("%s: %w (holds seq %d)", baseName(seq), ErrDamaged, s.Seq)
	}
	return s, nil
}

// ReadDelta reads the delta published at seq.
func ReadDelta(dataDir string, seq uint64) (*Delta, error) {
	b, err := readBounded(filepath.Join(Dir(dataDir), deltaName(seq)), maxDeltaFile)
	if err != nil {
		return nil, err
	}
	d, err := decodeDelta(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", deltaName(seq), err)
	}
	if d.Seq != seq {
		return nil, fmt.Errorf("%s: %w (holds seq %d)", deltaName(seq), ErrDamaged, d.Seq)
	}
	return d, nil
}

// fileTimeCutoff is how old a temporary file must be before it counts as
// left behind by a dead writer.
func fileTimeCutoff() time.Time { return time.Now().Add(-10 * time.Minute) }
