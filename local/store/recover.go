package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/ids"
	"github.com/cgcat/cgcat/local/pathid"
	"github.com/cgcat/cgcat/local/view"
	"github.com/syndtr/goleveldb/leveldb"
	lerrors "github.com/syndtr/goleveldb/leveldb/errors"
	"github.com/syndtr/goleveldb/leveldb/journal"
	"github.com/syndtr/goleveldb/leveldb/opt"
	"github.com/syndtr/goleveldb/leveldb/storage"
	"github.com/syndtr/goleveldb/leveldb/table"
)

// RecoverReport says what a recovery salvaged.
type RecoverReport struct {
	Tables, TablesUnreadable     int
	Journals, JournalsUnreadable int
	// Records kept, and where the newest copy of each came from.
	Records, FromDatabase, FromViews int
	// Dropped counts records that could not be kept (unreadable, a root
	// claimed twice, an invalid id).
	Dropped int
	// Aside is where the damaged database was moved.
	Aside string
	// Healthy: the database read whole and consistent, so nothing was
	// rebuilt or moved aside.
	Healthy bool
	// Republished says why the published catalog was published again
	// ("" when it was whole).
	Republished string
}

// Recover rebuilds the data dir's database from everything readable: each
// table and journal on its own (a damaged block loses only that block), and
// the published views, which hold every record as of their last publication.
// Records keep their ids; root bindings and database identities are rebuilt
// from the records kept (never a binding without its record); fences, card
// state and pending cards of kept records stay; discovery starts a fresh
// pass. The result is verified to open and read end to end before it
// replaces the old database, which is kept aside, so a recovery never makes
// things worse.
func Recover(ctx context.Context, dataDir string) (RecoverReport, error) {
	var rep RecoverReport
	dbDir := DBDir(dataDir)
	stor, err := storage.OpenFile(dbDir, false)
	if err != nil {
		if isLocked(err) {
			return rep, fmt.Errorf("%w: %w", ErrRecoverBusy, err)
		}
		return rep, fmt.Errorf("recover catalog store %s: %w", dbDir, err)
	}
	healthy := sound(stor) == nil
	var kv map[string]entry
	if !healthy {
		kv, err = salvage(stor, &rep)
	}
	stor.Close()
	if err != nil {
		return rep, err
	}
	if healthy {
		return recoverViews(ctx, dataDir, rep)
	}
	fresh, err := os.MkdirTemp(dataDir, "catalog.db.recovered-")
	if err != nil {
		return rep, writeErr(dataDir, err)
	}
	defer os.RemoveAll(fresh)
	if err := rebuild(fresh, kv, viewRecords(dataDir), &rep); err != nil {
		return rep, writeErr(dataDir, fmt.Errorf("recover catalog store: %w", err))
	}
	if err := verify(fresh); err != nil {
		return rep, fmt.Errorf("recover catalog store: the rebuilt database does not read back (%w); the damaged one is left as it was", err)
	}
	rep.Aside = fmt.Sprintf("%s.damaged-%s", dbDir, time.Now().UTC().Format("20060102T150405.000000000Z"))
	if err := os.Rename(dbDir, rep.Aside); err != nil {
		return rep, writeErr(dataDir, fmt.Errorf("move the damaged catalog store aside: %w", err))
	}
	if err := os.Rename(fresh, dbDir); err != nil {
		_ = os.Rename(rep.Aside, dbDir)
		return rep, writeErr(dataDir, fmt.Errorf("put the recovered catalog store in place: %w", err))
	}
	syncDir(dataDir)
	// Publish the recovered catalog (a new store id: every reader reloads).
	_, err = Open(ctx, dataDir)
	return rep, err
}

