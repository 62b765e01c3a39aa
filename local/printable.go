package local

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Printable makes a name or path safe to print for a person on a terminal:
// control characters (C0, C1, DEL, so no escape sequence reaches the
// terminal), invalid UTF-8 bytes, and invisible format characters such as
// bidi overrides are shown as Go-style escapes (\x1b, \xff, \u202e), and a
// backslash is doubled so an escape cannot be forged. Everything else,
// Chinese included, is kept as it is. Every name or path the CLI prints for a
// person goes through it; MCP answers carry exact paths instead (JSON escapes
// them itself).
func Printable(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || r == '\\' || needsEscape(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\\':
			b.WriteString(`\\`)
		case needsEscape(r) && r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case needsEscape(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func needsEscape(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == 0x2028 || r == 0x2029
}
