package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/pathid"
	"github.com/syndtr/goleveldb/leveldb"
	"github.com/syndtr/goleveldb/leveldb/util"
)

// Reader reads one consistent snapshot.
type Reader struct {
	snap  *leveldb.Snapshot
	store *Store
}

func (r *Reader) get(key string) ([]byte, error) { return r.snap.Get([]byte(key), nil) }

// Revision is the catalogRevision of this snapshot.
func (r *Reader) Revision() uint64 { v, _ := r.get(keyRevision); return ReadU64(v) }

// StoreID names this database; it is new whenever the database is made anew.
func (r *Reader) StoreID() string { v, _ := r.get(keyStoreID); return string(v) }

// Project returns the record with id, or nil.
func (r *Reader) Project(id string) (*local.Project, error) { return projectBy(r.get, id) }

// Forgotten reports whether id was forgotten here (Tx.DeleteProject): such
// an id is never given to a record again.
func (r *Reader) Forgotten(id string) (bool, error) { return forgotten(r.get, id) }

func forgotten(get func(string) ([]byte, error), id string) (bool, error) {
	_, err := get(prefixGone + id)
	if errors.Is(err, leveldb.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// ProjectByRoot returns the record bound to the canonical root, or nil.
func (r *Reader) ProjectByRoot(root string) (*local.Project, error) { return projectAt(r.get, root) }

// projectBy and projectAt read a record through get, so a snapshot and a
// Tx (which also sees its own staged writes) share one decoding.
func projectBy(get func(string) ([]byte, error), id string) (*local.Project, error) {
	v, err := get(prefixProj + id)
	if errors.Is(err, leveldb.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return decodeProject(id, v)
}

func decodeProject(id string, v []byte) (*local.Project, error) {
	var p local.Project
	if err := json.Unmarshal(v, &p); err != nil {
		return nil, fmt.Errorf("record %s is unreadable: %w", id, err)
	}
	return &p, nil
}

func projectAt(get func(string) ([]byte, error), root string) (*local.Project, error) {
	id, err := get(prefixRoot + pathid.Key(root))
	if errors.Is(err, leveldb.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return projectBy(get, string(id))
}

// Projects calls fn for every record, in id order.
func (r *Reader) Projects(fn func(p *local.Project) error) error {
	it := r.snap.NewIterator(util.BytesPrefix([]byte(prefixProj)), nil)
	defer it.Release()
	for it.Next() {
		p, err := decodeProject(string(it.Key()), it.Value())
		if err != nil {
			return err
		}
		if err := fn(p); err != nil {
			return err
		}
	}
	return it.Error()
}

// ScanState is discovery's persisted state.
func (r *Reader) ScanState() (local.ScanState, error) { return scanStateOf(r.get) }

func scanStateOf(get func(string) ([]byte, error)) (local.ScanState, error) {
	var st local.ScanState
	v, err := get(keyScanState)
	if errors.Is(err, leveldb.ErrNotFound) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(v, &st); err != nil {
		return local.ScanState{}, fmt.Errorf("scan state is unreadable: %w", err)
	}
	return st, nil
}

// GBrainContact is the last word from GBrain.
func (r *Reader) GBrainContact() local.GBrainContact { return gbrainOf(r.get) }

func gbrainOf(get func(string) ([]byte, error)) local.GBrainContact {
	var c local.GBrainContact
	if v, err := get(keyGBrainSeen); err == nil {
		_ = json.Unmarshal(v, &c)
	}
	return c
}

// ProjectsWithDB returns the ids of records whose database had the file
// identity dbID.
func (r *Reader) ProjectsWithDB(dbID string) ([]string, error) { return idsWithDB(r, dbID) }

func idsWithDB(s Source, dbID string) ([]string, error) {
	if dbID == "" {
		return nil, nil
	}
	var ids []string
	p := prefixDBID + dbID + "/"
	err := s.scan(p, func(k string, _ []byte) bool { ids = append(ids, k[len(p):]); return true })
	return ids, err
}

// scan calls fn for the keys with prefix in key order until fn returns
// false.
func (r *Reader) scan(prefix string, fn func(key string, value []byte) bool) error {
	it := r.snap.NewIterator(util.BytesPrefix([]byte(prefix)), nil)
	defer it.Release()
	for it.Next() {
		if !fn(string(it.Key()), it.Value()) {
			break
		}
	}
	return it.Error()
}

// Fence returns the current fencing number of a lease name.
func (r *Reader) Fence(name string) uint64 { v, _ := r.get(prefixFence + name); return ReadU64(v) }

// Format is the format version the database was written with.
func (r *Reader) Format() int {
	v, _ := r.get(keyFormat)
	n, _ := strconv.Atoi(string(v))
	return n
}

// Card returns the mirrored card at slug, or nil.
func (r *Reader) Card(slug string) (*local.Card, error) { return cardOf(r.get, slug) }

func cardOf(get func(string) ([]byte, error), slug string) (*local.Card, error) {
	v, err := get(prefixMirror + slug)
	if errors.Is(err, leveldb.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	c := new(local.Card)
	if err := json.Unmarshal(v, c); err != nil {
		return nil, fmt.Errorf("mirrored card %s is unreadable: %w", slug, err)
	}
	return c, nil
}

// Cards calls fn for every mirrored card, in slug order. An unreadable row
// is skipped: the next mirror refresh writes it again.
func (r *Reader) Cards(fn func(c *local.Card) error) error {
	it := r.snap.NewIterator(util.BytesPrefix([]byte(prefixMirror)), nil)
	defer it.Release()
	for it.Next() {
		c := new(local.Card)
		if json.Unmarshal(it.Value(), c) != nil {
			continue
		}
		if err := fn(c); err != nil {
			return err
		}
	}
	return it.Error()
}