// recoverViews is Recover for a database that reads whole: nothing is
// rebuilt, and the published catalog is published again if it is damaged.
func recoverViews(ctx context.Context, dataDir string, rep RecoverReport) (RecoverReport, error) {
	rep.Healthy = true
	why := ""
	if ptr, ok := view.ReadPointer(dataDir); !ok {
		why = "it was missing or unreadable"
	} else if vr := view.Verify(dataDir); len(vr.Problems) > 0 {
		why = strings.Join(vr.Problems, "; ")
		view.ReportDamage(dataDir, ptr, errors.New(why))
	}
	s, err := Open(ctx, dataDir) // republishes what ReportDamage (or the pointer) asks for
	if err != nil {
		return rep, err
	}
	err = s.View(ctx, func(r *Reader) error {
		return r.Projects(func(*local.Project) error { rep.Records++; rep.FromDatabase++; return nil })
	})
	rep.Republished = why
	return rep, err
}

// sound checks that the database opens and reads whole: every key (its
// blocks' checksums), every record decoded and bound to its root.
func sound(stor storage.Storage) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("reading it failed: %v", r)
		}
	}()
	db, err := leveldb.Open(stor, &opt.Options{ReadOnly: true, Strict: opt.StrictAll})
	if err != nil && !lerrors.IsCorrupted(err) {
		// Read-only recovery trips over journals a killed writer left; a
		// normal open replays them (Recover may write).
		db, err = leveldb.Open(stor, &opt.Options{Strict: opt.StrictAll})
	}
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.Get([]byte(keyFormat), nil); err != nil {
		return fmt.Errorf("format key: %w", err)
	}
	// Every key, so every block of every table is read (its checksum
	// checked), whatever it holds.
	it := db.NewIterator(nil, nil)
	defer it.Release()
	for it.Next() {
		id, ok := strings.CutPrefix(string(it.Key()), prefixProj)
		if !ok {
			continue
		}
		p, err := decodeProject(id, it.Value())
		if err != nil {
			return err
		}
		bound, err := db.Get([]byte(prefixRoot+pathid.Key(p.Root)), nil)
		if err != nil || string(bound) != id {
			return fmt.Errorf("record %s is not bound to its root", id)
		}
	}
	return it.Error()
}

// entry is the newest version of one key found anywhere.
type entry struct {
	seq   uint64
	value []byte // nil: deleted
}

func salvage(stor storage.Storage, rep *RecoverReport) (map[string]entry, error) {
	kv := map[string]entry{}
	keep := func(key []byte, seq uint64, del bool, value []byte) {
		k := string(key)
		if old, ok := kv[k]; ok && old.seq >= seq {
			return
		}
		e := entry{seq: seq}
		if !del {
			e.value = bytes.Clone(value)
			if e.value == nil {
				e.value = []byte{}
			}
		}
		kv[k] = e
	}
	tables, err := stor.List(storage.TypeTable)
	if err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	for _, fd := range tables {
		rep.Tables++
		if !readTable(stor, fd, keep) {
			rep.TablesUnreadable++
		}
	}
	journals, err := stor.List(storage.TypeJournal)
	if err != nil {
		return nil, fmt.Errorf("list journals: %w", err)
	}
	for _, fd := range journals {
		rep.Journals++
		if !readJournal(stor, fd, keep) {
			rep.JournalsUnreadable++
		}
	}
	return kv, nil
}

// readTable reads every intact block of one table. goleveldb panics on some
// malformed keys: a panic ends this table, keeping what was read.
func readTable(stor storage.Storage, fd storage.FileDesc, keep func([]byte, uint64, bool, []byte)) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	f, err := stor.Open(fd)
	if err != nil {
		return false
	}
	defer f.Close()
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return false
	}
	tr, err := table.NewReader(f, size, fd, nil, nil, &opt.Options{Strict: opt.StrictBlockChecksum})
	if err != nil {
		return false
	}
	defer tr.Release()
	it := tr.NewIterator(nil, nil)
	defer it.Release()
	for it.Next() {
		ik := it.Key()
		if len(ik) < 8 {
			ok = false
			continue
		}
		num := binary.LittleEndian.Uint64(ik[len(ik)-8:])
		kind := num & 0xff
		if kind > 1 {
			continue
		}
		keep(ik[:len(ik)-8], num>>8, kind == 0, it.Value())
	}
	return it.Error() == nil
}

