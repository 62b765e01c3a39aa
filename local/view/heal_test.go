package view

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/search"
	"github.com/zeebo/xxh3"
)

// chain publishes a base of n records at seq 1, deltas adding one record
// each up to seq 1+k, a second base at that seq, and m more deltas: the
// records it publishes in the end, by id.
type chain struct {
	dir     string
	ptr     Pointer
	records map[string]*local.Project
}

func newChain(t *testing.T, n, k, m int) *chain {
	t.Helper()
	c := &chain{dir: t.TempDir(), records: map[string]*local.Project{}}
	recs := synthRecords(n, rand.New(rand.NewPCG(21, 22)))
	for _, p := range recs {
		c.records[p.ID] = p
	}
	var err error
	if c.ptr, err = PublishBase(c.dir, &Snapshot{StoreID: "s_a", Seq: 1, Records: c.all()}); err != nil {
		t.Fatal(err)
	}
	seq := uint64(1)
	step := func() {
		seq++
		p := rec(fmt.Sprintf("p_d%03d", seq), fmt.Sprintf("/code/delta/%d", seq))
		c.records[p.ID] = p
		if c.ptr, _, err = PublishDelta(c.dir, c.ptr, &Delta{StoreID: "s_a", Seq: seq, Revision: seq, Records: []*local.Project{p}}); err != nil {
			t.Fatal(err)
		}
	}
	for range k {
		step()
	}
	if k > 0 {
		if c.ptr, err = PublishBase(c.dir, &Snapshot{StoreID: "s_a", Seq: seq, Revision: seq, Records: c.all()}); err != nil {
			t.Fatal(err)
		}
	}
	for range m {
		step()
	}
	return c
}

func (c *chain) all() []*local.Project {
	var out []*local.Project
	for _, p := range c.records {
		out = append(out, p)
	}
	return out
}

