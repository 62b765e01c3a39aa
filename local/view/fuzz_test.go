package view

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/pathid"
	"github.com/cgcat/cgcat/local/search"
)

// The fuzz targets below start from files the real writers make, and put
// a valid checksum on whatever the fuzzer makes of them: the checksum only
// catches accidents, so what is tried is the decoding behind it. Nothing
// may panic or loop; what opens must hold together.

// realBase is a base file as PublishBase writes it.
func realBase(t testing.TB, n int, seed uint64) []byte {
	t.Helper()
	dir := t.TempDir()
	recs := synthRecords(n, rand.New(rand.NewPCG(seed, seed+1)))
	if _, err := PublishBase(dir, &Snapshot{StoreID: "s_f", Seq: 1, Records: recs,
		Cards: []*local.Card{{Slug: "catalog/codegraph/x", ProjectID: "cg_x"}}, Forgotten: []string{"cg_gone"}}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(Dir(dir), baseName(1)))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func FuzzBase(f *testing.F) {
	f.Add(realBase(f, 3, 1))
	f.Add(realBase(f, 12, 2))
	f.Add(realBase(f, 0, 3))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < 8 {
			return
		}
		b = reseal(bytes.Clone(b))
		s, base, err := parseBase(b, nil)
		if err != nil {
			return
		}
		exerciseBase(t, s, base)
	})
}

// exerciseBase reads everything a reader reads of an opened base. A
// crafted base may be inconsistent in ways open does not check (a roots or
// id table that misses a record): lookups may then miss, never answer
// another record.
func exerciseBase(t *testing.T, s *Snapshot, b *Base) {
	if msg := readAllOf(s, b); msg != "" {
		t.Fatal(msg)
	}
}

func readAllOf(s *Snapshot, b *Base) string {
	for _, c := range s.Cards {
		if c == nil || c.Slug == "" {
			return "a card without slug was accepted"
		}
	}
	var lineage []string
	for i := range b.Len() {
		slot := uint32(i)
		p := b.Record(slot)
		if p == nil {
			return fmt.Sprintf("record %d accepted at open, unreadable now", i)
		}
		if got, ok := b.Slot(p.ID); ok && b.ID(got) != p.ID {
			return fmt.Sprintf("record %d (%s): the index answers slot %d, of another id", i, p.ID, got)
		}
		if b.ID(slot) != p.ID || b.Root(slot) != p.Root {
			return fmt.Sprintf("record %d: id or root differ", i)
		}
		_ = b.RecordLite(slot)
		_ = b.Availability(slot)
		_ = b.MissingSince(slot)
		b.Decide(slot, lineage, func(string, []string) bool { return true })
		key := pathid.Key(p.Root)
		if got, ok := b.RootSlot(key); ok && pathid.Key(b.Root(got)) != key {
			return fmt.Sprintf("record %d: its root finds a record of another root", i)
		}
	}
	_, _ = b.Slot("cg_not_there")
	_, _ = b.RootSlot("/not/there")
	ix := search.NewOver(b.Index())
	for _, q := range []string{"order", "gateway client", "订单", "ordr", "a"} {
		_, _ = ix.SearchTop(q, nil, 20)
		_ = ix.Suggest(q, nil, 3)
	}
	if got := len(ix.List(nil)); got != b.Len() {
		return fmt.Sprintf("listing %d, base %d", got, b.Len())
	}
	if b.Len() > 0 {
		ix.Delete(b.ID(0))
		ix.Put(search.Doc{ID: "new", Name: "order"})
		_, _ = ix.SearchTop("order", nil, 5)
	}
	return ""
}

// realDelta is a delta as PublishDelta writes it, without its checksum.
func realDelta(t testing.TB) []byte {
	d := &Delta{StoreID: "s_f", Seq: 2, Revision: 2, Records: synthRecords(3, rand.New(rand.NewPCG(4, 5))),
		Deleted: []string{"cg_x"}, Cards: []*local.Card{{Slug: "catalog/codegraph/y", ProjectID: "cg_y"}}, DeletedCards: []string{"catalog/codegraph/z"}}
	b, err := encodeDelta(d)
	if err != nil {
		t.Fatal(err)
	}
	return b[len(fileMagic) : len(b)-8]
}

func FuzzDelta(f *testing.F) {
	f.Add(realDelta(f))
	f.Add([]byte(`{"storeId":"s_a","seq":1,"records":[null]}`))
	f.Add([]byte(`{"storeId":"s_a","seq":1,"cards":[{}],"deleted":[""]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		d, err := decodeDelta(seal(append(slices.Clone(fileMagic), body...)))
		if err != nil {
			return
		}
		if d.StoreID == "" {
			t.Fatal("a delta without store id was accepted")
		}
		ix := search.New()
		for _, p := range d.Records {
			if p == nil || p.ID == "" || p.Root == "" {
				t.Fatalf("accepted record %+v", p)
			}
			ix.Put(search.DocOf(p))
			_ = pathid.Key(p.Root)
			if _, err := BuildBase(&Snapshot{StoreID: d.StoreID, Records: []*local.Project{p}}, nil); err != nil {
				t.Fatalf("an accepted record does not make a base: %v", err)
			}
		}
		for _, c := range d.Cards {
			if c == nil || c.Slug == "" {
				t.Fatal("accepted a card without slug")
			}
		}
	})
}

func FuzzPointer(f *testing.F) {
	f.Add([]byte(Pointer{StoreID: "s_abc", Base: 4, Head: 9, Revision: 12, DeltaBytes: 100, BaseBytes: 5000, Index: search.Derivation()}.String()))
	f.Add([]byte("cgview 2 s_a 1 1 1 0 100\n"))
	f.Add([]byte("cgview 4 s_a 1 1 1 0 100 1\n"))
	f.Add([]byte("cgview 3 s_a 18446744073709551615 1 1 0 100 ff\n"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := os.WriteFile(PointerFile(dir), b, 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := readPointer(dir)
		if err != nil {
			return
		}
		if p.StoreID == "" || p.Head < p.Base || p.Head-p.Base > maxChain || p.DeltaBytes < 0 || p.BaseBytes < 0 {
			t.Fatalf("accepted %+v", p)
		}
		if err := os.WriteFile(PointerFile(dir), []byte(p.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		if again, err := readPointer(dir); err != nil || again != p {
			t.Fatalf("%+v does not read back: %+v %v", p, again, err)
		}
		_ = NeedsBase(dir, p)
	})
}
