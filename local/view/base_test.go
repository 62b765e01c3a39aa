package view

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/pathid"
	"github.com/cgcat/cgcat/local/search"
)

// fill sets every field of v (recursively) to a value derived from r, so a
// field the codec forgets shows up as a difference.
func fill(v reflect.Value, r *rand.Rand) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d-é%c", r.IntN(1000), 'a'+rune(r.IntN(26))))
	case reflect.Uint64, reflect.Uint32, reflect.Uint:
		v.SetUint(r.Uint64() >> uint(r.IntN(60)))
	case reflect.Int, reflect.Int64:
		v.SetInt(r.Int64N(1 << 40))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Slice:
		n := 1 + r.IntN(3)
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			fill(s.Index(i), r)
		}
		v.Set(s)
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			t := time.Unix(r.Int64N(4e9), r.Int64N(1e9))
			switch r.IntN(3) {
			case 0:
				t = t.UTC()
			case 1:
				t = t.In(time.FixedZone("", 3600*(1+r.IntN(9))))
			}
			v.Set(reflect.ValueOf(t))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), r)
			}
		}
	default:
		panic("fill: unhandled kind " + v.Kind().String())
	}
}

// jsonRoundTrip is what a record looked like after format 1 (JSON).
func jsonRoundTrip(t *testing.T, p *local.Project) *local.Project {
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	out := new(local.Project)
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// Every field of a record survives the binary form exactly as it survived
// JSON, and a damaged encoding is refused.
func TestRecordCodecCoversEveryField(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 300 {
		p := new(local.Project)
		fill(reflect.ValueOf(p).Elem(), r)
		if i%7 == 0 {
			p.Meta.Packages, p.Lineage, p.MissingSince = nil, []string{}, time.Time{}
		}
		want := jsonRoundTrip(t, p)
		enc := appendRecord(nil, p)
		got, err := decodeRecord(enc)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("record %d differs from its JSON round trip:\n got  %+v\n want %+v", i, got, want)
		}
		lite, err := decodeRecordAs(enc, true)
		if err != nil {
			t.Fatal(err)
		}
		w := *want
		w.Meta.Description, w.Meta.Readme = "", ""
		w.Meta.Keywords, w.Meta.Tags, w.Meta.Manifests, w.Meta.Problems = nil, nil, nil, nil
		if !reflect.DeepEqual(lite, &w) {
			t.Fatalf("record %d, lite:\n got  %+v\n want %+v", i, lite, &w)
		}
		root, lin, ok := rootLineage(enc, nil)
		if !ok || root != p.Root || !slices.Equal(lin, p.Lineage) {
			t.Fatalf("root and lineage: %q %q %v", root, lin, ok)
		}
		if id, ok := checkRecord(enc); !ok || id != p.ID {
			t.Fatalf("checkRecord: %q %v (it must walk every field appendRecord writes)", id, ok)
		}
		if _, ok := checkRecord(enc[:len(enc)-1]); ok {
			t.Fatal("checkRecord took a truncated record")
		}
		if _, err := decodeRecord(enc[:len(enc)-1]); err == nil {
			t.Fatal("a truncated record was decoded")
		}
		if _, err := decodeRecord(append(slices.Clone(enc), 0)); err == nil {
			t.Fatal("a record with trailing bytes was decoded")
		}
	}
}

func synthRecords(n int, r *rand.Rand) []*local.Project {
	words := []string{"order", "billing", "gateway", "react", "router", "cobra", "alpha", "kafka", "订单", "client"}
	w := func() string { return words[r.IntN(len(words))] }
	// Every availability the base codes in a byte (the production table),
	// and one it does not.
	avail := append(slices.Clone(availCodes), "odd")
	var out []*local.Project
	for i := range n {
		name := fmt.Sprintf("%s-%s-%d", w(), w(), i)
		out = append(out, &local.Project{
			ID: fmt.Sprintf("p_%06d", r.IntN(1_000_000)), Root: "/code/" + w() + "/" + name,
			Availability: avail[r.IntN(len(avail))],
			Meta:         local.Metadata{Name: name, Description: w() + " " + w(), Packages: []string{"@" + w() + "/" + name}},
			LastSeen:     time.Unix(int64(r.IntN(1e9)), 0).UTC(), Lineage: []string{"d:1", fmt.Sprint("d:", i)},
			MissingSince: []time.Time{{}, time.Unix(int64(r.IntN(1e9)), 5).UTC()}[r.IntN(2)],
		})
	}
	return out
}

