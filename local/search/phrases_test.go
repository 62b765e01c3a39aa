package search

import (
	"slices"
	"strings"
	"testing"
)

// TestPhrases: "machine learning" finds a project that writes the phrase
// as one word or by its short form, as a whole phrase (both words
// credited, so it ranks with the projects that say both words); the short
// form alone stays a plain word.
func TestPhrases(t *testing.T) {
	ix := build(
		Doc{ID: "short", Name: "torchish", Keywords: []string{"ml", "tensors"}},
		Doc{ID: "joined", Name: "learnkit", Keywords: []string{"MachineLearning"}},
		Doc{ID: "prose", Name: "modelzoo", Description: "machine learning models"},
		Doc{ID: "half", Name: "vm-tools", Description: "virtual machine images"},
		Doc{ID: "none", Name: "ledger", Description: "double-entry book keeping"},
	)
	hits := ix.Search("machine learning", nil)
	got := ids(hits)
	for _, id := range []string{"short", "joined", "prose"} {
		i := slices.Index(got, id)
		if i < 0 || i > slices.Index(got, "half") && slices.Contains(got, "half") {
			t.Errorf("%s: at %d in %v (before the one-word match half)", id, i, got)
		}
	}
	if slices.Contains(got, "none") {
		t.Errorf("none matched: %v", got)
	}
	if h := find(hits, "short"); h == nil || !strings.Contains(strings.Join(h.Reasons, ";"), `"machine"`) {
		t.Errorf("short: %+v", h)
	}
	// The short form alone is only the word.
	if got := ids(ix.Search("ml", nil)); !slices.Equal(got, []string{"short"}) {
		t.Errorf("ml: %v", got)
	}
	// A language word people use finds the projects whose manifests say it.
	ix = build(Doc{ID: "k", Name: "deployer", Keywords: []string{"k8s"}}, Doc{ID: "ts", Name: "web", Keywords: []string{"javascript", "typescript"}})
	if got := ids(ix.Search("kubernetes", nil)); !slices.Equal(got, []string{"k"}) {
		t.Errorf("kubernetes: %v", got)
	}
	if got := ids(ix.Search("typescript", nil)); !slices.Equal(got, []string{"ts"}) {
		t.Errorf("typescript: %v", got)
	}
}

// TestExactPackageMarksTheRestWeaker: a query that is exactly a package
// name ranks its project alone at the top; the projects that only share
// a word of it (the scope) follow, each marked as a weaker match, its own
// reasons kept first.
func TestExactPackageMarksTheRestWeaker(t *testing.T) {
	ix := build(
		Doc{ID: "sdk", Name: "order-sdk", Packages: []string{"@acme/order-sdk"}},
		Doc{ID: "a1", Name: "acme-billing", Packages: []string{"@acme/billing"}},
		Doc{ID: "a2", Name: "acme-web", Description: "acme storefront"},
	)
	hits := ix.Search("@acme/order-sdk", nil)
	if len(hits) != 3 || hits[0].ID != "sdk" {
		t.Fatalf("%v", ids(hits))
	}
	if slices.ContainsFunc(hits[0].Reasons, func(r string) bool { return strings.HasPrefix(r, "weaker") }) {
		t.Errorf("the exact hit is marked weaker: %q", hits[0].Reasons)
	}
	for _, h := range hits[1:] {
		if len(h.Reasons) < 2 || h.Reasons[len(h.Reasons)-1] != `weaker match: another project is exactly "@acme/order-sdk"` || len(h.Reasons) > maxReasons {
			t.Errorf("%s: %q", h.ID, h.Reasons)
		}
	}
	// A query no project is exactly: nothing is weaker.
	for _, h := range ix.Search("acme", nil) {
		if slices.ContainsFunc(h.Reasons, func(r string) bool { return strings.HasPrefix(r, "weaker") }) {
			t.Errorf("acme: %s %q", h.ID, h.Reasons)
		}
	}
}
