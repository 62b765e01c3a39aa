package search

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// The frozen form and an index over it (NewOver) must answer exactly as the
// in-memory index built by Put from the same documents: same hits, order,
// scores, tiers, reasons, totals, suggestions and listing, under a filter
// that hides documents — through random catalogs and random changes (put,
// replace, delete, delete again, put back).

// frozenBytes writes ix in the frozen form.
func frozenBytes(t testing.TB, ix *Index) []byte {
	t.Helper()
	var buf bytes.Buffer
	n, err := ix.WriteFrozen(&buf)
	if err != nil || n != int64(buf.Len()) {
		t.Fatalf("WriteFrozen: %d bytes, %v (buffer %d)", n, err, buf.Len())
	}
	return buf.Bytes()
}

func openFrozen(t testing.TB, b []byte) *Frozen {
	t.Helper()
	f, err := OpenFrozen(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// layeredCorpus makes n documents that share values often enough for the
// exact tiers to tie (same names, packages of other documents' names, same
// sort keys) and the fuzzy tier to find near spellings.
func layeredCorpus(c *corpus, n int) []Doc {
	docs := c.docs(n)
	r := c.r
	for i := range docs {
		switch r.IntN(10) {
		case 0: // a name another document has
			docs[i].Name = docs[r.IntN(len(docs))].Name
		case 1: // a package named like another document
			docs[i].Packages = append(docs[i].Packages, docs[r.IntN(len(docs))].Name)
		case 2: // the same sort key: ties break by id
			docs[i].SortKey = docs[r.IntN(len(docs))].SortKey
		case 3: // a one-segment alias close to a name
			if w := strings.Split(docs[r.IntN(len(docs))].Name, "-")[0]; len(w) > 4 {
				docs[i].Aliases = append(docs[i].Aliases, w[1:]+w[:1])
			}
		}
	}
	return docs
}

type differ struct {
	t       *testing.T
	queries []string
	keep    func(string) bool
}

// filterFor is keep as the catalog gives it over a base: by slot for the
// base's documents (the slot is looked up by the base's own id), by id for
// the rest.
func filterFor(ix *Index, keep func(string) bool) Filter {
	if ix.base == nil {
		return Filter{ID: keep}
	}
	base := ix.base
	return Filter{ID: keep, Base: func(s uint32) bool { return keep(base.s(base.docs[s].id)) }}
}

func (d *differ) same(label string, want, got *Index) {
	t := d.t
	t.Helper()
	if want.Len() != got.Len() {
		t.Fatalf("%s: Len %d, want %d", label, got.Len(), want.Len())
	}
	gf := filterFor(got, d.keep)
	if w, g := want.List(d.keep), got.ListFilter(gf); !slices.Equal(w, g) {
		t.Fatalf("%s: List differs: %d ids, want %d", label, len(g), len(w))
	}
	if w, g := want.List(nil), got.List(nil); !slices.Equal(w, g) {
		t.Fatalf("%s: List(nil) differs", label)
	}
	for _, q := range d.queries {
		for _, n := range []int{-1, 3, 50} {
			wh, wt := want.SearchTop(q, d.keep, n)
			gh, gt := got.SearchFilter(q, gf, n)
			if wt != gt || !reflect.DeepEqual(wh, gh) {
				t.Fatalf("%s: %q top %d: total %d, want %d\n got  %s\n want %s", label, q, n, gt, wt, hitsText(gh), hitsText(wh))
			}
		}
		if w, g := want.Search(q, nil), got.Search(q, nil); !reflect.DeepEqual(w, g) {
			t.Fatalf("%s: %q unfiltered:\n got  %s\n want %s", label, q, hitsText(g), hitsText(w))
		}
		if w, g := want.Suggest(q, d.keep, 5), got.SuggestFilter(q, gf, 5); !slices.Equal(w, g) {
			t.Fatalf("%s: %q suggestions %q, want %q", label, q, g, w)
		}
	}
}

func hitsText(hs []Hit) string {
	var b strings.Builder
	for i, h := range hs {
		if i == 8 {
			fmt.Fprintf(&b, "… (%d)", len(hs))
			break
		}
		fmt.Fprintf(&b, "[%s %.6f %v %q] ", h.ID, h.Score, h.Tier, h.Reasons)
	}
	return b.String()
}

func TestLayeredMatchesInMemory(t *testing.T) {
	seeds := 4
	if testing.Short() {
		seeds = 2
	}
	for seed := range seeds {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			c := newCorpus(uint64(500 + seed))
			r := rand.New(rand.NewPCG(uint64(seed), 7))
			pool := layeredCorpus(c, 600)
			// A quarter of the documents come in later; some ids come back.
			initial := pool[:300]
			ref := New()
			for _, d := range initial {
				ref.Put(d)
			}
			base := openFrozen(t, frozenBytes(t, ref))
			lay := NewOver(base)

			queries := c.queries(pool, 60)
			queries = append(queries, c.typos(pool, 30)...)
			for range 10 {
				d := pool[r.IntN(len(pool))]
				queries = append(queries, d.Name, strings.ToUpper(d.Name), strings.ReplaceAll(d.Name, "-", " "))
				if len(d.Packages) > 0 {
					queries = append(queries, "https://"+strings.TrimPrefix(d.Packages[0], "@")+".git", "npm install "+d.Packages[0])
				}
			}
			hidden := map[string]bool{}
			for _, d := range pool {
				if r.IntN(5) == 0 {
					hidden[d.ID] = true
				}
			}
			df := &differ{t: t, queries: queries, keep: func(id string) bool { return !hidden[id] }}
			df.same("base alone", ref, lay)

			live := map[string]Doc{} // what each live id holds now
			for _, d := range initial {
				live[d.ID] = d
			}
			for step := range 240 {
				var op string
				switch k := r.IntN(10); {
				case k < 3: // a new document, or one coming back
					d := pool[r.IntN(len(pool))]
					ref.Put(d)
					lay.Put(d)
					live[d.ID] = d
					op = "put " + d.ID
				case k < 6: // another document's content under an id (a changed record)
					d := pool[r.IntN(len(pool))]
					o := pool[r.IntN(len(pool))]
					o.ID = d.ID
					if r.IntN(2) == 0 {
						o.SortKey = d.SortKey
					}
					ref.Put(o)
					lay.Put(o)
					live[d.ID] = o
					op = "replace " + d.ID
				case k < 9: // a delete
					d := pool[r.IntN(len(pool))]
					ref.Delete(d.ID)
					lay.Delete(d.ID)
					delete(live, d.ID)
					op = "delete " + d.ID
				default: // an id that is not there: nothing changes
					d := pool[r.IntN(len(pool))]
					if _, ok := live[d.ID]; ok {
						continue
					}
					ref.Delete(d.ID)
					lay.Delete(d.ID)
					op = "delete absent " + d.ID
				}
				if step%40 == 39 {
					df.same(fmt.Sprintf("step %d (%s)", step, op), ref, lay)
				}
			}
			// A fresh build of what is live answers the same, and all three
			// write the same bytes (the form is canonical).
			fresh := New()
			for _, id := range slices.Sorted(maps.Keys(live)) {
				fresh.Put(live[id])
			}
			df.same("fresh build vs incremental", fresh, ref)
			fb, rb, lb := frozenBytes(t, fresh), frozenBytes(t, ref), frozenBytes(t, lay)
			if !bytes.Equal(fb, rb) || !bytes.Equal(fb, lb) {
				t.Fatalf("frozen forms differ: fresh %d, in-memory %d, layered %d bytes", len(fb), len(rb), len(lb))
			}
			// A base written from the layered index answers the same.
			again := NewOver(openFrozen(t, lb))
			df.same("second base", ref, again)
		})
	}
}