// readJournal replays one journal's batches, skipping damaged chunks.
func readJournal(stor storage.Storage, fd storage.FileDesc, keep func([]byte, uint64, bool, []byte)) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	f, err := stor.Open(fd)
	if err != nil {
		return false
	}
	defer f.Close()
	ok = true
	jr := journal.NewReader(f, dropper{&ok}, false, true)
	for {
		r, err := jr.Next()
		if err == io.EOF {
			return ok
		}
		if err != nil {
			return false
		}
		data, err := io.ReadAll(r)
		if err != nil {
			ok = false
			continue
		}
		if !decodeBatch(data, keep) {
			ok = false
		}
	}
}

type dropper struct{ ok *bool }

func (d dropper) Drop(error) { *d.ok = false }

// decodeBatch reads a journal batch: sequence (8 bytes), count (4), then per
// record a type byte, a length-prefixed key and, for a put, a value.
func decodeBatch(data []byte, keep func([]byte, uint64, bool, []byte)) bool {
	if len(data) < 12 {
		return false
	}
	seq := binary.LittleEndian.Uint64(data)
	n := int(binary.LittleEndian.Uint32(data[8:]))
	data = data[12:]
	for i := 0; i < n; i++ {
		if len(data) < 1 {
			return false
		}
		kind := data[0]
		data = data[1:]
		kl, w := binary.Uvarint(data)
		if w <= 0 || uint64(len(data)-w) < kl {
			return false
		}
		key := data[w : w+int(kl)]
		data = data[w+int(kl):]
		var val []byte
		switch kind {
		case 1:
			vl, w := binary.Uvarint(data)
			if w <= 0 || uint64(len(data)-w) < vl {
				return false
			}
			val = data[w : w+int(vl)]
			data = data[w+int(vl):]
		case 0:
		default:
			return false
		}
		keep(key, seq+uint64(i), kind == 0, val)
	}
	return true
}

// viewRecords reads the newest published records (base and deltas) of the
// data dir, however far the chain can be read.
func viewRecords(dataDir string) map[string]*local.Project {
	ptr, ok := view.ReadPointer(dataDir)
	if !ok {
		return nil
	}
	s, err := view.ReadBase(dataDir, ptr.Base)
	if err != nil {
		return nil
	}
	recs := s.Projects()
	out := make(map[string]*local.Project, len(recs))
	for _, p := range recs {
		out[p.ID] = p
	}
	for seq := ptr.Base + 1; seq <= ptr.Head; seq++ {
		d, err := view.ReadDelta(dataDir, seq)
		if err != nil {
			break
		}
		for _, p := range d.Records {
			out[p.ID] = p
		}
		for _, id := range d.Deleted {
			delete(out, id)
		}
	}
	return out
}

// rebuild writes the recovered database into dir.
func rebuild(dir string, kv map[string]entry, published map[string]*local.Project, rep *RecoverReport) error {
	records := salvageRecords(kv, published, rep)
	b := new(leveldb.Batch)
	roots, rev := bindRoots(b, records, rep)
	rev = max(rev, keepOwnedRows(b, kv, records, roots))
	b.Put([]byte(keyFormat), []byte(strconv.Itoa(FormatVersion)))
	b.Put([]byte(keyStoreID), []byte(ids.NewStoreID()))
	b.Put([]byte(keyRevision), U64(rev+1))
	db, err := leveldb.OpenFile(dir, &dbOptions)
	if err != nil {
		return err
	}
	werr := db.Write(b, syncWrite)
	if cerr := db.Close(); werr == nil {
		werr = cerr
	}
	return werr
}

