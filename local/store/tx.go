package store

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/ids"
	"github.com/cgcat/cgcat/local/pathid"
	"github.com/syndtr/goleveldb/leveldb"
	"github.com/syndtr/goleveldb/leveldb/comparer"
	"github.com/syndtr/goleveldb/leveldb/memdb"
	"github.com/syndtr/goleveldb/leveldb/util"
)

// Tx is one write batch over a snapshot. Reads see the snapshot plus what
// this Tx staged. What readers can see (records, scan state, the GBrain
// contact) is collected so the commit can publish exactly that.
type Tx struct {
	Reader
	batch  *leveldb.Batch
	staged map[string][]byte // nil value = deleted
	// order holds the staged keys in key order, so scan finds those under
	// a prefix without looking at every staged key: a scan slice stages
	// thousands of keys and asks for a prefix for each new record
	// (ProjectsWithDB), which was quadratic (0.4 s of a first pass over
	// 5,229 projects).
	order *memdb.DB
	rev   uint64

	changed map[string]*local.Project // records written, as written
	deleted map[string]bool           // records removed
	state   bool                      // scan state written
	gbrain  bool                      // GBrain contact written
	cards   map[string]*local.Card    // mirror cards written (nil: deleted)
}

func (tx *Tx) get(key string) ([]byte, error) {
	if v, ok := tx.staged[key]; ok {
		if v == nil {
			return nil, leveldb.ErrNotFound
		}
		return v, nil
	}
	return tx.Reader.get(key)
}

func (tx *Tx) put(key string, v []byte) {
	if v == nil {
		v = []byte{} // nil marks a deletion in staged
	}
	tx.batch.Put([]byte(key), v)
	tx.stage(key, v)
}

func (tx *Tx) del(key string) {
	tx.batch.Delete([]byte(key))
	tx.stage(key, nil)
}

// stage records v (nil: deleted) as key's value in this Tx.
func (tx *Tx) stage(key string, v []byte) {
	if _, ok := tx.staged[key]; !ok {
		if tx.order == nil {
			tx.order = memdb.New(comparer.DefaultComparer, 0)
		}
		_ = tx.order.Put([]byte(key), nil)
	}
	tx.staged[key] = v
}

// scan calls fn for the keys with prefix in key order, seeing this Tx's
// own writes, until fn returns false.
func (tx *Tx) scan(prefix string, fn func(key string, value []byte) bool) error {
	merged := map[string][]byte{}
	if err := tx.Reader.scan(prefix, func(k string, v []byte) bool {
		merged[k] = slices.Clone(v)
		return true
	}); err != nil {
		return err
	}
	if tx.order != nil {
		it := tx.order.NewIterator(util.BytesPrefix([]byte(prefix)))
		for it.Next() {
			k := string(it.Key())
			if v := tx.staged[k]; v == nil {
				delete(merged, k)
			} else {
				merged[k] = v
			}
		}
		it.Release()
	}
	keys := make([]string, 0, len(merged))
	for k := range merged {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !fn(k, merged[k]) {
			break
		}
	}
	return nil
}

// Project returns the record with id as staged in this Tx, or nil.
func (tx *Tx) Project(id string) (*local.Project, error) { return projectBy(tx.get, id) }

// ProjectByRoot returns the record bound to root as staged in this Tx.
func (tx *Tx) ProjectByRoot(root string) (*local.Project, error) { return projectAt(tx.get, root) }

// Forgotten reports whether id was forgotten here (DeleteProject), as
// staged.
func (tx *Tx) Forgotten(id string) (bool, error) { return forgotten(tx.get, id) }

// ProjectsWithDB returns the ids of records whose database had the file
// identity dbID, as staged.
func (tx *Tx) ProjectsWithDB(dbID string) ([]string, error) { return idsWithDB(tx, dbID) }

// ScanState is discovery's state as staged.
func (tx *Tx) ScanState() (local.ScanState, error) { return scanStateOf(tx.get) }

// GBrainContact is the last word from GBrain as staged.
func (tx *Tx) GBrainContact() local.GBrainContact { return gbrainOf(tx.get) }

// NextRevision is the catalogRevision this Tx will commit if it changes a record.
func (tx *Tx) NextRevision() uint64 { return tx.rev + 1 }

// Staged returns the record this batch wrote for id, without reading the
// store: ok is false when the batch did not write it (p is nil when it
// deleted it).
func (tx *Tx) Staged(id string) (p *local.Project, ok bool) {
	if p, ok := tx.changed[id]; ok {
		cp := *p
		return &cp, true
	}
	return nil, tx.deleted[id]
}

