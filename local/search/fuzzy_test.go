package search

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// goModules is a small catalog of Go modules and npm packages: what the
// host-word and fuzzy tests search.
func goModules() *Index {
	return build(
		Doc{ID: "cobra", Name: "cobra", Packages: []string{"github.com/spf13/cobra"}, Description: "a library for modern CLI applications"},
		Doc{ID: "pflag", Name: "pflag", Packages: []string{"github.com/spf13/pflag"}, Description: "POSIX-style command-line flags"},
		Doc{ID: "snappy", Name: "snappy", Packages: []string{"github.com/golang/snappy"}, Description: "the Snappy compression format"},
		Doc{ID: "uuid", Name: "uuid", Packages: []string{"github.com/google/uuid"}, Description: "generate and inspect UUIDs"},
		Doc{ID: "refund", Name: "refund-worker", Packages: []string{"@acme/refund-worker"}, Description: "processes refunds"},
		Doc{ID: "npm", Name: "npm", Packages: []string{"npm"}, Description: "the package manager for JavaScript"},
		Doc{ID: "negotiator", Name: "negotiator", Packages: []string{"negotiator"}, Description: "HTTP content negotiation"},
		Doc{ID: "i18n", Name: "internationalization", Description: "translations"},
		Doc{ID: "fastapi", Name: "fastapi", Packages: []string{"fastapi"}, Description: "a web framework"},
		Doc{ID: "oauth", Name: "go-oauth2", Description: "tokens"},
	)
}

func TestFuzzyFindsMisspeltNames(t *testing.T) {
	ix := goModules()
	for _, c := range []struct {
		query, want, reason string
	}{
		{"cobar", "cobra", `name "cobra" is close to "cobar"`},                 // two neighbours swapped
		{"snapy", "snappy", `name "snappy" is close to "snapy"`},               // one letter left out
		{"uuidd", "uuid", `name "uuid" is close to "uuidd"`},                   // one letter too many
		{"pflaf", "pflag", `name "pflag" is close to "pflaf"`},                 // one letter wrong
		{"egotator", "negotiator", `name "negotiator" is close to "egotator"`}, // two edits in 8 letters
		{"refund-wroker", "refund", `name "refund-worker" is close to "refund-wroker"`},
		{"i18n", "i18n", `name "internationalization" is close to "i18n"`}, // numeronym
	} {
		hits := ix.Search(c.query, nil)
		if len(hits) == 0 || hits[0].ID != c.want {
			t.Errorf("%q: %v, want %s first", c.query, ids(hits), c.want)
			continue
		}
		if !hasReason(&hits[0], c.reason) {
			t.Errorf("%q: reasons %q, want %q", c.query, hits[0].Reasons, c.reason)
		}
		checkHits(t, c.query, hits)
	}
	// The bound: two edits in a word of 4–7 runes, and any edit in a word
	// of 3, are too many.
	for _, q := range []string{"cbxra", "snxpx", "uid", "cxbrx-x"} {
		for _, h := range ix.Search(q, nil) {
			if h.ID == "cobra" || h.ID == "snappy" || h.ID == "uuid" {
				t.Errorf("%q found %s: %v", q, h.ID, h.Reasons)
			}
		}
	}
}

func TestFuzzyRanksBelowLexical(t *testing.T) {
	ix := goModules()
	ix.Put(Doc{ID: "essay", SortKey: "zzz", Name: "notes", Readme: "a cobar is a fish"})
	ix.Put(Doc{ID: "cobra-cli", SortKey: "zz", Name: "cobra-cli", Description: "cobar"})
	hits := ix.Search("cobar", nil)
	if got := ids(hits); len(got) < 3 || !slices.Contains(got[:2], "essay") || !slices.Contains(got[:2], "cobra-cli") || got[2] != "cobra" {
		t.Fatalf("got %v: the lexical hits first, then the fuzzy one", got)
	}
	for i, h := range hits {
		want := TierLexical
		if h.ID == "cobra" {
			want = TierFuzzy
		}
		if h.Tier != want {
			t.Errorf("%s: tier %v, want %v", h.ID, h.Tier, want)
		}
		if i > 0 && h.Score > hits[i-1].Score {
			t.Errorf("score increases at %d", i)
		}
	}
	// A document that matched one word exactly is lexical, and a fuzzy
	// match of another word lifts it above one that only matched the first.
	ix = build(
		Doc{ID: "exact", Name: "spdx-exceptions"},
		Doc{ID: "other", Name: "spdx-license-ids"},
	)
	hits = ix.Search("spdx-exeptions", nil)
	if got := ids(hits); !slices.Equal(got, []string{"exact", "other"}) || hits[0].Tier != TierLexical {
		t.Fatalf("got %v (%v)", got, hits)
	}
	if !hasReason(&hits[0], `name "spdx-exceptions" is close to "spdx-exeptions"`) {
		t.Errorf("reasons %q", hits[0].Reasons)
	}
}

