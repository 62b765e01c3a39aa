package scan

import (
	"slices"
	"strings"
	"time"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/pathid"
	"github.com/cgcat/cgcat/local/store"
	"github.com/zeebo/xxh3"
)

// known is what the scanner knows of one record without reading it: enough
// to tell a re-seen project whose record would be written unchanged, and to
// end a pass without decoding every record. Entries are replaced, never
// changed in place: the walk reads them while a commit replaces them.
type known struct {
	id, root  string
	avail     local.Availability
	state     local.IndexState
	why       string
	movedTo   string
	missing   bool // MissingSince is set
	stamp     uint64
	dbID      string
	lineage   uint64
	repo      string
	firstSeen time.Time
}

func knownOf(p *local.Project) *known {
	return &known{
		id: p.ID, root: p.Root, avail: p.Availability, state: p.IndexState, why: p.Why,
		movedTo: p.MovedTo, missing: !p.MissingSince.IsZero(), stamp: p.MetaStamp, dbID: p.DBID,
		lineage: lineageHash(p.Lineage), repo: repoKey(p), firstSeen: p.FirstSeen,
	}
}

// settled reports whether upsert would leave k's record as it is for f: a
// present record with nothing to say, seen again with the same metadata
// stamp (so its metadata was not read again), database and lineage.
func (k *known) settled(f *found) bool {
	return k.avail == local.Present && k.state == local.MarkerPresent && k.why == "" && k.movedTo == "" && !k.missing &&
		f.meta == nil && f.stamp != 0 && k.stamp == f.stamp && k.dbID == f.dbID && k.lineage == lineageHash(f.lineage)
}

// metaStamp is the stamp that spares a re-read of k's metadata (0: none).
func (k *known) metaStamp() uint64 {
	if k == nil || k.avail != local.Present {
		return 0
	}
	return k.stamp
}

func lineageHash(ids []string) uint64 {
	return xxh3.HashString(strings.Join(ids, "/"))
}

// knownSet is the known records of one catalog revision: it is trusted in a
// commit only while the store is still at that revision (of that store), so
// a record another process changed or forgot (`cgcat forget`) is never
// judged by a stale copy: the set is read again instead.
type knownSet struct {
	byRoot  map[string]*known // by pathid.Key(root)
	byID    map[string]*known
	storeID string
	rev     uint64
}

// readKnown reads the known records from r: from recordsAt when it has
// the records of exactly r's store and revision (a serve's published
// catalog, decoded far faster than the store's JSON), else from r.
func readKnown(r *store.Reader, recordsAt RecordsAt) (*knownSet, error) {
	storeID, rev := r.StoreID(), r.Revision()
	if recordsAt != nil {
		ks := &knownSet{byRoot: map[string]*known{}, byID: map[string]*known{}, storeID: storeID, rev: rev}
		if recordsAt(storeID, rev, func(p *local.Project) { ks.put(knownOf(p)) }) {
			return ks, nil
		}
	}
	ks := &knownSet{byRoot: map[string]*known{}, byID: map[string]*known{}, storeID: storeID, rev: rev}
	err := r.Projects(func(p *local.Project) error {
		ks.put(knownOf(p))
		return nil
	})
	return ks, err
}

// RecordsAt calls fn for every record of the store storeID as of catalog
// revision rev and reports true, or reports false without calling fn when
// it does not hold exactly those records.
type RecordsAt func(storeID string, rev uint64, fn func(*local.Project)) bool

func (ks *knownSet) put(k *known) {
	ks.byRoot[pathid.Key(k.root)] = k
	ks.byID[k.id] = k
}

// current reports whether ks describes the records tx reads.
func (ks *knownSet) current(tx *store.Tx) bool {
	return ks != nil && ks.rev == tx.Revision() && ks.storeID == tx.StoreID()
}

// lookup returns what is known of the record of root key (s.mu held or
// not: it takes it).
func (s *Scanner) lookup(key string) *known {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.known == nil {
		return nil
	}
	return s.known.byRoot[key]
}

// ensureKnown makes s.known describe what tx reads, reading every record
// again when another writer changed records since.
func (s *Scanner) ensureKnown(tx *store.Tx) error {
	s.mu.Lock()
	ok := s.known.current(tx)
	s.mu.Unlock()
	if ok {
		return nil
	}
	ks, err := readKnown(&tx.Reader, s.opt.RecordsAt)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.known = ks
	s.mu.Unlock()
	return nil
}

// noteWritten brings s.known up to the records a committed batch wrote and
// the revision it committed.
func (s *Scanner) noteWritten(written []*local.Project, rev uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.known == nil {
		return
	}
	for _, p := range written {
		s.known.put(knownOf(p))
	}
	s.known.rev = rev
}

// records is every known record with this batch's writes over it, in id
// order.
func (s *Scanner) records(tx *store.Tx) []*known {
	staged := map[string]*known{}
	for _, p := range tx.Written() {
		staged[p.ID] = knownOf(p)
	}
	s.mu.Lock()
	out := make([]*known, 0, len(s.known.byID)+len(staged))
	for id, k := range s.known.byID {
		if sk := staged[id]; sk != nil {
			k = sk
			delete(staged, id)
		}
		out = append(out, k)
	}
	s.mu.Unlock()
	for _, k := range staged {
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b *known) int { return strings.Compare(a.id, b.id) })
	return out
}
