package main

import (
	"strings"
	"unicode/utf8"
)

// helpWidth is the column every help paragraph is wrapped at: the width of
// a classic terminal, so `cgcat X --help` reads the same on every command
// whether its text was written as one long line or already wrapped.
const helpWidth = 80

// wrapHelp wraps a command's long help at width columns, paragraph by
// paragraph (paragraphs are separated by a blank line). A paragraph that
// has an indented line is laid out by hand (an example, a table) and is
// kept as written; every other paragraph is joined into one and wrapped
// again, so help written as single 300-character lines and help already
// broken at odd places come out alike.
func wrapHelp(s string, width int) string {
	if s == "" {
		return s
	}
	paras := strings.Split(strings.TrimRight(s, "\n"), "\n\n")
	for i, p := range paras {
		if laidOut(p) {
			continue
		}
		paras[i] = wrapWords(strings.Fields(p), width)
	}
	return strings.Join(paras, "\n\n")
}

// laidOut reports a paragraph with an indented line.
func laidOut(p string) bool {
	for _, l := range strings.Split(p, "\n") {
		if strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t") {
			return true
		}
	}
	return false
}

// wrapWords fills lines of at most width runes (a longer word gets a
// line of its own).
func wrapWords(words []string, width int) string {
	var b strings.Builder
	col := 0
	for _, w := range words {
		n := utf8.RuneCountInString(w)
		switch {
		case col == 0:
		case col+1+n > width:
			b.WriteByte('\n')
			col = 0
		default:
			b.WriteByte(' ')
			col++
		}
		b.WriteString(w)
		col += n
	}
	return b.String()
}
