package store

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
)

// Package scan's doors: its persisted walk (a queue of directories waiting
// to be read, with the next sequence number to give out) and the records
// seen in the running pass. The rows are what releases before the doors
// wrote, byte for byte, so a pass persisted by one resumes under the next.

// ScanItem is one directory waiting in the scan's walk queue.
type ScanItem struct {
	Path  string `json:"p"`
	Depth int    `json:"d"`
}

// Queue is an owner's queue of rows of type T, each at a sequence number
// the owner gives out (rows come back in sequence order), with the next
// number to give out kept beside them.
type Queue[T any] struct{ prefix, nextKey string }

// ScanQueue is the door to package scan's walk queue: scan/q/<seq> (8
// big-endian bytes, so they sort) → ScanItem as JSON, and scan/qseq, the
// next sequence number (U64).
var ScanQueue = Queue[ScanItem]{prefix: prefixScanQueue, nextKey: keyScanQueueSeq}

// ScanSeen is the door to the ids of the records package scan saw in the
// running pass: scan/seen/<id> → "".
var ScanSeen = Set{prefix: prefixScanSeen}

func (q Queue[T]) key(seq uint64) string {
	return string(binary.BigEndian.AppendUint64([]byte(q.prefix), seq))
}

// Put writes the row at seq.
func (q Queue[T]) Put(tx *Tx, seq uint64, v T) error { return encodeAt(tx, q.key(seq), v) }

// Delete removes the row at seq.
func (q Queue[T]) Delete(tx *Tx, seq uint64) { tx.del(q.key(seq)) }

// Each calls fn for every row in sequence order until fn returns false. A
// row that cannot be decoded comes with its error (and T's zero value); fn
// decides what to do with it. A key that holds no sequence number (never
// written by any release) is passed over; Clear removes it.
func (q Queue[T]) Each(src Source, fn func(seq uint64, v T, err error) bool) error {
	return src.scan(q.prefix, func(k string, b []byte) bool {
		if len(k) != len(q.prefix)+8 {
			return true
		}
		seq := binary.BigEndian.Uint64([]byte(k[len(q.prefix):]))
		var v T
		err := json.Unmarshal(b, &v)
		if err != nil {
			err = fmt.Errorf("%s%d: %w: %w", q.prefix, seq, ErrUnreadable, err)
		}
		return fn(seq, v, err)
	})
}

// Clear removes every row (the next sequence number stays).
func (q Queue[T]) Clear(tx *Tx) error { return clearPrefix(tx, q.prefix) }

// Next is the next sequence number to give out, as staged (0 when none
// was ever written, or what is there is not a number).
func (q Queue[T]) Next(src Source) (uint64, error) {
	v, ok, err := lookup(src, q.nextKey)
	if !ok {
		return 0, err
	}
	return ReadU64(v), nil
}

// SetNext writes the next sequence number to give out.
func (q Queue[T]) SetNext(tx *Tx, n uint64) { tx.put(q.nextKey, U64(n)) }

// Set is an owner's set of ids (their rows hold nothing).
type Set struct{ prefix string }

// Add puts id in the set.
func (s Set) Add(tx *Tx, id string) { tx.put(s.prefix+id, nil) }

// IDs calls fn for every id in order until fn returns false.
func (s Set) IDs(src Source, fn func(id string) bool) error {
	return src.scan(s.prefix, func(k string, _ []byte) bool { return fn(k[len(s.prefix):]) })
}

// Clear empties the set.
func (s Set) Clear(tx *Tx) error { return clearPrefix(tx, s.prefix) }

// clearPrefix deletes every key under prefix, as staged.
func clearPrefix(tx *Tx, prefix string) error {
	var keys []string
	if err := tx.scan(prefix, func(k string, _ []byte) bool { keys = append(keys, k); return true }); err != nil {
		return err
	}
	for _, k := range keys {
		tx.del(k)
	}
	return nil
}