// A whole name close to the whole query comes first among fuzzy hits, as
// the exact tiers do for the query itself.
func TestFuzzyWholeNameFirst(t *testing.T) {
	ix := build(
		Doc{ID: "report", SortKey: "a", Name: "npm-audit-report", Packages: []string{"npm-audit-report"}, Keywords: []string{"npm"}},
		Doc{ID: "log", SortKey: "b", Name: "audit-log", Packages: []string{"git.example.com/sec/audit-log"}},
		Doc{ID: "audit", SortKey: "c", Name: "audit"},
	)
	if got := ids(ix.Search("audsit", nil)); !slices.Equal(got, []string{"audit", "report", "log"}) && !slices.Equal(got, []string{"audit", "log", "report"}) {
		t.Fatalf("got %v, want audit first", got)
	}
}

func TestHostWordsQualifyOnly(t *testing.T) {
	ix := goModules()
	hits := ix.Search("github.com/spf13/cobra", nil)
	if got := ids(hits); len(got) == 0 || got[0] != "cobra" || slices.Contains(got, "snappy") || slices.Contains(got, "uuid") {
		t.Fatalf("got %v: cobra, and nothing only because it is on github.com", got)
	}
	for _, h := range hits {
		for _, r := range h.Reasons {
			for _, host := range []string{`"github.com"`, `"github"`, `"com"`} {
				if strings.Contains(r, host) {
					t.Errorf("%s: reason %q credits a host word", h.ID, r)
				}
			}
		}
	}
	// Same owner: pflag matches spf13, so it may follow; a misspelt
	// module path still finds its module.
	if got := ids(ix.Search("github.com/spf13/cobar", nil)); len(got) == 0 || got[0] != "cobra" || slices.Contains(got, "snappy") {
		t.Errorf("misspelt path: %v", got)
	}
	if got := ids(ix.Search("https://github.com/google/uuid.git", nil)); len(got) != 1 || got[0] != "uuid" {
		t.Errorf("URL: %v", got)
	}
	// A query of host words alone still searches for them.
	if got := ids(ix.Search("npm", nil)); len(got) == 0 || got[0] != "npm" {
		t.Errorf("npm: %v", got)
	}
	if got := ids(ix.Search("github.com", nil)); len(got) != 4 {
		t.Errorf("github.com: %v, want the four modules", got)
	}
	if h := ix.Search("@", nil); h != nil {
		t.Errorf("@: %v", h)
	}
	// Host words still tell apart what the other words found alike.
	ix = build(
		Doc{ID: "py", SortKey: "a", Name: "yaml", Packages: []string{"yaml"}, Description: "yaml for python"},
		Doc{ID: "go", SortKey: "b", Name: "yaml", Packages: []string{"github.com/acme/yaml"}, Description: "yaml for go"},
	)
	if got := ids(ix.Search("github.com yaml parser", nil)); !slices.Equal(got, []string{"go", "py"}) {
		t.Errorf("tie-break: %v", got)
	}
}

func TestUnwrappedPackages(t *testing.T) {
	ix := goModules()
	for _, c := range []struct{ query, want, reason string }{
		{"https://github.com/spf13/pflag", "pflag", `package "github.com/spf13/pflag" matches "github.com/spf13/pflag" (host and command words dropped)`},
		{"git@github.com:spf13/pflag.git", "pflag", ""},
		{"pkg.go.dev/github.com/google/uuid@v1.6.0", "uuid", ""},
		{"go get github.com/golang/snappy", "snappy", ""},
		{"https://www.npmjs.com/package/@acme/refund-worker", "refund", `package "@acme/refund-worker" matches "@acme/refund-worker" (host and command words dropped)`},
		{"npm install @acme/refund-worker", "refund", ""},
		{"npm negotiator", "negotiator", ""},
		{"pip install fastapi", "fastapi", ""},
		{"https://pypi.org/project/fastapi/", "fastapi", ""},
	} {
		hits := ix.Search(c.query, nil)
		if len(hits) == 0 || hits[0].ID != c.want || hits[0].Tier != TierPackage {
			t.Errorf("%q: %v", c.query, hits)
			continue
		}
		if c.reason != "" && !hasReason(&hits[0], c.reason) {
			t.Errorf("%q: reasons %q, want %q", c.query, hits[0].Reasons, c.reason)
		}
	}
}

