package search

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cgcat/cgcat/local"
)

// Records go one way into the index: DocOf, then the term pipeline
// (analyze), then the live index, whose frozen form a published base is.
// TestFrozenAndLiveAgreeOnRecords checks, over random records from seeds,
// that the live index and an index over its frozen form hold the very terms
// the pipeline derives — each term with its frequency per field, the field
// lengths, whole-value terms and exact keys — and rank alike.

// randomRecords makes n records from a seeded corpus, with what real
// metadata has and a careless tokenizer would trip on: names padded with
// spaces, case-only repeats among aliases and packages, fullwidth letters,
// Chinese names, Windows roots, empty fields.
func randomRecords(c *corpus, n int) []*local.Project {
	r := c.r
	docs := layeredCorpus(c, n)
	recs := make([]*local.Project, len(docs))
	for i, d := range docs {
		p := &local.Project{ID: d.ID, Root: d.Path, Meta: local.Metadata{
			Name: d.Name, Aliases: d.Aliases, Packages: d.Packages, Keywords: d.Keywords,
			Tags: d.Tags, Description: d.Description, Readme: d.Readme,
		}}
		m := &p.Meta
		switch r.IntN(12) {
		case 0:
			m.Name = "  " + strings.ToUpper(m.Name) + " "
		case 1:
			if len(m.Packages) > 0 {
				m.Packages = append(m.Packages, strings.ToUpper(m.Packages[0]), " "+m.Packages[0])
			}
			m.Aliases = append(m.Aliases, m.Name, strings.ToUpper(m.Name))
		case 2:
			m.Name = "Ｏｒｄｅｒ" + m.Name // fullwidth
		case 3:
			m.Name = c.zh(2)
			m.Aliases = append(m.Aliases, c.zh(1)+"-"+c.word())
		case 4:
			p.Root = `C:\Users\dev\src\` + strings.ReplaceAll(strings.TrimPrefix(p.Root, "/home/dev/src/"), "/", `\`)
		case 5:
			m.Name, m.Description, m.Readme = "", "", ""
		case 6:
			m.Packages = append(m.Packages, "github.com/"+c.word()+"/"+m.Name+"/v2", "org.acme:"+c.word()+"Core:1.0")
		case 7:
			m.Keywords = append(m.Keywords, "reactRouterDom", "XMLParser", "oauth2", "base64")
		}
		recs[i] = p
	}
	return recs
}

// heldTerms is what an index holds for a document: each term with its
// frequency per field, its field lengths, its whole-value terms and its
// exact keys.
type heldTerms struct {
	terms map[string]uint32
	flen  [numFields]uint16
	whole []string
	exact []string
	entry [3]string // id, sort key, name
	vals  []string  // aliases, then packages
}

func held(t *testing.T, ix *Index, id string) heldTerms {
	t.Helper()
	slot, ok := ix.byID[id]
	if !ok {
		if slot, ok = ix.baseSlot(id); !ok {
			t.Fatalf("%s: not in the index", id)
		}
	}
	e := ix.entry(slot)
	h := heldTerms{terms: map[string]uint32{}, flen: *ix.flenOf(slot), entry: [3]string{e.id, e.sortKey, e.name}}
	h.vals = append(slices.Clone(e.aliases), e.packages...)
	for it := (termIter{b: e.terms}); ; {
		tid, ok := it.next()
		if !ok {
			break
		}
		bp, op := ix.postLists(tid)
		for _, post := range [][]posting{bp, op} {
			if i, ok := searchSlot(post, slot); ok {
				h.terms[ix.termText(tid)] = post[i].tfs
			}
		}
	}
	for _, w := range ix.wholeOf(slot) {
		if w != 0 {
			h.whole = append(h.whole, ix.termText(w-1))
		}
	}
	slices.Sort(h.whole)
	e.eachExact(func(k exactKind, key string) { h.exact = append(h.exact, fmt.Sprint(k, key)) })
	return h
}

// derived is what the term pipeline gives for a record, by itself.
func derived(p *local.Project) heldTerms {
	d := DocOf(p)
	a := analyze(&d)
	defer a.release()
	h := heldTerms{terms: map[string]uint32{}, flen: a.flen, entry: [3]string{a.entry.id, a.entry.sortKey, a.entry.name}}
	h.vals = append(slices.Clone(a.entry.aliases), a.entry.packages...)
	for i, t := range a.terms {
		h.terms[t] = a.tfs[i]
	}
	for _, i := range a.whole {
		h.whole = append(h.whole, a.terms[i])
	}
	slices.Sort(h.whole)
	a.entry.eachExact(func(k exactKind, key string) { h.exact = append(h.exact, fmt.Sprint(k, key)) })
	return h
}

func sameHeld(a, b heldTerms) bool {
	return maps.Equal(a.terms, b.terms) && a.flen == b.flen && slices.Equal(a.whole, b.whole) &&
		slices.Equal(a.exact, b.exact) && a.entry == b.entry && slices.Equal(a.vals, b.vals)
}

func TestFrozenAndLiveAgreeOnRecords(t *testing.T) {
	seeds := 6
	if testing.Short() {
		seeds = 2
	}
	for seed := range seeds {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			c := newCorpus(uint64(900 + seed))
			r := rand.New(rand.NewPCG(uint64(seed), 26))
			recs := randomRecords(c, 300)
			live := New()
			for _, i := range r.Perm(len(recs)) { // any order: the frozen form is canonical
				live.Put(DocOf(recs[i]))
			}
			over := NewOver(openFrozen(t, frozenBytes(t, live)))
			for _, p := range recs {
				want := derived(p)
				if got := held(t, live, p.ID); !sameHeld(got, want) {
					t.Fatalf("%s: the live index holds\n %+v\nthe pipeline derives\n %+v", p.ID, got, want)
				}
				if got := held(t, over, p.ID); !sameHeld(got, want) {
					t.Fatalf("%s: the frozen index holds\n %+v\nthe pipeline derives\n %+v", p.ID, got, want)
				}
			}

			docs := make([]Doc, len(recs))
			for i, p := range recs {
				docs[i] = DocOf(p)
			}
			queries := append(c.queries(docs, 60), c.typos(docs, 30)...)
			for range 20 {
				m := recs[r.IntN(len(recs))].Meta
				queries = append(queries, m.Name, strings.TrimSpace(m.Name), strings.ToLower(m.Name))
				queries = append(queries, m.Packages...)
				queries = append(queries, m.Aliases...)
			}
			queries = append(queries, "Ｏｒｄｅｒ", "order", "src", "Users", "react router dom", "xml parser", "oauth")
			hidden := map[string]bool{}
			for _, p := range recs {
				if r.IntN(6) == 0 {
					hidden[p.ID] = true
				}
			}
			(&differ{t: t, queries: queries, keep: func(id string) bool { return !hidden[id] }}).same("records", live, over)
		})
	}
}

// TestDocOf: a record's search fields are its metadata's, its path only
// the last three folders of its root (those that name it, not the
// /home/me/code every project shares), whatever the separator; a card's
// have no path.
func TestDocOf(t *testing.T) {
	for root, path := range map[string]string{
		"/home/me/code/services/payments/api": "services/payments/api",
		`C:\Users\me\src\orders`:              "me/src/orders",
		"/x":                                  "x",
	} {
		p := &local.Project{ID: "p1", Root: root, Meta: local.Metadata{Name: "Orders", Aliases: []string{"ord"}, Packages: []string{"@a/orders"},
			Keywords: []string{"k"}, Tags: []string{"t"}, Description: "d", Readme: "r"}}
		want := Doc{ID: "p1", SortKey: "orders\x00" + root, Name: "Orders", Aliases: []string{"ord"}, Packages: []string{"@a/orders"},
			Keywords: []string{"k"}, Tags: []string{"t"}, Description: "d", Readme: "r", Path: path}
		if got := DocOf(p); !reflect.DeepEqual(got, want) {
			t.Errorf("DocOf(%s) = %+v, want %+v", root, got, want)
		}
	}
	c := &local.Card{Slug: "orders-ab12", Name: "Orders", Packages: []string{"@a/orders"}, Keywords: []string{"k"}, Tags: []string{"t"}, Description: "d"}
	want := Doc{ID: "orders-ab12", SortKey: "orders\x00orders-ab12", Name: "Orders", Packages: []string{"@a/orders"}, Keywords: []string{"k"}, Tags: []string{"t"}, Description: "d"}
	if got := CardDoc(c); !reflect.DeepEqual(got, want) {
		t.Errorf("CardDoc = %+v, want %+v", got, want)
	}
}