// A base built over the previous one (changed records tokenised again,
// the rest reused) is byte for byte the base built from nothing, and it
// answers what its records say.
func TestBaseOverPreviousIsTheSame(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	dir := t.TempDir()
	recs := synthRecords(400, r)
	if _, err := PublishBase(dir, &Snapshot{StoreID: "s_a", Seq: 1, Records: recs}); err != nil {
		t.Fatal(err)
	}
	// Change some, drop some, add some.
	next := slices.Clone(recs)
	for i := range next {
		if r.IntN(5) == 0 {
			cp := *next[i]
			cp.Meta.Name += " renamed"
			cp.LastSeen = cp.LastSeen.Add(time.Hour)
			next[i] = &cp
		}
	}
	next = slices.DeleteFunc(next, func(*local.Project) bool { return r.IntN(6) == 0 })
	next = append(next, synthRecords(50, r)...)
	// Two records of one root (a record kept missing beside the new one):
	// the greatest id wins, as a reload in id order would have it.
	twin := *next[0]
	twin.ID = "p_zzzzzz"
	next = append(next, &twin)
	if _, err := PublishBase(dir, &Snapshot{StoreID: "s_a", Seq: 2, Records: next}); err != nil {
		t.Fatal(err)
	}
	over, err := os.ReadFile(filepath.Join(Dir(dir), baseName(2)))
	if err != nil {
		t.Fatal(err)
	}
	var fresh bytes.Buffer
	if err := writeBase(&fresh, &Snapshot{StoreID: "s_a", Seq: 2, Records: next}, nil); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(over, fresh.Bytes()) {
		t.Fatalf("base built over the previous one differs from one built from nothing (%d vs %d bytes)", len(over), fresh.Len())
	}
	s, err := ReadBase(dir, 2)
	if err != nil {
		t.Fatal(err)
	}
	b := s.Base
	byID := map[string]*local.Project{}
	for _, p := range next {
		byID[p.ID] = p
	}
	if b.Len() != len(byID) {
		t.Fatalf("%d records, want %d", b.Len(), len(byID))
	}
	for id, p := range byID {
		slot, ok := b.Slot(id)
		if !ok {
			t.Fatalf("%s not found", id)
		}
		if got, want := b.Record(slot), jsonRoundTrip(t, p); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: record %+v, want %+v", id, got, want)
		}
		if b.Availability(slot) != p.Availability || !b.MissingSince(slot).Equal(p.MissingSince) {
			t.Fatalf("%s: availability %q since %v", id, b.Availability(slot), b.MissingSince(slot))
		}
	}
	// Roots: the greatest id wins where two records share one.
	owner := map[string]string{}
	for _, p := range next {
		if p.ID > owner[p.Root] {
			owner[p.Root] = p.ID
		}
	}
	for root, id := range owner {
		slot, ok := b.RootSlot(keyOf(root))
		if !ok {
			t.Fatalf("root %s not found", root)
		}
		if got := b.Record(slot); got.ID != id {
			t.Fatalf("root %s gives %s, want %s", root, got.ID, id)
		}
	}
	if _, ok := b.RootSlot(keyOf("/nowhere")); ok {
		t.Fatal("a root no record has was found")
	}
}