// Written returns copies of the records this batch wrote so far, in id
// order.
func (tx *Tx) Written() []*local.Project {
	out := make([]*local.Project, 0, len(tx.changed))
	for _, p := range tx.changed {
		cp := *p
		out = append(out, &cp)
	}
	slices.SortFunc(out, func(a, b *local.Project) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// CommitRevision is the catalogRevision the store holds once this batch,
// as staged so far, is committed.
func (tx *Tx) CommitRevision() uint64 {
	if len(tx.changed) > 0 || len(tx.deleted) > 0 {
		return tx.rev + 1
	}
	return tx.rev
}

// PutProject writes a record and its root binding. A root is bound to one id
// for ever; binding it to another id is refused. A new record, or a record
// whose recordRevision grew, queues its GBrain card in the same batch.
func (tx *Tx) PutProject(p *local.Project) error {
	if !ids.ValidProjectID(p.ID) {
		return fmt.Errorf("refusing to store a record with malformed id %q", p.ID)
	}
	rk := prefixRoot + pathid.Key(p.Root)
	if id, err := tx.get(rk); err == nil && string(id) != p.ID {
		return fmt.Errorf("root %s is already bound to %s, not %s", p.Root, id, p.ID)
	}
	old, err := tx.Project(p.ID)
	if err != nil {
		return err
	}
	if old != nil && old.Root != p.Root && pathid.Key(old.Root) != pathid.Key(p.Root) {
		return fmt.Errorf("record %s is bound to %s; a record never changes its root", p.ID, old.Root)
	}
	p.Changed = tx.rev + 1
	v, err := json.Marshal(p)
	if err != nil {
		return err
	}
	tx.put(prefixProj+p.ID, v)
	tx.put(rk, []byte(p.ID))
	if old != nil && old.DBID != p.DBID && old.DBID != "" {
		tx.del(prefixDBID + old.DBID + "/" + p.ID)
	}
	if p.DBID != "" {
		tx.put(prefixDBID+p.DBID+"/"+p.ID, nil)
	}
	// A card carries the stable metadata, the availability and movedTo
	// (what other machines see of a move): a change of any queues it.
	if old == nil || p.RecordRevision > old.RecordRevision || old.Availability != p.Availability || old.MovedTo != p.MovedTo {
		tx.EnqueueCard(p.ID, p.RecordRevision, false)
	}
	tx.noteRecord(p)
	return nil
}

// DeleteProject forgets a record: the record, its root binding and its
// database identity go, and its GBrain card is queued for retraction. The
// id then resolves as unknown, and is never given out again (Forgotten): a
// root found again later gets a new id, even while a card that names the
// old one is still mirrored somewhere.
func (tx *Tx) DeleteProject(id string) error {
	p, err := tx.Project(id)
	if err != nil || p == nil {
		return err
	}
	tx.del(prefixProj + id)
	if cur, err := tx.get(prefixRoot + pathid.Key(p.Root)); err == nil && string(cur) == id {
		tx.del(prefixRoot + pathid.Key(p.Root))
	}
	if p.DBID != "" {
		tx.del(prefixDBID + p.DBID + "/" + id)
	}
	tx.EnqueueCard(id, p.RecordRevision, true)
	tx.put(prefixGone+id, nil)
	if tx.deleted == nil {
		tx.deleted = map[string]bool{}
	}
	tx.deleted[id] = true
	delete(tx.changed, id)
	return nil
}

func (tx *Tx) noteRecord(p *local.Project) {
	if tx.changed == nil {
		tx.changed = map[string]*local.Project{}
	}
	cp := *p
	tx.changed[p.ID] = &cp
	delete(tx.deleted, p.ID)
}

// PutScanState writes discovery's state (package scan's).
func (tx *Tx) PutScanState(st local.ScanState) error {
	v, err := json.Marshal(st)
	if err != nil {
		return err
	}
	tx.put(keyScanState, v)
	tx.state = true
	return nil
}

// PutCard writes a mirrored GBrain card (package projection's mirror).
func (tx *Tx) PutCard(c *local.Card) error {
	if c.Slug == "" {
		return fmt.Errorf("refusing to mirror a card without a slug")
	}
	v, err := json.Marshal(c)
	if err != nil {
		return err
	}
	tx.put(prefixMirror+c.Slug, v)
	tx.noteCard(c.Slug, c)
	return nil
}

// DeleteCard removes a mirrored card (its page is gone from GBrain).
func (tx *Tx) DeleteCard(slug string) {
	tx.del(prefixMirror + slug)
	tx.noteCard(slug, nil)
}

func (tx *Tx) noteCard(slug string, c *local.Card) {
	if tx.cards == nil {
		tx.cards = map[string]*local.Card{}
	}
	if c != nil {
		cp := *c
		c = &cp
	}
	tx.cards[slug] = c
}

// Card returns the mirrored card at slug as staged, or nil.
func (tx *Tx) Card(slug string) (*local.Card, error) { return cardOf(tx.get, slug) }

// PutGBrainContact records the last word from GBrain.
func (tx *Tx) PutGBrainContact(c local.GBrainContact) {
	v, _ := json.Marshal(c)
	tx.put(keyGBrainSeen, v)
	tx.gbrain = true
}

// BumpFence starts a new fencing epoch for a lease name and returns it. Call
// it right after taking the lease.
func (tx *Tx) BumpFence(name string) uint64 {
	n := tx.Fence(name) + 1
	tx.put(prefixFence+name, U64(n))
	return n
}

// Fence returns the fencing number as staged in this Tx.
func (tx *Tx) Fence(name string) uint64 { v, _ := tx.get(prefixFence + name); return ReadU64(v) }

// CheckFence fails with ErrFenced when epoch is no longer the current one.
// Because the database is held exclusively for the whole Update, checking
// here and writing in the same batch cannot interleave with another holder.
func (tx *Tx) CheckFence(name string, epoch uint64) error {
	if cur := tx.Fence(name); cur != epoch {
		return fmt.Errorf("%w (%s epoch %d, ours %d)", ErrFenced, name, cur, epoch)
	}
	return nil
}
