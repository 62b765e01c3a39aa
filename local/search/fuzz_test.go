package search

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzSearch feeds arbitrary queries and document text through Put, Search,
// Suggest, List and Delete. Nothing may panic, and every answer must keep
// the invariants: no duplicate ids, scores never increasing, bounded
// reasons, filtered documents absent — also from the fuzzy tier, queried
// with misspellings of the filtered document's name, and from Suggest,
// which may only offer values of documents the filter keeps — the same
// answer twice.
func FuzzSearch(f *testing.F) {
	seeds := [][4]string{
		{"orders", "orders", "@company/order-sdk", "订单服务客户端与类型定义"},
		{"订单 客户端", "order-client", "github.com/acme/orders/v2", "订单服务客户端"},
		{"reactRouterDom", "react-router-dom", "org.acme:orders-core", "routing"},
		{"", "", "", ""},
		{"!!!", "@/", "@", ":"},
		{strings.Repeat("a ", 600), "a", "a/v2", strings.Repeat("a", 5000)},
		{"\xff\xfe", "\x00", "ＡＢＣ", "テキスト ー 한국어"},
		{"k8s x86_64 oauth2Client", "XMLHttpRequest", "@/", "v2 v3 1.2.3"},
		{"cobar", "cobra", "github.com/spf13/cobra", "a CLI library"},
		{"https://github.com/spf13/cobar.git", "cobra", "github.com/spf13/cobra", "npm install cobra"},
		{"refund wroker", "refund-worker", "@acme/refund-worker", "i18n"},
		{"i18n", "internationalization\u202e", "@x/\"q\"\\", "ＡＢＣ"},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1], s[2], s[3])
	}
	// A small base keeps each run cheap: coverage-guided minimisation
	// re-runs an input hundreds of times.
	base := newCorpus(3).docs(8)
	for i := range base {
		base[i].Readme = ""
	}
	f.Fuzz(func(t *testing.T, query, name, pkg, text string) {
		ix := New()
		for _, d := range base {
			ix.Put(d)
		}
		fuzzed := Doc{
			ID: "fuzz", SortKey: name, Name: name, Aliases: []string{text, name},
			Packages: []string{pkg, name + "/" + pkg}, Keywords: strings.Fields(text),
			Tags: []string{pkg}, Description: text, Readme: query + text, Path: "/x/" + name,
		}
		ix.Put(fuzzed)
		ix.Put(Doc{ID: query, SortKey: text, Name: query, Description: name})
		all := ix.Search(query, nil)
		checkHits(t, query, all)
		if again := ix.Search(query, nil); !reflect.DeepEqual(all, again) {
			t.Fatalf("%q: answer changed between calls", query)
		}
		keep := func(id string) bool { return id != "fuzz" }
		for _, q := range append([]string{query}, misspellings(name)...) {
			for _, h := range ix.Search(q, keep) {
				if h.ID == "fuzz" {
					t.Fatalf("%q: filtered doc returned", q)
				}
			}
			checkSuggestions(t, ix, q, keep)
			checkSuggestions(t, ix, q, nil)
		}
		if strings.TrimSpace(query) == "" && all != nil {
			t.Fatalf("blank query gave hits")
		}
		if got := len(ix.List(nil)); got != ix.Len() {
			t.Fatalf("List %d, Len %d", got, ix.Len())
		}
		// Replace with swapped fields, then delete: the index stays whole.
		fuzzed.Name, fuzzed.Description = text, name
		ix.Put(fuzzed)
		checkHits(t, query, ix.Search(query, nil))
		ix.Delete("fuzz")
		ix.Delete(query)
		for _, h := range ix.Search(text, nil) {
			if h.ID == "fuzz" {
				t.Fatal("deleted doc returned")
			}
		}
		want := len(base)
		for _, d := range base {
			if d.ID == query { // the second Put replaced a base doc
				want--
			}
		}
		if ix.Len() != want {
			t.Fatalf("Len %d after deletes, want %d", ix.Len(), want)
		}
	})
}

// misspellings returns a few one- and two-slip variants of s (by runes).
func misspellings(s string) []string {
	r := []rune(s)
	if len(r) < 2 {
		return nil
	}
	swap := slices.Clone(r)
	swap[0], swap[1] = swap[1], swap[0]
	drop := slices.Delete(slices.Clone(r), len(r)/2, len(r)/2+1)
	sub := slices.Clone(r)
	sub[len(sub)-1] = 'x'
	two := slices.Delete(slices.Clone(sub), 0, 1)
	return []string{string(swap), string(drop), string(sub), string(two)}
}

// checkSuggestions checks that every suggestion is the cleaned name, alias
// or package name of a document keep accepts, once, at most n.
func checkSuggestions(t *testing.T, ix *Index, q string, keep func(string) bool) {
	t.Helper()
	got := ix.Suggest(q, keep, 5)
	if len(got) > 5 {
		t.Fatalf("%q: %d suggestions", q, len(got))
	}
	ix.mu.RLock()
	visible := map[string]bool{}
	for _, e := range ix.docs {
		if !e.live || (keep != nil && !keep(e.id)) {
			continue
		}
		for _, f := range []field{fName, fAlias, fPackage} {
			for i := range e.values(f) {
				idx := i
				if f == fName {
					idx = -1
				}
				visible[clean(e.value(f, idx), maxValueRunes)] = true
			}
		}
	}
	ix.mu.RUnlock()
	seen := map[string]bool{}
	for _, s := range got {
		if !visible[s] {
			t.Fatalf("%q: suggestion %q is no value of a visible document", q, s)
		}
		if seen[strings.ToLower(s)] || strings.ContainsAny(s, "\x00\n\u202e") {
			t.Fatalf("%q: suggestion %q repeated or unclean", q, s)
		}
		seen[strings.ToLower(s)] = true
	}
}

// FuzzEdits checks the bounded distance against the textbook table.
func FuzzEdits(f *testing.F) {
	for _, s := range [][2]string{{"cobra", "cobar"}, {"ca", "abc"}, {"日本語", "日語本"}, {"", "x"}, {"\xff", "a"}} {
		f.Add(s[0], s[1], uint8(1))
	}
	f.Fuzz(func(t *testing.T, a, b string, k uint8) {
		if utf8.RuneCountInString(a) > maxTermLen || utf8.RuneCountInString(b) > maxTermLen {
			return
		}
		d := int(k % 3)
		var ra, rb [maxTermLen]rune
		if got, want := editsWithin(a, b, d, &ra, &rb), min(osaRef(a, b), d+1); got != want {
			t.Fatalf("editsWithin(%q, %q, %d) = %d, want %d", a, b, d, got, want)
		}
	})
}