// A damaged base is refused (the follower keeps its last view), and files of
// another format are ignored, never misread.
func TestBaseDamagedOrForeign(t *testing.T) {
	dir := t.TempDir()
	if _, err := PublishBase(dir, &Snapshot{StoreID: "s_a", Seq: 1, Records: synthRecords(50, rand.New(rand.NewPCG(5, 6)))}); err != nil {
		t.Fatal(err)
	}
	f := NewFollower(dir)
	if _, err := f.Next(); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(Dir(dir), baseName(1))
	good, _ := os.ReadFile(name)
	for _, at := range []int{0, 9, len(good) / 3, len(good) / 2, len(good) - 40, len(good) - 1} {
		bad := slices.Clone(good)
		bad[at] ^= 0x10
		os.WriteFile(name, bad, 0o600)
		if _, err := ReadBase(dir, 1); !errors.Is(err, ErrDamaged) {
			t.Fatalf("byte %d altered: want ErrDamaged, got %v", at, err)
		}
	}
	os.WriteFile(name, good[:len(good)/2], 0o600)
	if _, err := ReadBase(dir, 1); !errors.Is(err, ErrDamaged) {
		t.Fatalf("truncated: want ErrDamaged, got %v", err)
	}
	// Another format's pointer: nothing is published as far as this reader
	// is concerned (the next writer publishes its own format).
	os.WriteFile(PointerFile(dir), []byte("cgview 1 s_a 1 1 1 0 100\n"), 0o600)
	if _, ok := ReadPointer(dir); ok {
		t.Fatal("a format-1 pointer was read")
	}
	if _, err := NewFollower(dir).Next(); !errors.Is(err, ErrNoView) {
		t.Fatalf("want ErrNoView, got %v", err)
	}
}

// A reader keeps answering from the base it mapped while newer bases are
// published and the old files are removed; once nothing refers to it, its
// mapping is released.
func TestMappedBaseOutlivesItsFile(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(7, 8))
	recs := synthRecords(200, r)
	if _, err := PublishBase(dir, &Snapshot{StoreID: "s_a", Seq: 1, Records: recs}); err != nil {
		t.Fatal(err)
	}
	s, err := ReadBase(dir, 1)
	if err != nil {
		t.Fatal(err)
	}
	ix := search.NewOver(s.Base.Index())
	want, _ := ix.SearchTop("order gateway", nil, 20)
	for seq := uint64(2); seq <= 4; seq++ {
		if _, err := PublishBase(dir, &Snapshot{StoreID: "s_a", Seq: seq, Records: synthRecords(100, r)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(filepath.Join(Dir(dir), baseName(1))); !os.IsNotExist(err) {
		t.Fatalf("the first base is still there: %v", err)
	}
	got, _ := ix.SearchTop("order gateway", nil, 20)
	if len(want) == 0 || !reflect.DeepEqual(got, want) {
		t.Fatalf("answers changed once the file was removed: %d hits, want %d", len(got), len(want))
	}
	for i := range s.Base.Len() {
		if p := s.Base.Record(uint32(i)); p == nil || p.ID == "" {
			t.Fatalf("record %d unreadable after its file was removed", i)
		}
	}
	gen := s.Base.gen
	s, ix = nil, nil
	for i := 0; i < 50; i++ {
		if _, ok := releasedBases.Load(gen); ok {
			return
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("an unreachable base was never released")
}

func keyOf(p string) string { return pathid.Key(p) }

// A base read into memory (Windows, or a file system that cannot be
// mapped) answers as the mapped one.
func TestBaseReadNotMapped(t *testing.T) {
	dir := t.TempDir()
	if _, err := PublishBase(dir, &Snapshot{StoreID: "s_a", Seq: 1, Records: synthRecords(300, rand.New(rand.NewPCG(9, 10)))}); err != nil {
		t.Fatal(err)
	}
	mapped, err := ReadBase(dir, 1)
	if err != nil {
		t.Fatal(err)
	}
	readNotMap = true
	defer func() { readNotMap = false }()
	read, err := ReadBase(dir, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(mapped.Projects(), read.Projects()) {
		t.Fatal("records differ")
	}
	a, _ := search.NewOver(mapped.Base.Index()).SearchTop("order client", nil, 50)
	b, _ := search.NewOver(read.Base.Index()).SearchTop("order client", nil, 50)
	if len(a) == 0 || !reflect.DeepEqual(a, b) {
		t.Fatalf("searches differ: %d and %d hits", len(a), len(b))
	}
}
