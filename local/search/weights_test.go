package search

import (
	"slices"
	"testing"
)

// Each field outweighs the next: two documents alike in every length, one
// with the query word in the heavier field and a filler word in the
// lighter, the other the other way round. Only the field weights can put
// the first ahead (a tie would go to the second by its sort key).
func TestHeavierFieldWins(t *testing.T) {
	set := map[string]func(d *Doc, v string){
		"name":        func(d *Doc, v string) { d.Name = "billing-" + v },
		"alias":       func(d *Doc, v string) { d.Aliases = []string{"billing-" + v} },
		"package":     func(d *Doc, v string) { d.Packages = []string{"billing-" + v} },
		"keyword":     func(d *Doc, v string) { d.Keywords = []string{v} },
		"description": func(d *Doc, v string) { d.Description = "billing " + v },
		"readme":      func(d *Doc, v string) { d.Readme = "billing " + v },
	}
	for _, pair := range [][2]string{{"name", "keyword"}, {"alias", "keyword"}, {"package", "keyword"}, {"keyword", "description"}, {"description", "readme"}} {
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
			t.Errorf("%s against %s: order %v, want [a b] (a has the word in its %s)", heavy, light, got, heavy)
		}
		for _, h := range hits {
			if h.Tier != TierLexical {
				t.Errorf("%s against %s: %s is in tier %v; the case is about lexical weights", heavy, light, h.ID, h.Tier)
			}
		}
	}
}
