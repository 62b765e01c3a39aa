package search

import (
	"reflect"
	"strings"
	"testing"
)

// FuzzSearch feeds arbitrary queries and document text through Put, Search,
// List and Delete. Nothing may panic, and every answer must keep the
// invariants: no duplicate ids, scores never increasing, bounded reasons,
// filtered documents absent, the same answer twice.
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
		for _, h := range ix.Search(query, keep) {
			if h.ID == "fuzz" {
				t.Fatalf("%q: filtered doc returned", query)
			}
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
