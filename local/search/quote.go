package search

// Making text safe and short to show in a reason or suggestion.

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// bound cuts s to at most n runes, marking the cut.
func bound(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for range n {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i] + "…"
}

// quote makes text safe to show: cleaned (see clean), at most n runes, then
// quoted. strconv.Quote then only has quotes and backslashes left to
// escape, so a reason stays one short line.
func quote(s string, n int) string {
	if plain(s, n) {
		return `"` + s + `"` // what the rest would return, without its work
	}
	return strconv.Quote(clean(s, n))
}

// plain reports printable ASCII of at most n bytes that clean leaves alone
// and strconv.Quote does not escape: no quotes, backslashes, control
// characters or runs of spaces, none at the ends.
func plain(s string, n int) bool {
	if len(s) > n || s == "" || s[0] == ' ' || s[len(s)-1] == ' ' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < ' ' || c > '~' || c == '"' || c == '\\' || (c == ' ' && s[i-1] == ' ') {
			return false
		}
	}
	return true
}

// clean keeps printable characters only (control and format characters —
// bidi overrides, zero-width characters, tag characters — dropped,
// whitespace runs made one space, invalid UTF-8 replaced) and cuts the
// result to n runes, marking the cut. Document text goes through it before
// it is shown: local/meta.Clean does the same upstream, but this package
// must not rely on, or import, the code that reads files.
func clean(s string, n int) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		switch {
		case unicode.IsSpace(r):
			space = b.Len() > 0
			continue
		case !unicode.IsPrint(r) && r != utf8.RuneError:
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return bound(b.String(), n)
}

// writeQuoted writes quote(s, n) to b.
func writeQuoted(b *strings.Builder, s string, n int) {
	if plain(s, n) {
		b.WriteByte('"')
		b.WriteString(s)
		b.WriteByte('"')
		return
	}
	b.WriteString(strconv.Quote(clean(s, n)))
}
