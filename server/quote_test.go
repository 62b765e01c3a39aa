package server

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// quote's fast path gives exactly what encoding/json gives (HTML escaping
// off), for every kind of byte a name or description may hold.
func FuzzQuoteMatchesJSON(f *testing.F) {
	for _, s := range []string{"", "plain name", "订单 客户端", "a\"b", `back\slash`, "tab\there", "nl\n", "\x00\x1f\x7f",
		"\xff\xfe", "line\u2028sep\u2029", "<html>&amp;", "e\u0301", "\U0001F600", strings.Repeat("x", 300)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		want := strings.TrimSuffix(buf.String(), "\n")
		if got := quote(s); got != want {
			t.Fatalf("quote(%q) = %s, want %s", s, got, want)
		}
	})
}