func TestUnwrap(t *testing.T) {
	for in, want := range map[string]string{
		"https://github.com/a/b.git":                 "github.com/a/b",
		"http://github.com/a/b/":                     "github.com/a/b",
		"git@github.com:a/b.git":                     "github.com/a/b",
		"ssh://git@gitlab.com/a/b":                   "gitlab.com/a/b",
		"https://github.com/a/b?tab=readme#install":  "github.com/a/b",
		"www.npmjs.com/package/left-pad":             "left-pad",
		"https://www.npmjs.com/package/@s/x/v/1.0.0": "@s/x",
		"https://pypi.org/project/requests/2.31.0/":  "requests",
		"pkg.go.dev/golang.org/x/sys@v0.1.0":         "golang.org/x/sys",
		"crates.io/crates/serde":                     "serde",
		"npm install left-pad":                       "left-pad",
		"npm i -D x":                                 "", // flags: not a command this understands
		"go get golang.org/x/sys":                    "golang.org/x/sys",
		"pip install requests":                       "requests",
		"npm left-pad":                               "left-pad",
		"npm:left-pad":                               "left-pad",
		"left-pad":                                   "",
		"c#":                                         "",
		"order sdk":                                  "",
		"github.com/a/b":                             "",
	} {
		if got := unwrap(in); got != want {
			t.Errorf("unwrap(%q) = %q, want %q", in, got, want)
		}
	}
	if got := trimURL("c# client"); got != "c# client" {
		t.Errorf("trimURL cut a word: %q", got)
	}
}

func TestHostGroups(t *testing.T) {
	q := parseQuery("https://www.npmjs.com/package/left-pad")
	var content []string
	for i, term := range q.terms {
		if q.content&(1<<i) != 0 {
			content = append(content, term)
		}
	}
	if want := []string{"left", "pad", "leftpad"}; !slices.Equal(content, want) {
		t.Errorf("content terms %q, want %q", content, want)
	}
	q = parseQuery("npm install")
	if q.content != 1<<len(q.terms)-1 {
		t.Errorf("a query of host words only: content %b of %q", q.content, q.terms)
	}
	q = parseQuery("socket.io client")
	if q.content != 1<<len(q.terms)-1 {
		t.Errorf("socket.io is a name, not a host: %q content %b", q.terms, q.content)
	}
}

func TestWordsRunTogether(t *testing.T) {
	ix := goModules()
	ix.Put(Doc{ID: "fast", SortKey: "0", Name: "fast-json", Description: "a fast api client"})
	for q, want := range map[string]string{"fast api framework": "fastapi", "oauth 2 tokens": "oauth"} {
		hits := ix.Search(q, nil)
		if len(hits) == 0 || hits[0].ID != want {
			t.Errorf("%q: %v, want %s first", q, hits, want)
		}
	}
	hits := ix.Search("fast api framework", nil)
	if !hasReason(&hits[0], `name "fastapi" matches "fastapi"`) {
		t.Errorf("reasons %q", hits[0].Reasons)
	}
	// Without the joined form, the description match of both words would
	// come first.
	if q := parseQuery("fast api framework"); len(q.pairs) != 2 || q.pairs[0].text != "fastapi" {
		t.Errorf("pairs %+v", q.pairs)
	}
}

