package search

import (
	"slices"
	"strings"
	"testing"
)

func terms(s string) []string {
	var tk tokenizer
	var out []string
	tk.tokenize(s, func(_ tokKind, term []byte, _, _, _ int) { out = append(out, string(term)) })
	return out
}

func TestTokenize(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
	}{
		{"camel", "orderSdk", []string{"order", "sdk", "ordersdk"}},
		{"pascal with acronym", "XMLParser", []string{"xml", "parser", "xmlparser"}},
		{"snake", "order_sdk", []string{"order", "sdk", "ordersdk"}},
		{"kebab", "react-router-dom", []string{"react", "router", "dom", "reactrouterdom"}},
		{"scope", "@company/order-sdk", []string{"company", "order", "sdk", "ordersdk"}},
		{"dots", "node.js", []string{"node", "js", "nodej"}},
		{"go module path", "github.com/acme/orders/v2", []string{"github", "com", "githubcom", "acme", "order", "v2"}},
		{"maven", "org.acme:orders-core", []string{"org", "acme", "orgacm", "order", "core", "orderscor"}},
		{"letters and digits", "base64 oauth2Client", []string{"base", "base64", "oauth", "client", "oauth2client"}},
		{"numbers alone or apart stay", "2024 handler-1823", []string{"2024", "handler", "1823", "handler1823"}},
		{"single letters by digits are silent", "k8s x86_64", []string{"k8s", "x86", "64", "x8664"}},
		{"fullwidth digits", "ｖ２", []string{"v2"}},
		{"camel run inside kebab", "reactRouter-dom", []string{"react", "router", "reactrouter", "dom", "reactrouterdom"}},
		{"spaces do not join", "order sdk", []string{"order", "sdk"}},
		{"trailing dot is not a compound", "client. The", []string{"client", "the"}},
		{"cjk bigrams", "订单服务客户端", []string{"订单", "单服", "服务", "务客", "客户", "户端"}},
		{"single cjk char", "库", []string{"库"}},
		{"cjk split by punctuation", "订单，客户端", []string{"订单", "客户", "户端"}},
		{"cjk split by hyphen", "订单-服务", []string{"订单", "服务"}},
		{"mixed chinese and latin", "订单SDK客户端", []string{"订单", "sdk", "客户", "户端"}},
		{"japanese kana", "テキスト", []string{"テキ", "キス", "スト"}},
		{"korean", "한국어", []string{"한국", "국어"}},
		{"fullwidth ascii", "ＡＢＣ", []string{"abc"}},
		{"unicode letters", "Über Café", []string{"über", "café"}},
		{"plurals", "services libraries classes caches statuses redis", []string{"servic", "library", "class", "cach", "statu", "redi"}},
		{"punctuation only", "!!! ??? ///", nil},
		{"empty", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := terms(tt.in); !slices.Equal(got, tt.want) {
				t.Errorf("terms(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestTokenizeLongTermsAreCut(t *testing.T) {
	long := strings.Repeat("ab", 200)
	got := terms(long)
	if len(got) != 1 || len(got[0]) != maxTermLen {
		t.Fatalf("got %d terms, first %d bytes", len(got), len(got[0]))
	}
	// A compound whose joined form would be too long keeps only its parts.
	parts := strings.Repeat("abcdefghij-", 10)
	for _, tm := range terms(parts) {
		if len(tm) > maxTermLen {
			t.Fatalf("term of %d bytes", len(tm))
		}
	}
	// Cutting never splits a rune.
	for _, tm := range terms(strings.Repeat("é", 100)) {
		if !strings.HasPrefix(strings.Repeat("é", 100), tm) {
			t.Fatalf("split rune: %q", tm)
		}
	}
}

func TestStem(t *testing.T) {
	pairs := [][2]string{
		{"service", "services"}, {"library", "libraries"}, {"class", "classes"},
		{"cache", "caches"}, {"box", "boxes"}, {"match", "matches"}, {"type", "types"},
		{"case", "cases"}, {"database", "databases"}, {"api", "apis"}, {"use", "uses"}, {"menu", "menus"}, {"idea", "ideas"}, {"alias", "aliases"}, {"response", "responses"}, {"house", "houses"}, {"fix", "fixes"}, {"index", "indexes"},
		{"status", "statuses"}, {"address", "addresses"}, {"process", "processes"},
	}
	for _, p := range pairs {
		a, b := string(stem([]byte(p[0]))), string(stem([]byte(p[1])))
		if a != b {
			t.Errorf("stem(%q)=%q, stem(%q)=%q: want equal", p[0], a, p[1], b)
		}
	}
	// Left alone: short words, -ing/-ed, words ending in ss, non-ASCII.
	for _, w := range []string{"bus", "string", "embedded", "need", "class", "access", "über", "k8s"} {
		if got := string(stem([]byte(w))); got != w {
			t.Errorf("stem(%q) = %q, want unchanged", w, got)
		}
	}
}

func TestNormalize(t *testing.T) {
	for _, s := range []string{"react-router-dom", "react router dom", "react_router_dom", "reactRouterDom", "React.Router.DOM", " REACT  ROUTER DOM "} {
		if got := normalize(s); got != "reactrouterdom" {
			t.Errorf("normalize(%q) = %q", s, got)
		}
	}
	if got := normalize("@company/order-sdk"); got != "companyordersdk" {
		t.Errorf("got %q", got)
	}
	if got := normalize("订单 服务"); got != "订单服务" {
		t.Errorf("got %q", got)
	}
	if got := normalize("!!!"); got != "" {
		t.Errorf("got %q", got)
	}
}

func TestPartialForms(t *testing.T) {
	tests := map[string]string{
		"@company/order-sdk":        "order-sdk",
		"github.com/acme/orders":    "orders",
		"github.com/acme/orders/v2": "orders",
		"org.acme:orders-core":      "orders-core",
		"org.acme:orders-core:1.2":  "orders-core",
		"plain":                     "",
	}
	for in, want := range tests {
		got := ""
		if pf := partialForms(in); len(pf) > 0 {
			got = pf[0].form
		}
		if got != want {
			t.Errorf("partialForms(%q) = %q, want %q", in, got, want)
		}
	}
}
