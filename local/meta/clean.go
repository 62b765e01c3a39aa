package meta

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Clean makes untrusted text safe to show: it drops invalid UTF-8, terminal
// escape sequences, control and format characters (bidi overrides,
// zero-width characters, tag characters), variation selectors and other
// invisible fillers; collapses every run of white space to one space and
// trims the ends; and cuts the result to at most max runes, ending a cut
// with "…". max <= 0 means no cut.
//
// Clean is idempotent: Clean(Clean(s, n), n) == Clean(s, n).
func Clean(s string, max int) string {
	var b strings.Builder
	if max > 0 {
		b.Grow(min(len(s), 4*max+4))
	} else {
		b.Grow(len(s))
	}
	n := 0         // runes written
	space := false // a space is pending before the next visible rune
	last := 0      // b.Len() before the last visible rune, for the cut
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 {
			i++ // invalid byte
			continue
		}
		if r == 0x1b || (r >= 0x80 && r <= 0x9f && r != 0x85) { // NEL is white space
			i = skipEscape(s, i, r, size)
			continue
		}
		i += size
		switch {
		case unicode.IsSpace(r):
			space = b.Len() > 0
			continue
		case invisible(r):
			continue
		}
		if max > 0 && n == max {
			// One rune too many: cut back to max-1 runes and mark the cut.
			out := strings.TrimRight(b.String()[:last], " ")
			return out + "…"
		}
		if space {
			b.WriteByte(' ')
			n++
			space = false
			if max > 0 && n == max {
				// The space would be the last rune kept: cut here instead.
				return strings.TrimRight(b.String()[:b.Len()-1], " ") + "…"
			}
		}
		last = b.Len()
		b.WriteRune(r)
		n++
	}
	return b.String()
}

// invisible reports whether r carries no visible text: anything outside the
// graphic categories (controls, format characters such as bidi overrides,
// zero-width joiners and tag characters, private use, unassigned code
// points), variation selectors, and fillers that render as nothing.
func invisible(r rune) bool {
	if !unicode.IsGraphic(r) {
		return true
	}
	switch r {
	case 0x034f, 0x115f, 0x1160, 0x3164, 0xffa0:
		return true
	}
	return unicode.Is(unicode.Variation_Selector, r)
}

// skipEscape returns the index after the escape sequence or C1 control that
// starts at i with rune r of width size. Terminals would act on these, so
// their parameters go too, not only the introducer.
func skipEscape(s string, i int, r rune, size int) int {
	i += size
	if r == 0x1b {
		if i >= len(s) {
			return i
		}
		switch c := s[i]; c {
		case '[':
			r = 0x9b // CSI
		case ']':
			r = 0x9d // OSC
		case 'P', 'X', '^', '_':
			r = 0x90 // DCS, SOS, PM, APC: strings ended like OSC
		default:
			// ESC, intermediates 0x20–0x2f, one final byte.
			for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
				i++
			}
			if i < len(s) && s[i] >= 0x30 && s[i] <= 0x7e {
				i++
			}
			return i
		}
		i++
	}
	switch r {
	case 0x9b:
		// Parameters and intermediates, then a final byte 0x40–0x7e.
		for i < len(s) && s[i] >= 0x20 && s[i] <= 0x3f {
			i++
		}
		if i < len(s) && s[i] >= 0x40 && s[i] <= 0x7e {
			i++
		}
	case 0x90, 0x98, 0x9d, 0x9e, 0x9f:
		// A string, ended by BEL, ESC \ or ST (U+009C).
		for i < len(s) {
			switch {
			case s[i] == 0x07:
				return i + 1
			case s[i] == 0x1b && i+1 < len(s) && s[i+1] == '\\':
				return i + 2
			case strings.HasPrefix(s[i:], "\u009c"):
				return i + len("\u009c")
			}
			i++
		}
	}
	return i
}