func TestValueReasons(t *testing.T) {
	ix := build(
		Doc{ID: "r", Name: "billing", Packages: []string{"@acme/refund-worker"}, Aliases: []string{"payBack"}},
		Doc{ID: "s", Name: "OrderServices", Packages: []string{"github.com/acme/order-services/v2"}},
		Doc{ID: "l", Name: "tiny-libraries"},
	)
	for q, want := range map[string]string{
		"refunds":                    `package "@acme/refund-worker" matches "refund"`,
		"refund worker":              `package "@acme/refund-worker" matches "refund worker" (without scope, ignoring separators)`,
		"worker refund":              `package "@acme/refund-worker" matches "refund", "worker"`,
		"refund-worker payment":      `package "@acme/refund-worker" matches "refund-worker"`,
		"payback":                    `alias "payBack" matches "payback"`,
		"pay back now":               `alias "payBack" matches "payBack"`,
		"back":                       `alias "payBack" matches "Back"`,
		"service order":              `name "OrderServices" matches "Order", "Services"`,
		"order service":              `name "OrderServices" matches "OrderServices"`,
		"library":                    `name "tiny-libraries" matches "libraries"`,
		"refnd":                      `package "@acme/refund-worker" matches "refund" (close to "refnd")`,
		"github.com/acme/order-serv": `name "OrderServices" is close to "order-serv"`,
		"acme ordr-services":         `package "github.com/acme/order-services/v2" matches "acme", "order-services" (close to "ordr-services")`,
	} {
		hits := ix.Search(q, nil)
		if len(hits) == 0 || !hasReason(&hits[0], want) {
			t.Errorf("%q: %v, want reason %q", q, hits, want)
		}
	}
}

// Values quoted in reasons are cleaned and bounded like query text.
func TestValueReasonsAreSafe(t *testing.T) {
	long := "refund" + strings.Repeat("-x", 60)
	ix := build(
		Doc{ID: "bidi", Name: "refund\u202e\u200btool\x1b[31m\n", Packages: []string{"@evil/\"refund\"\\"}},
		Doc{ID: "long", Name: long},
	)
	for _, h := range ix.Search("refund", nil) {
		if len(h.Reasons) == 0 {
			t.Fatalf("%s: no reason", h.ID)
		}
		for _, r := range h.Reasons {
			if strings.ContainsAny(r, "\u202e\u200b\x1b\n") || utf8.RuneCountInString(r) > 120 || !utf8.ValidString(r) {
				t.Errorf("%s: unsafe reason %q", h.ID, r)
			}
		}
		checkHits(t, "refund", []Hit{h})
	}
	hits := ix.Search("refund", nil)
	if h := find(hits, "bidi"); !hasReason(h, `name "refundtool[31m" matches "refundtool"`) && !hasReason(h, `name "refundtool[31m" matches "refund"`) {
		t.Errorf("bidi: %q", h.Reasons)
	}
	if h := find(hits, "long"); !strings.Contains(h.Reasons[0], "…") {
		t.Errorf("long name not cut: %q", h.Reasons)
	}
}

func TestSuggest(t *testing.T) {
	ix := goModules()
	if got := ix.Suggest("cobar", nil, 5); !slices.Equal(got, []string{"cobra"}) {
		t.Errorf("cobar: %q", got)
	}
	if got := ix.Suggest("refund-wroker", nil, 5); !slices.Equal(got, []string{"refund-worker"}) {
		t.Errorf("refund-wroker: %q", got)
	}
	// Several words run together: the compound of a name.
	if got := ix.Suggest("refund wroker", nil, 5); len(got) == 0 || got[0] != "refund-worker" {
		t.Errorf("refund wroker: %q", got)
	}
	// A package name when the name does not hold the word.
	ix.Put(Doc{ID: "x", SortKey: "x", Name: "thing", Packages: []string{"@acme/lodash-utils"}})
	if got := ix.Suggest("lodahs", nil, 5); !slices.Equal(got, []string{"@acme/lodash-utils"}) {
		t.Errorf("lodahs: %q", got)
	}
	// The keep filter decides before anything: no trace of the document.
	keep := func(id string) bool { return id != "cobra" }
	if got := ix.Suggest("cobar", keep, 5); got != nil {
		t.Errorf("filtered: %q", got)
	}
	for _, q := range []string{"", "   ", "zzzzzzzz", "ab", "cobar"} {
		if got := ix.Suggest(q, nil, 0); got != nil {
			t.Errorf("%q n=0: %q", q, got)
		}
	}
	if got := ix.Suggest("zzzzzzzzz", nil, 5); got != nil {
		t.Errorf("nothing close: %q", got)
	}
	// One spelling once, whatever its case; at most n; fewer edits first.
	ix = build(
		Doc{ID: "a", SortKey: "a", Name: "Parser"}, Doc{ID: "b", SortKey: "b", Name: "parser"},
		Doc{ID: "c", SortKey: "c", Name: "parsec"}, Doc{ID: "d", SortKey: "d", Name: "parsers"},
		Doc{ID: "e", SortKey: "e", Name: "sparse"},
	)
	if got := ix.Suggest("parsr", nil, 10); !slices.Equal(got, []string{"Parser", "parsers"}) {
		t.Errorf("parsr: %q", got)
	}
	if got := ix.Suggest("parsr", nil, 1); !slices.Equal(got, []string{"Parser"}) {
		t.Errorf("n=1: %q", got)
	}
}