// Nothing an index over a base hands out points into the base's memory: a
// mapping is released once unreachable, while hits, lists and suggestions
// live on in caches and cursors. Answers are taken, the memory is
// overwritten, and the answers must not have changed.
func TestLayeredAnswersOwnTheirStrings(t *testing.T) {
	c := newCorpus(77)
	docs := layeredCorpus(c, 200)
	ref := New()
	for _, d := range docs {
		ref.Put(d)
	}
	mem := bytes.Clone(frozenBytes(t, ref))
	lay := NewOver(openFrozen(t, mem))
	lay.Delete(docs[0].ID)
	ref.Delete(docs[0].ID)
	queries := append(c.queries(docs, 40), c.typos(docs, 20)...)
	type answer struct {
		hits  []Hit
		sugg  []string
		list  []string
		total int
	}
	var got []answer
	for _, q := range queries {
		h, n := lay.SearchTop(q, nil, 60)
		got = append(got, answer{h, lay.Suggest(q, nil, 5), nil, n})
	}
	list := lay.List(nil)
	for i := range mem {
		mem[i] = 0xAA
	}
	for i, q := range queries {
		h, n := ref.SearchTop(q, nil, 60)
		if n != got[i].total || !reflect.DeepEqual(h, got[i].hits) {
			t.Fatalf("%q: hits changed with the base's memory:\n got  %s\n want %s", q, hitsText(got[i].hits), hitsText(h))
		}
		if s := ref.Suggest(q, nil, 5); !slices.Equal(s, got[i].sugg) {
			t.Fatalf("%q: suggestions changed with the base's memory: %q, want %q", q, got[i].sugg, s)
		}
	}
	if !slices.Equal(list, ref.List(nil)) {
		t.Fatal("the listing changed with the base's memory")
	}
}