// ids follows u from nothing: the ids a reader of it holds.
func ids(u Update) []string {
	set := map[string]bool{}
	if u.Snapshot != nil {
		for _, p := range u.Snapshot.Projects() {
			set[p.ID] = true
		}
	}
	for _, d := range u.Deltas {
		for _, p := range d.Records {
			set[p.ID] = true
		}
		for _, id := range d.Deleted {
			delete(set, id)
		}
	}
	out := make([]string, 0, len(set))
	for id := range set {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

func (c *chain) ids() []string {
	out := make([]string, 0, len(c.records))
	for id := range c.records {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// fromStore is a fallback that reads "the store": the chain's records.
func (c *chain) fromStore(calls *int) func() (*Snapshot, error) {
	return func() (*Snapshot, error) {
		*calls++
		return &Snapshot{StoreID: c.ptr.StoreID, Seq: c.ptr.Head, Revision: c.ptr.Revision, Records: c.all()}, nil
	}
}

// The newest base truncated, emptied or deleted: a reader that starts then
// answers from the previous base and the deltas after it (all there), and
// leaves a report that makes the next writer publish a whole base.
func TestDamagedBaseFallsBackToThePreviousOne(t *testing.T) {
	for name, damage := range map[string]func(string) error{
		"truncated": func(p string) error { return os.Truncate(p, 100) },
		"emptied":   func(p string) error { return os.Truncate(p, 0) },
		"deleted":   os.Remove,
	} {
		t.Run(name, func(t *testing.T) {
			c := newChain(t, 40, 5, 3)
			if why := NeedsBase(c.dir, c.ptr); why != "" {
				t.Fatalf("a whole chain needs a base: %s", why)
			}
			if err := damage(filepath.Join(Dir(c.dir), baseName(c.ptr.Base))); err != nil {
				t.Fatal(err)
			}
			u, err := NewFollower(c.dir).Next()
			if err != nil {
				t.Fatalf("a reader of a chain whose base is %s: %v", name, err)
			}
			if got, want := ids(u), c.ids(); !slices.Equal(got, want) {
				t.Fatalf("records: got %d, want %d", len(got), len(want))
			}
			if why := NeedsBase(c.dir, c.ptr); why == "" {
				t.Fatal("the writer's check does not see the damage")
			}
			// The next writer publishes a base; then all is well again.
			ptr, err := PublishBase(c.dir, &Snapshot{StoreID: "s_a", Seq: c.ptr.Head, Revision: c.ptr.Revision, Records: c.all()})
			if err != nil {
				t.Fatal(err)
			}
			if why := NeedsBase(c.dir, ptr); why != "" {
				t.Fatalf("after a new base: %s", why)
			}
			if r := Verify(c.dir); len(r.Problems) > 0 || r.Records != len(c.records) {
				t.Fatalf("verify after a new base: %+v", r)
			}
		})
	}
}

// A delta cut short or garbled (the delta after the base is needed by
// every reader) cannot be read around: a reader answers from the store,
// and without a store to read says what is wrong.
func TestDamagedDeltaFallsBackToTheStore(t *testing.T) {
	for name, damage := range map[string]func(string) error{
		"emptied":  func(p string) error { return os.Truncate(p, 0) },
		"garbled":  func(p string) error { return flipByte(p, 20) },
		"deleted":  os.Remove,
		"a FIFO":   func(p string) error { os.Remove(p); return mkfifo(p) },
		"too long": func(p string) error { return os.Truncate(p, maxDeltaFile+1) },
	} {
		t.Run(name, func(t *testing.T) {
			c := newChain(t, 30, 0, 4)
			if err := damage(filepath.Join(Dir(c.dir), deltaName(c.ptr.Head-1))); err != nil {
				t.Fatal(err)
			}
			if _, err := NewFollower(c.dir).Next(); err == nil {
				t.Fatal("a damaged delta was read")
			}
			calls := 0
			f := NewFollower(c.dir)
			f.SetFallback(c.fromStore(&calls))
			u, err := f.Next()
			if err != nil || calls != 1 || u.Snapshot == nil {
				t.Fatalf("with a store to read: %v (%d reads)", err, calls)
			}
			if got, want := ids(u), c.ids(); !slices.Equal(got, want) {
				t.Fatalf("records: got %d, want %d", len(got), len(want))
			}
			if f.Healed() == nil {
				t.Fatal("the follower does not say what it worked around")
			}
			// Nothing new: the store is not read again on every call.
			if f.Changed() {
				if u, err := f.Next(); err != nil || !u.Empty() {
					t.Fatalf("nothing new: %+v %v", u, err)
				}
			}
			if calls != 1 {
				t.Fatalf("the store was read %d times for one damage", calls)
			}
			if why := NeedsBase(c.dir, c.ptr); why == "" {
				t.Fatal("the writer's check does not see the damage")
			}
		})
	}
}

func flipByte(path string, at int) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	b[at%len(b)] ^= 0x5a
	return os.WriteFile(path, b, 0o644)
}

// A base truncated under a reader that maps it: every read of the lost
// pages would be SIGBUS, killing the process. The reader answers nothing
// from it instead of dying, knows the base moved, and its next Next reads
// what is published again (here: the previous base is gone too, so the
// store).
func TestTruncatedMappedBaseNeverCrashes(t *testing.T) {
	if readNotMap {
		t.Skip("bases are read here, not mapped")
	}
	c := newChain(t, 3000, 0, 0)
	calls := 0
	f := NewFollower(c.dir)
	f.SetFallback(c.fromStore(&calls))
	u, err := f.Next()
	if err != nil || u.Snapshot == nil || u.Snapshot.Base.mapped == nil {
		t.Fatalf("first read (mapped): %v", err)
	}
	b := u.Snapshot.Base
	ix := search.NewOver(b.Index())
	if hits, _ := ix.SearchTop("order gateway", nil, 10); len(hits) == 0 {
		t.Fatal("fixture: no hits")
	}
	if f.Changed() && !f.seen.Load().racy {
		t.Fatal("nothing changed, yet Changed")
	}
	if err := os.Truncate(filepath.Join(Dir(c.dir), baseName(c.ptr.Base)), 0); err != nil {
		t.Fatal(err)
	}
	// Each of these reads pages that no longer exist.
	_ = b.Record(uint32(b.Len() - 1))
	_ = b.RecordLite(7)
	_, _ = b.Slot("p_000001")
	_ = b.ID(5)
	_ = b.Availability(9)
	_ = b.Root(11)
	_, _ = b.RootSlot("/code/x")
	_, _ = ix.SearchTop("order gateway", nil, 10)
	_ = ix.List(nil)
	_ = ix.Suggest("gatway", nil, 3)
	ix.Delete(b.ID(3))
	if !b.Moved() {
		t.Fatal("the truncated base is not seen as moved")
	}
	if !f.Changed() {
		t.Fatal("the follower does not see its base changed")
	}
	u, err = f.Next()
	if err != nil || u.Snapshot == nil || calls != 1 {
		t.Fatalf("after the truncation: %v (%d store reads)", err, calls)
	}
	if got, want := ids(u), c.ids(); !slices.Equal(got, want) {
		t.Fatalf("records: got %d, want %d", len(got), len(want))
	}
}

// A base overwritten in place (cp or rsync --inplace restoring another
// data dir's views over this one's): a mapping shows the new bytes at
// once, unchecked. The follower sees the file change and reads it again,
// checked — it holds another store, so it is refused and the store read.
func TestBaseOverwrittenInPlaceIsSeen(t *testing.T) {
	c := newChain(t, 20, 0, 0)
	other := t.TempDir()
	if _, err := PublishBase(other, &Snapshot{StoreID: "s_other", Seq: 1, Records: synthRecords(15, rand.New(rand.NewPCG(1, 1)))}); err != nil {
		t.Fatal(err)
	}
	calls := 0
	f := NewFollower(c.dir)
	f.SetFallback(c.fromStore(&calls))
	if _, err := f.Next(); err != nil {
		t.Fatal(err)
	}
	backup, err := os.ReadFile(filepath.Join(Dir(other), baseName(1)))
	if err != nil {
		t.Fatal(err)
	}
	// os.WriteFile truncates and writes the same inode, as cp does.
	if err := os.WriteFile(filepath.Join(Dir(c.dir), baseName(1)), backup, 0o644); err != nil {
		t.Fatal(err)
	}
	if !f.Changed() {
		t.Fatal("a base overwritten in place is not noticed")
	}
	u, err := f.Next()
	if err != nil || u.Snapshot == nil {
		t.Fatalf("after the overwrite: %+v %v", u, err)
	}
	if got, want := ids(u), c.ids(); !slices.Equal(got, want) {
		t.Fatalf("records after the overwrite: got %d, want %d (the other store's base served?)", len(got), len(want))
	}
}

// The pointer is opened without blocking and read bounded: a FIFO, a
// symlink to /dev/zero, or a huge file are refused at once.
func TestPointerHostileFiles(t *testing.T) {
	for name, create := range map[string]func(string) error{
		"FIFO":              func(p string) error { return mkfifo(p) },
		"symlink /dev/zero": func(p string) error { return os.Symlink("/dev/zero", p) },
		"1 GiB sparse":      func(p string) error { return os.WriteFile(p, nil, 0o644) },
		"a directory":       func(p string) error { return os.Mkdir(p, 0o755) },
	} {
		t.Run(name, func(t *testing.T) {
			c := newChain(t, 5, 0, 1)
			p := PointerFile(c.dir)
			os.Remove(p)
			if err := create(p); err != nil {
				t.Fatal(err)
			}
			if name == "1 GiB sparse" {
				if err := os.Truncate(p, 1<<30); err != nil {
					t.Fatal(err)
				}
			}
			done := make(chan error, 1)
			go func() {
				_, err := readPointer(c.dir)
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil {
					t.Fatal("read as a pointer")
				}
			case <-time.After(time.Minute):
				t.Fatal("reading the pointer blocks")
			}
			calls := 0
			f := NewFollower(c.dir)
			f.SetFallback(c.fromStore(&calls))
			if u, err := f.Next(); err != nil || !slices.Equal(ids(u), c.ids()) {
				t.Fatalf("a reader answers from the store: %v", err)
			}
		})
	}
}

// A pointer written by a newer cgcat says so (the reader is outdated); one
// of an older format is as good as none; neither is misread.
func TestPointerOfAnotherFormat(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(PointerFile(dir), []byte(fmt.Sprintf("cgview %d s_a 1 1 1 0 100 1\n", Format+1)), 0o644)
	if _, err := readPointer(dir); !errors.Is(err, ErrOutdated) {
		t.Fatalf("newer: %v", err)
	}
	if r := Verify(dir); !r.Outdated {
		t.Fatalf("verify of a newer format: %+v", r)
	}
	os.WriteFile(PointerFile(dir), []byte("cgview 2 s_a 1 1 1 0 100\n"), 0o644)
	if _, err := readPointer(dir); !errors.Is(err, ErrNoView) {
		t.Fatalf("older: %v", err)
	}
}

// A pointer naming billions of deltas is refused rather than followed.
func TestPointerChainBounded(t *testing.T) {
	c := newChain(t, 5, 0, 0)
	p := c.ptr
	p.Head = p.Base + 1<<40
	os.WriteFile(PointerFile(c.dir), []byte(p.String()), 0o644)
	if _, err := readPointer(c.dir); !errors.Is(err, ErrDamaged) {
		t.Fatalf("want ErrDamaged, got %v", err)
	}
}

// Publications are durable in the order a power cut needs: the delta's
// data, its name (the directory), then the pointer's data and name.
func TestPublicationOrder(t *testing.T) {
	c := newChain(t, 3, 0, 0)
	var trace []string
	syncTrace = func(op, path string) {
		trace = append(trace, op+" "+strings.SplitN(filepath.Base(path), ".tmp-", 2)[0])
	}
	defer func() { syncTrace = nil }()
	if _, _, err := PublishDelta(c.dir, c.ptr, &Delta{StoreID: "s_a", Seq: c.ptr.Head + 1, Records: []*local.Project{rec("z", "/c/z")}}); err != nil {
		t.Fatal(err)
	}
	d := "." + deltaName(c.ptr.Head+1)
	want := []string{"fsync " + d, "rename " + d, "fsync-dir views", "fsync .revision", "rename .revision", "fsync-dir " + filepath.Base(c.dir)}
	if !slices.Equal(trace, want) {
		t.Fatalf("order:\n got  %q\n want %q", trace, want)
	}
}

// reseal puts a valid checksum on a base file's bytes: the crafted files
// of the tests below pass it, as a crafted file would.
func reseal(b []byte) []byte {
	binary.BigEndian.PutUint64(b[len(b)-8:], xxh3.Hash(b[:len(b)-8]))
	return b
}

// section is where base section i lies in b.
func section(b []byte, i int) (off, n int) {
	ft := b[len(b)-8-baseFooter:]
	return int(binary.LittleEndian.Uint64(ft[16*i:])), int(binary.LittleEndian.Uint64(ft[16*i+8:]))
}

// Crafted bases that pass the checksum: a root table entry naming a record
// that is not there, a record cut short, a record under another slot's id,
// a null card. Each is refused at open, never read (before, a lookup
// panicked on them).
func TestCraftedBaseRefused(t *testing.T) {
	c := newChain(t, 50, 0, 0)
	name := filepath.Join(Dir(c.dir), baseName(1))
	good, _ := os.ReadFile(name)
	craft := map[string]func([]byte){
		"root out of range": func(b []byte) {
			off, n := section(b, bsRoots)
			for i := off; i < off+n; i += 8 {
				if binary.LittleEndian.Uint32(b[i:]) != 0 {
					binary.LittleEndian.PutUint32(b[i:], 1000)
					return
				}
			}
		},
		"record cut short": func(b []byte) {
			off, _ := section(b, bsRecOff)
			binary.LittleEndian.PutUint64(b[off+8:], binary.LittleEndian.Uint64(b[off+8:])-1)
		},
		"record of another id": func(b []byte) {
			off, _ := section(b, bsRecords)
			b[off+3] ^= 1 // a letter of the first record's id
		},
	}
	for what, f := range craft {
		bad := slices.Clone(good)
		f(bad)
		os.WriteFile(name, reseal(bad), 0o644)
		if _, err := ReadBase(c.dir, 1); !errors.Is(err, ErrDamaged) {
			t.Errorf("%s: want ErrDamaged, got %v", what, err)
		}
	}
	os.WriteFile(name, good, 0o644)
	if _, err := ReadBase(c.dir, 1); err != nil {
		t.Fatalf("the good base again: %v", err)
	}
}

// Deltas that pass the checksum but hold what no writer writes: a null
// record (which panicked every command, `store recover` too), a record
// without id, a null card. Refused as damaged.
func TestCraftedDeltaRefused(t *testing.T) {
	for _, body := range []string{
		`{"storeId":"s_a","seq":1,"records":[null]}`,
		`{"storeId":"s_a","seq":1,"records":[{"root":"/x"}]}`,
		`{"storeId":"s_a","seq":1,"cards":[null]}`,
		`{"storeId":"s_a","seq":1,"deleted":[""]}`,
		`{"seq":1}`,
	} {
		b := seal(append(slices.Clone(fileMagic), body...))
		if _, err := decodeDelta(b); !errors.Is(err, ErrDamaged) {
			t.Errorf("%s: want ErrDamaged, got %v", body, err)
		}
	}
}

// A base whose index was built by another version of the tokenizer (its
// records whole): a reader indexes its records again with its own
// tokenizer and answers as a base built now would, and asks the next
// writer for a base of its own. (Before, the old index was searched with
// the new tokenizer: a stemmer switched off made a base miss a project.)
func TestBaseOfAnotherTokenizerIsIndexedAgain(t *testing.T) {
	c := newChain(t, 200, 0, 0)
	name := filepath.Join(Dir(c.dir), baseName(1))
	good, _ := os.ReadFile(name)
	off, n := section(good, bsIndex)
	mark := binary.LittleEndian.AppendUint64(nil, search.Derivation())
	at := bytes.LastIndex(good[off:off+n], mark)
	if at < 0 {
		t.Fatal("fixture: the index's derivation is not in its footer")
	}
	bad := slices.Clone(good)
	binary.LittleEndian.PutUint64(bad[off+at:], search.Derivation()^1)
	os.WriteFile(name, reseal(bad), 0o644)
	f := NewFollower(c.dir)
	u, err := f.Next()
	if err != nil || u.Snapshot == nil || !u.Snapshot.Reindexed {
		t.Fatalf("want the base, indexed again: %v", err)
	}
	os.WriteFile(name, good, 0o644)
	want, err := ReadBase(c.dir, 1)
	if err != nil || want.Reindexed {
		t.Fatal(err)
	}
	for _, q := range []string{"order gateway", "routers", "订单", "kafka client"} {
		a, _ := search.NewOver(u.Snapshot.Base.Index()).SearchTop(q, nil, 50)
		b, _ := search.NewOver(want.Base.Index()).SearchTop(q, nil, 50)
		if len(b) == 0 || !reflect.DeepEqual(a, b) {
			t.Fatalf("%q: %d hits from the base indexed again, %d from one built now", q, len(a), len(b))
		}
	}
	if why := NeedsBase(c.dir, c.ptr); why == "" {
		t.Fatal("the writer is not asked for a base of its own")
	}
}

// A reader that holds a base when a later delta turns out damaged reads the
// store and indexes only what changed over the base it holds: the same
// answers as a base built from nothing.
func TestStoreFallbackOverTheHeldBase(t *testing.T) {
	c := newChain(t, 300, 0, 0)
	calls := 0
	f := NewFollower(c.dir)
	f.SetFallback(c.fromStore(&calls))
	if _, err := f.Next(); err != nil {
		t.Fatal(err)
	}
	p := rec("p_new", "/code/new/order-gateway")
	c.records[p.ID] = p
	ptr, _, err := PublishDelta(c.dir, c.ptr, &Delta{StoreID: "s_a", Seq: c.ptr.Head + 1, Revision: c.ptr.Head + 1, Records: []*local.Project{p}})
	if err != nil {
		t.Fatal(err)
	}
	c.ptr = ptr
	if err := os.Truncate(filepath.Join(Dir(c.dir), deltaName(ptr.Head)), 5); err != nil {
		t.Fatal(err)
	}
	u, err := f.Next()
	if err != nil || u.Snapshot == nil || calls != 1 || !slices.Equal(ids(u), c.ids()) {
		t.Fatalf("fallback over the held base: %v, %d store reads, %d records", err, calls, len(ids(u)))
	}
	fresh, err := BuildBase(&Snapshot{StoreID: "s_a", Records: c.all()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"order gateway", "routers", "订单"} {
		a, _ := search.NewOver(u.Snapshot.Base.Index()).SearchTop(q, nil, 50)
		b, _ := search.NewOver(fresh.Base.Index()).SearchTop(q, nil, 50)
		if len(b) == 0 || !reflect.DeepEqual(a, b) {
			t.Fatalf("%q: %d hits over the held base, %d from nothing", q, len(a), len(b))
		}
	}
}

// A pointer of an older format (an older cgcat still running beside this
// one, publishing in its own format): a reader that holds a view keeps it
// instead of reading the store on each of the older one's commits; a new
// reader reads the store once.
func TestOlderFormatPointerKeepsTheHeldView(t *testing.T) {
	c := newChain(t, 30, 0, 1)
	calls := 0
	f := NewFollower(c.dir)
	f.SetFallback(c.fromStore(&calls))
	if _, err := f.Next(); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		os.WriteFile(PointerFile(c.dir), []byte(fmt.Sprintf("cgview 2 s_a %d %d 1 0 100\n", 40+i, 40+i)), 0o644)
		if u, err := f.Next(); err != nil || !u.Empty() {
			t.Fatalf("older format %d: %+v %v", i, u, err)
		}
	}
	if calls != 0 || f.At().Head != c.ptr.Head {
		t.Fatalf("the held view was dropped: %d store reads, at %+v", calls, f.At())
	}
	fresh := NewFollower(c.dir)
	fresh.SetFallback(c.fromStore(&calls))
	if u, err := fresh.Next(); err != nil || calls != 1 || !slices.Equal(ids(u), c.ids()) {
		t.Fatalf("a new reader: %v, %d store reads", err, calls)
	}
}
