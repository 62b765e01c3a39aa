package view

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cgcat/cgcat/local/search"
)

// A new base is published once this many deltas pile up after the current
// one, or their bytes reach a quarter of the base, at most maxDeltaBytes: a
// reader that starts then maps one base and decodes and indexes at most
// that much (about 1,700 records of a megabyte: tens of milliseconds), and
// a writer builds a base over the last one (only changed records are
// tokenised again: writeBase) after a good part of a small catalog, or a
// megabyte of a large one, changed.
const (
	maxDeltas     = 256
	minDeltaBytes = 64 << 10
	maxDeltaBytes = 1 << 20
)

func baseDue(p Pointer) bool {
	return p.Head-p.Base >= maxDeltas || p.DeltaBytes >= min(max(minDeltaBytes, p.BaseBytes/4), maxDeltaBytes)
}

// PublishDelta writes d as the delta after ptr's head and moves the
// pointer. The caller holds the store's write lock, so publications never
// race; it must have checked that ptr is the chain d continues (ptr.Head ==
// d.Seq-1, same store). It reports whether a new base is due; a delta too
// large for readers to read (maxDeltaFile) is not written, and a base is
// due instead.
func PublishDelta(dataDir string, ptr Pointer, d *Delta) (next Pointer, due bool, err error) {
	b, err := encodeDelta(d)
	if err != nil {
		return ptr, false, err
	}
	if len(b) > maxDeltaFile {
		return ptr, true, nil
	}
	dir := Dir(dataDir)
	if err := writeFile(dir, deltaName(d.Seq), b); err != nil {
		return ptr, false, fmt.Errorf("publish catalog change %d: %w", d.Seq, err)
	}
	next = Pointer{StoreID: d.StoreID, Base: ptr.Base, Head: d.Seq, Revision: d.Revision, DeltaBytes: ptr.DeltaBytes + int64(len(b)), BaseBytes: ptr.BaseBytes, Index: ptr.Index}
	if err := writePointer(dataDir, next); err != nil {
		return ptr, false, err
	}
	return next, baseDue(next), nil
}

// PublishBase writes s as a new base, moves the pointer to it, and removes
// what no reader needs any more: everything older than the previous base
// (a reader still on the previous base can catch up through its deltas;
// one further behind reads the new base), and a damage report the new base
// answers.
func PublishBase(dataDir string, s *Snapshot) (Pointer, error) {
	dir := Dir(dataDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Pointer{}, fmt.Errorf("publish catalog: %w", err)
	}
	prev, prevErr := readPointer(dataDir)
	hadPrev := prevErr == nil && prev.StoreID == s.StoreID
	var from *Base
	if hadPrev && prev.Index == search.Derivation() {
		ps, err := ReadBase(dataDir, prev.Base)
		if err != nil {
			// Damaged: the one before it is as good to build over.
			ps, _, err = previousBase(dataDir, prev)
		}
		if err == nil && !ps.Reindexed {
			from = ps.Base // the index is built over it
		}
	}
	write := func(w io.Writer) error { return writeBaseGuarded(w, s, from) }
	size, err := writeFileFunc(dir, baseName(s.Seq), write)
	if errors.Is(err, errFault) {
		// The previous base changed under its mapping while the index was
		// built over it: build from nothing.
		from = nil
		size, err = writeFileFunc(dir, baseName(s.Seq), write)
	}
	if err != nil {
		return Pointer{}, fmt.Errorf("publish catalog %d: %w", s.Seq, err)
	}
	ptr := Pointer{StoreID: s.StoreID, Base: s.Seq, Head: s.Seq, Revision: s.Revision, BaseBytes: size, Index: search.Derivation()}
	if err := writePointer(dataDir, ptr); err != nil {
		return Pointer{}, err
	}
	clearDamage(dataDir)
	keep := s.Seq
	if hadPrev && prev.Base < s.Seq {
		keep = prev.Base
	}
	removeBefore(dir, keep)
	return ptr, nil
}

// writeBaseGuarded is writeBase with a fault in from's mapping (its file
// truncated meanwhile) turned into errFault.
func writeBaseGuarded(w io.Writer, s *Snapshot, from *Base) (err error) {
	var m *mapping
	if from != nil {
		m = from.mapped
	}
	defer func() {
		if m != nil && m.faulted.Load() && err == nil {
			err = errFault
		}
	}()
	defer m.unguard(m.guard())
	err = writeBase(w, s, from)
	if err != nil && from != nil && from.Moved() {
		err = errFault
	}
	return err
}

func writePointer(dataDir string, p Pointer) error {
	if err := writeFile(dataDir, filepath.Base(PointerFile(dataDir)), []byte(p.String())); err != nil {
		return fmt.Errorf("publish catalog pointer: %w", err)
	}
	return nil
}

// removeBefore deletes published files older than seq, and leftover
// temporary files. Failures are ignored: on Windows a file a reader still
// has open cannot go yet; the next base retries.
func removeBefore(dir string, seq uint64) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		name := e.Name()
		if strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp-") {
			if fi, err := e.Info(); err == nil && fi.ModTime().Before(fileTimeCutoff()) {
				os.Remove(filepath.Join(dir, name))
			}
			continue
		}
		if n, ok := seqOf(name); ok && n < seq {
			os.Remove(filepath.Join(dir, name))
		}
	}
}

// seqOf parses base-<hex>.vN / delta-<hex>.vN (any format version).
func seqOf(name string) (uint64, bool) {
	var rest string
	switch {
	case strings.HasPrefix(name, "base-"):
		rest = name[len("base-"):]
	case strings.HasPrefix(name, "delta-"):
		rest = name[len("delta-"):]
	default:
		return 0, false
	}
	hex, _, ok := strings.Cut(rest, ".")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseUint(hex, 16, 64)
	return n, err == nil
}