// A frozen form of another format, or whose structure does not hold
// together, is refused, never read. (Damage that keeps the structure — a
// changed posting — is the checksum's to catch: package view.)
func TestFrozenRefusesDamage(t *testing.T) {
	ix := New()
	for _, d := range newCorpus(5).docs(50) {
		ix.Put(d)
	}
	b := frozenBytes(t, ix)
	if _, err := OpenFrozen(b, nil); err != nil {
		t.Fatal(err)
	}
	for name, bad := range map[string][]byte{
		"truncated":     b[:len(b)-1],
		"short":         b[:20],
		"empty":         nil,
		"other magic":   append([]byte("CGSRCH\x00\x01"), b[8:]...),
		"footer offset": func() []byte { c := bytes.Clone(b); c[len(c)-16*numSec+16*secPost+6] = 0x40; return c }(),
		"footer count":  func() []byte { c := bytes.Clone(b); c[len(c)-footerSize] ^= 1; return c }(),
		"misaligned":    func() []byte { c := bytes.Clone(b); c[len(c)-16*numSec+16*secPost] ^= 4; return c }(),
	} {
		if _, err := OpenFrozen(bad, nil); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// FuzzLayered drives an in-memory index and one over a base of the same
// documents through the same changes, fuzzed: they must answer alike.
func FuzzLayered(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7}, "order")
	f.Add([]byte{9, 9, 9, 1, 1, 1, 200, 13}, "cobar")
	f.Add([]byte{255, 0, 128, 64, 32, 16}, "訂單 client")
	pool := layeredCorpus(newCorpus(11), 24)
	for i := range pool {
		pool[i].Readme = ""
	}
	f.Fuzz(func(t *testing.T, ops []byte, query string) {
		if len(ops) > 64 {
			ops = ops[:64]
		}
		ref := New()
		for _, d := range pool[:12] {
			ref.Put(d)
		}
		lay := NewOver(openFrozen(t, frozenBytes(t, ref)))
		for i := 0; i+1 < len(ops); i += 2 {
			d := pool[int(ops[i+1])%len(pool)]
			switch ops[i] % 4 {
			case 0, 1:
				ref.Put(d)
				lay.Put(d)
			case 2:
				ref.Delete(d.ID)
				lay.Delete(d.ID)
			case 3:
				o := pool[int(ops[i])%len(pool)]
				o.ID = d.ID
				ref.Put(o)
				lay.Put(o)
			}
		}
		keep := func(id string) bool { return id[len(id)-1]%3 != 0 }
		qs := []string{query, pool[0].Name, "order", "kalo"}
		qs = append(qs, misspellings(query)...)
		(&differ{t: t, queries: qs, keep: keep}).same("fuzzed", ref, lay)
		if !bytes.Equal(frozenBytes(t, ref), frozenBytes(t, lay)) {
			t.Fatal("frozen forms differ")
		}
	})
}
