package store

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/syndtr/goleveldb/leveldb"
)

// Typed doors. Each owner of a part of the key space (keys.go) reads and
// writes its rows through a door: a Table of rows keyed by an id, or a Row
// for a single value (and for package scan's walk, scanwalk.go: a Queue by
// sequence number and a Set of ids). The store builds every key; the owner names the Go
// type of its rows, whose encoding (JSON) goes with the door, so no package
// outside the store ever sees a key string or a raw value.
//
// Reads take a Source (a Reader or a Tx, which sees its own writes);
// writes take a Tx.

// ErrUnreadable marks a row that was read but cannot be decoded (as
// opposed to a failure to read the store).
var ErrUnreadable = errors.New("unreadable row")

// Source is a Reader or a Tx.
type Source interface {
	get(key string) ([]byte, error)
	scan(prefix string, fn func(key string, value []byte) bool) error
}

// lookup reads key (ok false when it is not there).
func lookup(src Source, key string) (v []byte, ok bool, err error) {
	v, err = src.get(key)
	if errors.Is(err, leveldb.ErrNotFound) {
		return nil, false, nil
	}
	return v, err == nil, err
}

// Table is an owner's rows of type T, keyed by an id within its space.
type Table[T any] struct{ prefix string }

// Row is an owner's single value of type T.
type Row[T any] struct{ key string }

// Get reads id's row (ok false when there is none).
func (t Table[T]) Get(src Source, id string) (v T, ok bool, err error) {
	return decodeAt[T](src, t.prefix+id)
}

// Put writes id's row.
func (t Table[T]) Put(tx *Tx, id string, v T) error { return encodeAt(tx, t.prefix+id, v) }

// Delete removes id's row.
func (t Table[T]) Delete(tx *Tx, id string) { tx.del(t.prefix + id) }

// Each calls fn for every row in id order until fn returns false. A row
// that cannot be decoded comes with its error (and T's zero value); fn
// decides whether to go on.
func (t Table[T]) Each(src Source, fn func(id string, v T, err error) bool) error {
	return src.scan(t.prefix, func(k string, b []byte) bool {
		var v T
		err := json.Unmarshal(b, &v)
		if err != nil {
			err = fmt.Errorf("%s%s: %w: %w", t.prefix, k[len(t.prefix):], ErrUnreadable, err)
		}
		return fn(k[len(t.prefix):], v, err)
	})
}

// IDs calls fn for every row's id in order until fn returns false, without
// decoding the rows.
func (t Table[T]) IDs(src Source, fn func(id string) bool) error {
	return src.scan(t.prefix, func(k string, _ []byte) bool { return fn(k[len(t.prefix):]) })
}

// Len counts the rows.
func (t Table[T]) Len(src Source) int {
	n := 0
	_ = src.scan(t.prefix, func(string, []byte) bool { n++; return true })
	return n
}

// Get reads the value (ok false when it was never written).
func (r Row[T]) Get(src Source) (v T, ok bool, err error) { return decodeAt[T](src, r.key) }

// Put writes the value.
func (r Row[T]) Put(tx *Tx, v T) error { return encodeAt(tx, r.key, v) }

func decodeAt[T any](src Source, key string) (v T, ok bool, err error) {
	b, err := src.get(key)
	if errors.Is(err, leveldb.ErrNotFound) {
		return v, false, nil
	}
	if err != nil {
		return v, false, err
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return v, false, fmt.Errorf("%s: %w: %w", key, ErrUnreadable, err)
	}
	return v, true, nil
}

func encodeAt[T any](tx *Tx, key string, v T) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", key, err)
	}
	tx.put(key, b)
	return nil
}
