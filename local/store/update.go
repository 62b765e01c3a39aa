package store

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/ids"
	"github.com/cgcat/cgcat/local/view"
	"github.com/syndtr/goleveldb/leveldb"
	"github.com/syndtr/goleveldb/leveldb/opt"
)

var syncWrite = &opt.WriteOptions{Sync: true}

// View runs fn against a consistent snapshot of the database. It waits for
// the database like a writer: answers to agents never call it (they read the
// published views); doctor, status and the writers' own preparations do.
func (s *Store) View(ctx context.Context, fn func(r *Reader) error) error {
	return s.view(ctx, s.Wait, fn)
}

func (s *Store) view(ctx context.Context, wait time.Duration, fn func(r *Reader) error) (err error) {
	db, err := s.openDB(ctx, true, wait)
	if err != nil {
		return err
	}
	defer db.Close()
	defer func() {
		if r := recover(); r != nil {
			err = s.panicErr(r)
		}
	}()
	snap, err := db.GetSnapshot()
	if err != nil {
		return s.wrap(err)
	}
	defer snap.Release()
	return s.wrap(fn(&Reader{snap: snap, store: s}))
}

// Update runs fn and commits what it wrote in one synced batch, then
// publishes what readers can see of it. A change to records grows
// catalogRevision by one.
func (s *Store) Update(ctx context.Context, fn func(tx *Tx) error) error {
	return s.update(ctx, s.Wait, fn)
}

func (s *Store) update(ctx context.Context, wait time.Duration, fn func(tx *Tx) error) (err error) {
	db, err := s.openDB(ctx, false, wait)
	if err != nil {
		return writeErr(s.dataDir, err)
	}
	s.markWriter()
	defer s.unmarkWriter()
	defer db.Close()
	defer func() {
		if r := recover(); r != nil {
			err = s.panicErr(r)
		}
	}()
	snap, err := db.GetSnapshot()
	if err != nil {
		return s.wrap(err)
	}
	defer snap.Release()
	tx := &Tx{Reader: Reader{snap: snap, store: s}, batch: new(leveldb.Batch), staged: map[string][]byte{}}
	tx.rev = tx.Revision()
	if err := fn(tx); err != nil {
		return s.wrap(err)
	}
	storeID := tx.StoreID()
	if storeID == "" {
		// A store of an older release: give it an identity now.
		storeID = ids.NewStoreID()
		tx.put(keyStoreID, []byte(storeID))
	}
	if len(tx.changed) > 0 || len(tx.deleted) > 0 {
		tx.rev++
		tx.put(keyRevision, U64(tx.rev))
	}
	seq, _, _ := lookup(tx, keyViewSeq)
	nextSeq := ReadU64(seq)
	visible := len(tx.changed) > 0 || len(tx.deleted) > 0 || tx.state || tx.gbrain || len(tx.cards) > 0
	if visible {
		nextSeq++
		tx.put(keyViewSeq, U64(nextSeq))
	}
	if tx.batch.Len() > 0 {
		if err := db.Write(tx.batch, syncWrite); err != nil {
			return writeErr(s.dataDir, s.wrap(fmt.Errorf("write catalog store: %w", err)))
		}
	}
	// Published after the commit, under the same lock, so publications
	// follow commits in order. A failure here loses nothing: the next
	// writer (or Open) sees the chain behind the database and republishes,
	// and readers answer from the database meanwhile.
	if err := s.publish(db, tx, storeID, nextSeq, visible); err != nil {
		return &PublishError{Dir: s.dataDir, Committed: tx.batch.Len() > 0, Err: writeErr(s.dataDir, err)}
	}
	return nil
}

// publish writes this commit's delta when the published chain ends just
// before it, and a whole new base when it does not (first publication, a
// writer that died before publishing, another store before) or when enough
// deltas piled up.
//
// A chain a reader found damaged (or one with a file missing or cut short,
// or an index of another tokenizer) is not continued: a whole base is
// published, even by a commit that changed nothing readers see.
func (s *Store) publish(db *leveldb.DB, tx *Tx, storeID string, seq uint64, visible bool) error {
	ptr, ok := view.ReadPointer(s.dataDir)
	chained := ok && ptr.StoreID == storeID && view.NeedsBase(s.dataDir, ptr) == ""
	switch {
	case chained && ptr.Head == seq:
		return nil // already published
	case chained && visible && ptr.Head == seq-1:
		st, err := tx.ScanState()
		if err != nil {
			return err
		}
		d := &view.Delta{StoreID: storeID, Seq: seq, Revision: tx.rev, State: st, GBrain: tx.GBrainContact()}
		for _, id := range slices.Sorted(maps.Keys(tx.changed)) {
			d.Records = append(d.Records, tx.changed[id])
		}
		d.Deleted = slices.Sorted(maps.Keys(tx.deleted))
		for _, slug := range slices.Sorted(maps.Keys(tx.cards)) {
			if c := tx.cards[slug]; c != nil {
				d.Cards = append(d.Cards, c)
			} else {
				d.DeletedCards = append(d.DeletedCards, slug)
			}
		}
		_, due, err := view.PublishDelta(s.dataDir, ptr, d)
		if err != nil || !due {
			return err
		}
	}
	return s.publishBase(db, storeID, seq)
}

// publishBase publishes everything the database holds now.
func (s *Store) publishBase(db *leveldb.DB, storeID string, seq uint64) error {
	snap, err := db.GetSnapshot()
	if err != nil {
		return s.wrap(err)
	}
	defer snap.Release()
	vs, err := s.snapshotOf(&Reader{snap: snap, store: s}, storeID, seq)
	if err != nil {
		return err
	}
	_, err = view.PublishBase(s.dataDir, vs)
	return err
}

// snapshotOf is the whole catalog as r reads it, as published at seq.
func (s *Store) snapshotOf(r *Reader, storeID string, seq uint64) (*view.Snapshot, error) {
	st, err := r.ScanState()
	if err != nil {
		return nil, err
	}
	vs := &view.Snapshot{StoreID: storeID, MachineID: s.id.MachineID, Seq: seq, Revision: r.Revision(), State: st, GBrain: r.GBrainContact()}
	if err := r.Projects(func(p *local.Project) error { vs.Records = append(vs.Records, p); return nil }); err != nil {
		return nil, s.wrap(err)
	}
	if err := r.Cards(func(c *local.Card) error { vs.Cards = append(vs.Cards, c); return nil }); err != nil {
		return nil, s.wrap(err)
	}
	if err := r.scan(prefixGone, func(k string, _ []byte) bool {
		vs.Forgotten = append(vs.Forgotten, strings.TrimPrefix(k, prefixGone))
		return true
	}); err != nil {
		return nil, s.wrap(err)
	}
	return vs, nil
}
