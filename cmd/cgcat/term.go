package main

import (
	"io"
	"os"
	"strconv"
)

// termOut is how a command's stdout looks to a person: a terminal (with
// its size) or a pipe, and whether to colour. The layout follows the
// terminal (one line per project, a page that fits); scripts reading a
// pipe get stable records instead (see writeRecords).
type termOut struct {
	tty          bool
	color        bool
	width, lines int
}

// colorModes are the values of --color.
var colorModes = []string{"auto", "always", "never"}

// termOf looks at out. --color=always colours a pipe too; auto colours a
// terminal unless NO_COLOR is set (https://no-color.org) or TERM is dumb.
func termOf(g *globalOptions, out io.Writer) (termOut, error) {
	t := termOut{tty: isTerminal(out), width: 80, lines: 24}
	switch g.color {
	case "", "auto":
		t.color = t.tty && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb"
	case "always":
		t.color = true
	case "never":
	default:
		return t, usagef("--color %q: write auto, always or never", g.color)
	}
	if f, ok := out.(*os.File); ok && t.tty {
		if w, h, ok := terminalSize(f); ok {
			t.width, t.lines = w, h
		}
	}
	// COLUMNS and LINES, when set, win (as for ls): a way to test and to
	// override a terminal that reports nothing.
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		t.width = n
	}
	if n, err := strconv.Atoi(os.Getenv("LINES")); err == nil && n > 0 {
		t.lines = n
	}
	return t, nil
}

// paint wraps s in an SGR colour when colouring.
func (t termOut) paint(code, s string) string {
	if !t.color || s == "" {
		return s
	}
	return "\033[" + code + "m" + s + "\033[0m"
}

// SGR codes used.
const (
	sgrBold   = "1"
	sgrDim    = "2"
	sgrRed    = "31"
	sgrGreen  = "32"
	sgrYellow = "33"
	sgrCyan   = "36"
)