// The fuzzy tier and Suggest answer for a filtered index exactly what an
// index without the filtered documents answers (scores apart): which
// documents match never depends on another document.
func TestFuzzyKeepFilterEquivalence(t *testing.T) {
	c := newCorpus(17)
	docs := c.docs(400)
	ix := build(docs...)
	keep := func(id string) bool { return id[len(id)-1] != '4' && id[len(id)-1] != '7' }
	var kept []Doc
	for _, d := range docs {
		if keep(d.ID) {
			kept = append(kept, d)
		}
	}
	without := build(kept...)
	queries := append(c.typos(docs, 150), "cobar", "github.com/spf13/cobra", "k8s")
	// Scores may differ (corpus statistics), and with them the order of
	// near ties: the hits and their tiers may not, nor their reasons where
	// both answers explain them alike (see explainHits).
	type seen struct {
		hit Hit
		pos int
	}
	byID := func(hits []Hit) map[string]seen {
		m := map[string]seen{}
		for i, h := range hits {
			h.Score = 0
			m[h.ID] = seen{h, i}
		}
		return m
	}
	for _, q := range queries {
		a, b := byID(ix.Search(q, keep)), byID(without.Search(q, nil))
		if len(a) != len(b) {
			t.Fatalf("%q: %d hits filtered, %d without", q, len(a), len(b))
		}
		for id, x := range a {
			y, ok := b[id]
			if !ok || x.hit.Tier != y.hit.Tier {
				t.Fatalf("%q: %s: filtered %+v, without %+v", q, id, x.hit, y.hit)
			}
			if (x.pos < explainHits) == (y.pos < explainHits) && !reflect.DeepEqual(x.hit.Reasons, y.hit.Reasons) {
				t.Fatalf("%q: %s: reasons %q vs %q", q, id, x.hit.Reasons, y.hit.Reasons)
			}
		}
		if sa, sb := ix.Suggest(q, keep, 8), without.Suggest(q, nil, 8); !slices.Equal(sa, sb) {
			t.Fatalf("%q: suggestions %q vs %q", q, sa, sb)
		}
	}
}

// TestFuzzyDictionary checks the dictionary after random puts, replaces
// and deletes against one computed from the live documents: every term of
// four runes or more with a letter that some live document has in a name,
// alias or package name — and nothing else.
func TestFuzzyDictionary(t *testing.T) {
	c := newCorpus(23)
	pool := c.docs(300)
	r := rand.New(rand.NewPCG(5, 6))
	ix := New()
	for step := range 2000 {
		d := pool[r.IntN(len(pool))]
		switch r.IntN(3) {
		case 0:
			ix.Delete(d.ID)
		case 1:
			o := pool[r.IntN(len(pool))]
			o.ID = d.ID
			ix.Put(o)
		default:
			ix.Put(d)
		}
		if step%250 != 249 {
			continue
		}
		want := map[string]uint32{}
		for slot, e := range ix.docs {
			if !e.live {
				continue
			}
			for it := (termIter{b: e.terms}); ; {
				id, ok := it.next()
				if !ok {
					break
				}
				i, _ := searchSlot(ix.terms[id].post, uint32(slot))
				if ix.terms[id].post[i].tfs&nameTFs != 0 {
					want[ix.terms[id].text]++
				}
			}
		}
		got := map[string]bool{}
		for l, b := range ix.fuzzy {
			if len(b.ids) != len(b.sigs) {
				t.Fatalf("bucket %d: %d ids, %d signatures", l, len(b.ids), len(b.sigs))
			}
			for j, id := range b.ids {
				te := ix.terms[id]
				if n, ok := fuzzyTerm(te.text); !ok || n != l || int(te.fpos) != j+1 || b.sigs[j] != letterSig(te.text) {
					t.Fatalf("bucket %d: %q misplaced (fpos %d at %d)", l, te.text, te.fpos, j)
				}
				if got[te.text] {
					t.Fatalf("%q twice", te.text)
				}
				got[te.text] = true
			}
		}
		for text, n := range want {
			id := ix.dict[text]
			if ix.terms[id].ndf != n {
				t.Fatalf("%q: ndf %d, want %d", text, ix.terms[id].ndf, n)
			}
			if _, ok := fuzzyTerm(text); ok != got[text] {
				t.Fatalf("%q: in dictionary %v, want %v", text, got[text], ok)
			}
		}
		for text := range got {
			if want[text] == 0 {
				t.Fatalf("%q in the dictionary, in no name", text)
			}
		}
	}
}

