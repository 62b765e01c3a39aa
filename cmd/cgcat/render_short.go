package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/server"
	"golang.org/x/text/width"
)

// The two layouts of a listing besides the detail view (render.go):
//
//   - short, on a terminal: one line per project, like fd or ghq list —
//     a state mark, the name, the path with the home directory as ~, and
//     a word when something is off (missing, weaker match, this
//     workspace); coloured unless NO_COLOR or --color=never.
//   - records, in a pipe: one line per project that scripts can rely on,
//     four tab-separated fields, NAME, PATH, ID, AVAILABILITY (PATH empty
//     when the project has none); no header, never coloured, every
//     field through local.Printable (a tab or a line break in a name is
//     written \x09, \x0a), every page.
//
// Both write only projects on stdout: what the answer says besides
// (no match, not set up, a note) goes to stderr.

// recordFields names the fields of a record line, in order (for help
// texts and the README).
const recordFields = "NAME<TAB>PATH<TAB>ID<TAB>AVAILABILITY"

// writeRecords writes the records layout.
func writeRecords(out io.Writer, ps []server.Project) error {
	var b strings.Builder
	for _, p := range ps {
		path := ""
		if p.ProjectPath != nil {
			path = *p.ProjectPath
		}
		b.WriteString(local.Printable(p.Name) + "\t" + local.Printable(path) + "\t" + local.Printable(p.ProjectID) + "\t" + local.Printable(p.Availability) + "\n")
	}
	_, err := io.WriteString(out, b.String())
	return err
}

// stateMark is a project's mark, its colour and the words that say what
// is off ("" for a project that is there).
func stateMark(p server.Project) (mark, color, words string) {
	switch {
	case p.Availability == server.AvailabilityHistorical:
		return "~", sgrCyan, "on machine " + local.Printable(p.MachineID) + ", not here"
	case p.ProjectPath != nil:
		return "✓", sgrGreen, ""
	case p.Availability == string(local.Missing):
		w := "missing"
		if p.MovedTo != "" {
			w = "moved: cgcat show " + p.MovedTo
		}
		return "✗", sgrRed, w
	case p.Availability == string(local.Inaccessible):
		return "?", sgrYellow, "inaccessible"
	}
	return "?", sgrYellow, "no path: " + local.Printable(p.Why)
}

// weaker reports a hit the search marked as a weaker match than the
// exact one above it.
func weaker(p server.Project) bool {
	return slices.ContainsFunc(p.Reason, func(r string) bool { return strings.HasPrefix(r, "weaker match") })
}

// shortPath shows a path with the home directory as ~.
func shortPath(p string) string {
	home, err := os.UserHomeDir()
	if err == nil && home != "" && home != "/" {
		if p == home {
			return "~"
		}
		if rest, ok := strings.CutPrefix(p, home+string(filepath.Separator)); ok {
			return "~" + string(filepath.Separator) + rest
		}
	}
	return p
}

// maxNameColumn bounds the name column of the short layout.
const maxNameColumn = 32

// writeShort writes the short layout: one line per project, each cut to
// the terminal's width (the path loses its start first: "…/b/c").
func writeShort(out io.Writer, t termOut, ps []server.Project) error {
	col := 0
	for _, p := range ps {
		col = max(col, cells(local.Printable(p.Name)))
	}
	col = min(col, maxNameColumn, max(8, t.width/3))
	var b strings.Builder
	for _, p := range ps {
		mark, color, words := stateMark(p)
		name := fitCells(local.Printable(p.Name), col)
		path := ""
		if p.ProjectPath != nil {
			path = local.Printable(shortPath(*p.ProjectPath))
		}
		switch {
		case p.Workspace == "self":
			words = strings.TrimSpace(words + " (this workspace)")
		case weaker(p):
			words = strings.TrimSpace(words + " (weaker match)")
		}
		room := t.width - 2 - col - 2
		if words != "" {
			room -= cells(words) + 2
		}
		if t.tty { // a pipe or a log keeps the whole path
			path = fitLeft(path, max(room, 12))
		}
		line := t.paint(color, mark) + " " + t.paint(sgrBold, name) + strings.Repeat(" ", col-cells(name)) + "  " + path
		if words != "" {
			line += "  " + t.paint(sgrYellow, words)
		}
		if weaker(p) {
			line = mark + " " + name + strings.Repeat(" ", col-cells(name)) + "  " + path + "  " + words
			line = t.paint(sgrDim, line)
		}
		b.WriteString(strings.TrimRight(line, " ") + "\n")
	}
	_, err := io.WriteString(out, b.String())
	return err
}

// cells is the width of s on a terminal: East Asian wide and full-width
// characters take two cells.
func cells(s string) int {
	n := 0
	for _, r := range s {
		n += runeCells(r)
	}
	return n
}

func runeCells(r rune) int {
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return 2
	}
	return 1
}

// fitCells cuts s to at most n cells, ending in "…" when cut.
func fitCells(s string, n int) string {
	if cells(s) <= n {
		return s
	}
	var b strings.Builder
	used := 0
	for _, r := range s {
		if used+runeCells(r) > n-1 {
			break
		}
		b.WriteRune(r)
		used += runeCells(r)
	}
	return b.String() + "…"
}

// fitLeft cuts s to at most n cells from the left, starting with "…".
func fitLeft(s string, n int) string {
	if cells(s) <= n {
		return s
	}
	rs := []rune(s)
	used, i := 0, len(rs)
	for i > 0 && used+runeCells(rs[i-1]) <= n-1 {
		i--
		used += runeCells(rs[i])
	}
	return "…" + string(rs[i:])
}

// writeNotes writes what an answer says besides its projects to stderr,
// for the short and records layouts: a status that is not ok in the CLI's
// words, the answer's message, and names to try instead.
func writeNotes(errOut io.Writer, e *server.Envelope, query string, t termOut) {
	what := ""
	if strings.TrimSpace(query) != "" {
		what = " matching " + quoted(query)
	}
	switch e.Status {
	case server.StatusOK:
	case server.StatusNoMatches:
		fmt.Fprintf(errOut, "cgcat: no project%s\n", what)
	default:
		fmt.Fprintf(errOut, "cgcat: %s\n", e.Status)
	}
	if e.Message != "" && e.Status != server.StatusNoMatches {
		fmt.Fprintln(errOut, t.paint(sgrDim, "cgcat: "+e.Message))
	}
	if len(e.DidYouMean) > 0 {
		qs := make([]string, len(e.DidYouMean))
		for i, s := range e.DidYouMean {
			qs[i] = quoted(s)
		}
		fmt.Fprintf(errOut, "cgcat: did you mean %s?\n", strings.Join(qs, ", "))
	}
}