// salvageRecords is every readable record: the database's, or the
// published one where that is newer (and was neither deleted nor forgotten
// since it was published).
func salvageRecords(kv map[string]entry, published map[string]*local.Project, rep *RecoverReport) map[string]*local.Project {
	records := map[string]*local.Project{}
	for k, e := range kv {
		id, ok := strings.CutPrefix(k, prefixProj)
		if !ok || e.value == nil {
			continue
		}
		p, err := decodeProject(id, e.value)
		if err != nil || p.ID != id || !ids.ValidProjectID(id) || p.Root == "" {
			rep.Dropped++
			continue
		}
		records[id] = p
		rep.FromDatabase++
	}
	for id, p := range published {
		if e, ok := kv[prefixProj+id]; ok && e.value == nil {
			continue // deleted after the view was published
		}
		if e, ok := kv[prefixGone+id]; ok && e.value != nil {
			continue // forgotten after the view was published
		}
		if cur, ok := records[id]; ok && cur.Changed >= p.Changed {
			continue
		}
		if !ids.ValidProjectID(id) || p.Root == "" {
			continue
		}
		if _, ok := records[id]; ok {
			rep.FromDatabase--
		}
		records[id] = p
		rep.FromViews++
	}
	return records
}

// bindRoots writes the records and their root bindings into b, one record
// per root (the most recently changed keeps it); it returns the roots bound
// and the newest revision among the records.
func bindRoots(b *leveldb.Batch, records map[string]*local.Project, rep *RecoverReport) (roots map[string]bool, rev uint64) {
	order := make([]string, 0, len(records))
	for id := range records {
		order = append(order, id)
	}
	sort.Slice(order, func(i, j int) bool {
		a, b := records[order[i]], records[order[j]]
		if a.Changed != b.Changed {
			return a.Changed > b.Changed
		}
		return a.ID < b.ID
	})
	roots = map[string]bool{}
	for _, id := range order {
		p := records[id]
		rk := pathid.Key(p.Root)
		if roots[rk] {
			rep.Dropped++
			continue
		}
		roots[rk] = true
		rev = max(rev, p.Changed)
		v, _ := json.Marshal(p)
		b.Put([]byte(prefixProj+id), v)
		b.Put([]byte(prefixRoot+rk), []byte(id))
		if p.DBID != "" {
			b.Put([]byte(prefixDBID+p.DBID+"/"+id), nil)
		}
		rep.Records++
	}
	return roots, rev
}

// keepOwnedRows copies into b the other owners' rows that outlive a
// rebuild (fences, forgotten ids, projection state, the mirror, pending
// cards of surviving records and retractions); it returns the revision the
// old database had reached.
func keepOwnedRows(b *leveldb.Batch, kv map[string]entry, records map[string]*local.Project, roots map[string]bool) (rev uint64) {
	for k, e := range kv {
		if e.value == nil {
			continue
		}
		switch {
		case k == keyRevision:
			rev = max(rev, ReadU64(e.value))
		case k == keyLegacyID, k == keyLegacyKS, k == keyGBrainSeen,
			strings.HasPrefix(k, prefixFence), strings.HasPrefix(k, prefixGone),
			strings.HasPrefix(k, prefixProjection), strings.HasPrefix(k, prefixProjectionMeta),
			strings.HasPrefix(k, prefixMirror):
			b.Put([]byte(k), e.value)
		case strings.HasPrefix(k, prefixOutbox):
			// A pending card survives if its record did, or if it is a
			// retraction (its record is meant to be gone).
			var row OutboxRow
			if json.Unmarshal(e.value, &row) == nil && (roots[pathid.Key(rootOf(records, row.ProjectID))] || row.Retract) {
				b.Put([]byte(k), e.value)
			}
		}
	}
	return rev
}

func rootOf(records map[string]*local.Project, id string) string {
	if p := records[id]; p != nil {
		return p.Root
	}
	return "\x00none"
}

// verify opens dir and reads every key, decoding every record.
func verify(dir string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("reading it failed: %v", r)
		}
	}()
	db, err := leveldb.OpenFile(dir, &opt.Options{ReadOnly: true})
	if err != nil {
		return err
	}
	defer db.Close()
	it := db.NewIterator(nil, nil)
	defer it.Release()
	for it.Next() {
		k := string(it.Key())
		if id, ok := strings.CutPrefix(k, prefixProj); ok {
			if _, err := decodeProject(id, it.Value()); err != nil {
				return err
			}
		}
	}
	if err := it.Error(); err != nil {
		return err
	}
	if _, err := db.Get([]byte(keyFormat), nil); err != nil {
		return errors.New("format key missing")
	}
	return nil
}
