package search

import (
	"slices"
	"testing"
)

// Each field outweighs the next lighter one (by fieldWeight, the
// production table): two documents alike in every length, one with the
// query word in the heavier field and a filler word in the lighter, the
// other the other way round. Only the field weights can put the first
// ahead (a tie would go to the second by its sort key).
func TestHeavierFieldWins(t *testing.T) {
	set := [numFields]func(d *Doc, v string){
		fName:        func(d *Doc, v string) { d.Name = "billing-" + v },
		fAlias:       func(d *Doc, v string) { d.Aliases = []string{"billing-" + v} },
		fPackage:     func(d *Doc, v string) { d.Packages = []string{"billing-" + v} },
		fKeyword:     func(d *Doc, v string) { d.Keywords = []string{v} },
		fTag:         func(d *Doc, v string) { d.Tags = []string{v} },
		fDescription: func(d *Doc, v string) { d.Description = "billing " + v },
		fReadme:      func(d *Doc, v string) { d.Readme = "billing " + v },
		fPath:        func(d *Doc, v string) { d.Path = "billing/" + v },
	}
	// Each field against the heaviest of the fields lighter than it.
	var pairs [][2]field
	for heavy := range numFields {
		if set[heavy] == nil {
			t.Fatalf("field %d has no setter here", heavy)
		}
		light, found := field(0), false
		for f := range numFields {
			if fieldWeight[f] < fieldWeight[heavy] && (!found || fieldWeight[f] > fieldWeight[light]) {
				light, found = f, true
			}
		}
		if found {
			pairs = append(pairs, [2]field{heavy, light})
		}
	}
	if len(pairs) < 5 {
		t.Fatalf("only %d pairs of fields of different weights", len(pairs))
	}
	for _, pair := range pairs {
		heavy, light := pair[0], pair[1]
		a := Doc{ID: "a", SortKey: "2", Name: "a-x"}
		b := Doc{ID: "b", SortKey: "1", Name: "b-x"}
		set[heavy](&a, "orders")
		set[light](&a, "ledger")
		set[heavy](&b, "ledger")
		set[light](&b, "orders")
		// Only a and b: every field has the same length in both, so its
		// length normalisation is 1 and a field's weight is its whole say.
		ix := build(a, b)
		hits := ix.Search("orders", nil)
		if got := ids(hits); !slices.Equal(got, []string{"a", "b"}) {
			t.Errorf("%s against %s: order %v, want [a b] (a has the word in its %s)", fieldPhrase[heavy], fieldPhrase[light], got, fieldPhrase[heavy])
		}
		for _, h := range hits {
			if h.Tier != TierLexical {
				t.Errorf("%s against %s: %s is in tier %v; the case is about lexical weights", fieldPhrase[heavy], fieldPhrase[light], h.ID, h.Tier)
			}
		}
	}
}