// osaRef is the textbook optimal-string-alignment table over runes.
func osaRef(a, b string) int {
	x, y := []rune(a), []rune(b)
	d := make([][]int, len(x)+1)
	for i := range d {
		d[i] = make([]int, len(y)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(x); i++ {
		for j := 1; j <= len(y); j++ {
			c := 1
			if x[i-1] == y[j-1] {
				c = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+c)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(x)][len(y)]
}

func TestEditsWithin(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int // the true distance (editsWithin caps at k+1)
	}{
		{"cobra", "cobar", 1}, {"snappy", "snapy", 1}, {"abc", "abc", 0}, {"ca", "abc", 3},
		{"kitten", "sitting", 3}, {"negotiator", "egotator", 2}, {"", "abcd", 4}, {"ab", "ba", 1},
		{"über", "ubre", 2}, {"日本語", "日語本", 1}, {"abcdef", "badcfe", 3},
	} {
		if ref := osaRef(c.a, c.b); ref != c.want {
			t.Fatalf("reference %q %q = %d, want %d", c.a, c.b, ref, c.want)
		}
		for k := range 4 {
			var ra, rb [maxTermLen]rune
			if got := editsWithin(c.a, c.b, k, &ra, &rb); got != min(c.want, k+1) {
				t.Errorf("editsWithin(%q, %q, %d) = %d, want %d", c.a, c.b, k, got, min(c.want, k+1))
			}
		}
	}
	r := rand.New(rand.NewPCG(7, 8))
	const alphabet = "abcab"
	for range 20000 {
		w := func() string {
			b := make([]byte, r.IntN(9))
			for i := range b {
				b[i] = alphabet[r.IntN(len(alphabet))]
			}
			return string(b)
		}
		a, b := w(), w()
		k := r.IntN(3)
		var ra, rb [maxTermLen]rune
		if got, want := editsWithin(a, b, k, &ra, &rb), min(osaRef(a, b), k+1); got != want {
			t.Fatalf("editsWithin(%q, %q, %d) = %d, want %d", a, b, k, got, want)
		}
	}
}

func TestLetterSigBound(t *testing.T) {
	// Words within k edits differ in at most 2k signature bits: the
	// prefilter never turns a real candidate away.
	r := rand.New(rand.NewPCG(9, 10))
	for range 20000 {
		b := make([]byte, 4+r.IntN(8))
		for i := range b {
			b[i] = "aabbcdz09é"[r.IntN(10)]
		}
		a := strings.ToValidUTF8(string(b), "x")
		e := []rune(a)
		for range 1 + r.IntN(2) {
			p := r.IntN(len(e))
			switch r.IntN(4) {
			case 0:
				e = slices.Delete(e, p, p+1)
			case 1:
				e[p] = rune("abcz9é"[r.IntN(5)])
			case 2:
				e = slices.Insert(e, p, 'q')
			default:
				if p+1 < len(e) {
					e[p], e[p+1] = e[p+1], e[p]
				}
			}
			if len(e) == 0 {
				e = []rune{'a'}
			}
		}
		d := osaRef(a, string(e))
		if n := popcount(letterSig(a) ^ letterSig(string(e))); n > 2*d {
			t.Fatalf("%q %q: %d edits, %d signature bits", a, string(e), d, n)
		}
	}
}

// The expansion finds exactly what a scan of the dictionary with the
// reference distance finds.
func TestExpandMatchesScan(t *testing.T) {
	docs := newCorpus(29).docs(500)
	ix := build(docs...)
	var all []uint32
	for _, b := range ix.fuzzy {
		all = append(all, b.ids...)
	}
	// Misspellings anywhere, the first letters included.
	queries := append(newCorpus(31).typos(docs, 200), "k8s", "ab", "documentation")
	r := rand.New(rand.NewPCG(13, 14))
	for range 300 {
		w := ix.terms[all[r.IntN(len(all))]].text
		b := []byte(w)
		for range 1 + r.IntN(2) {
			p := r.IntN(min(3, len(b)))
			switch r.IntN(4) {
			case 0:
				b = slices.Delete(b, p, p+1)
			case 1:
				b[p] = byte('a' + r.IntN(26))
			case 2:
				b = slices.Insert(b, p, byte('a'+r.IntN(26)))
			default:
				if p+1 < len(b) {
					b[p], b[p+1] = b[p+1], b[p]
				}
			}
		}
		queries = append(queries, string(b))
	}
	var dups []string
	defer func() {
		if len(dups) > 0 {
			t.Errorf("targets found twice: %q", dups)
		}
	}()
	for _, q := range queries {
		pq := parseQuery(q)
		got := map[string]int{}
		for _, t := range ix.expand(pq.fzKeys, nil) {
			key := fmt.Sprint(t.qi, ix.terms[t.id].text)
			if _, dup := got[key]; dup {
				dups = append(dups, q+": "+key)
			}
			got[key] = int(t.dist)
		}
		want := map[string]int{}
		for _, k := range pq.fzKeys {
			for _, id := range all {
				text := ix.terms[id].text
				if d := osaRef(k.text, text); d <= k.d {
					key := fmt.Sprint(k.qi, text)
					if old, ok := want[key]; !ok || d < old {
						want[key] = d
					}
				}
				if n := numeronym(k.text); n > 0 && len(text) == n+2 && text[0] == k.text[0] && text[len(text)-1] == k.text[len(k.text)-1] {
					if _, ok := want[fmt.Sprint(k.qi, text)]; !ok {
						want[fmt.Sprint(k.qi, text)] = 1
					}
				}
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: expand %v, scan %v", q, got, want)
		}
	}
}

// Reasons quote values for the first explainHits hits of an answer and
// use the query's words after: the same for Search and SearchTop.
func TestExplainHits(t *testing.T) {
	var docs []Doc
	for i := range explainHits + 50 {
		docs = append(docs, Doc{ID: fmt.Sprintf("d%03d", i), Name: fmt.Sprintf("refund-worker-%d", i)})
	}
	ix := build(docs...)
	for _, q := range []string{"refunds", "refnds"} {
		hits := ix.Search(q, nil)
		if len(hits) != len(docs) {
			t.Fatalf("%q: %d hits", q, len(hits))
		}
		first, last := hits[0].Reasons[0], hits[len(hits)-1].Reasons[0]
		if !strings.HasPrefix(first, `name "refund-worker-`) {
			t.Errorf("%q: first hit: %q", q, first)
		}
		if want := map[string]string{"refunds": `name contains "refunds"`, "refnds": `name is close to "refnds"`}[q]; last != want {
			t.Errorf("%q: last hit: %q, want %q", q, last, want)
		}
		top, _ := ix.SearchTop(q, nil, explainHits+10)
		if !reflect.DeepEqual(top, hits[:explainHits+10]) {
			t.Errorf("%q: SearchTop differs from Search", q)
		}
	}
}

func TestFoldEq(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	pieces := []string{"a", "B", "Ｃ", "ß", "İ", "Σ", "ς", " ", "-", "\xff", "日", "ǅ", "K"}
	for range 20000 {
		var b strings.Builder
		for range r.IntN(6) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		s := b.String()
		if !foldEq(s, lowerFold(s)) {
			t.Fatalf("foldEq(%q, lowerFold) = false", s)
		}
		o := pieces[r.IntN(len(pieces))] + s
		if got, want := foldEq(o, lowerFold(s)), lowerFold(o) == lowerFold(s); got != want {
			t.Fatalf("foldEq(%q, %q) = %v, want %v", o, lowerFold(s), got, want)
		}
	}
}
