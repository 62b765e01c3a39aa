// Package doctor holds cgcat doctor's checks and its report: config, roots,
// data dir, store, leases, and each host's entries (cgcat's own and
// CodeGraph's), each check a line with a status, what was found and the fix.
// The command in package main gathers the inputs (the loaded config, where
// each host keeps its files), adds the GBrain checks it shares with `cgcat
// gbrain status`, and prints the report as text or JSON.
//
// Checks only read: doctor never creates the data dir, never writes a host
// file, and every process it starts to check an entry is closed before the
// check returns. Every name or path in a check's text goes through
// local.Printable.
package doctor

import (
	"encoding/json"
	"fmt"
	"io"
)

// Status orders from fine to broken.
type Status int

const (
	Info Status = iota
	OK
	Warn
	Fail
)

var statusNames = [...]string{"info", "ok", "warn", "fail"}

func (s Status) String() string { return statusNames[s] }

// Mark is the status as the text report shows it.
func (s Status) Mark() string {
	return [...]string{"·", "✓", "!", "✗"}[s]
}

// MarshalJSON writes the status as its name.
func (s Status) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }

// Check is one line of the report, with an optional fix and notes.
type Check struct {
	Status Status   `json:"status"`
	What   string   `json:"what"`
	Fix    string   `json:"fix,omitempty"`
	Notes  []string `json:"notes,omitempty"`
	// Code names a condition a program may test for (e.g.
	// "backend_incompatible", "will_prompt").
	Code string `json:"code,omitempty"`
}

// Okf, Infof, Warnf and Failf make checks; warnings and failures carry the
// fix (may be "").
func Okf(format string, a ...any) Check {
	return Check{Status: OK, What: fmt.Sprintf(format, a...)}
}
func Infof(format string, a ...any) Check {
	return Check{Status: Info, What: fmt.Sprintf(format, a...)}
}
func Warnf(fix, format string, a ...any) Check {
	return Check{Status: Warn, What: fmt.Sprintf(format, a...), Fix: fix}
}
func Failf(fix, format string, a ...any) Check {
	return Check{Status: Fail, What: fmt.Sprintf(format, a...), Fix: fix}
}

// Section is a titled group of checks.
type Section struct {
	Title  string  `json:"title"`
	Checks []Check `json:"checks"`
}

// Report is the whole doctor run.
type Report struct {
	Version  string    `json:"cgcatVersion"`
	Sections []Section `json:"sections"`
	Problems int       `json:"problems"`
	Warnings int       `json:"warnings"`
}

// Add appends a section and counts its problems and warnings.
func (r *Report) Add(title string, checks []Check) {
	r.Sections = append(r.Sections, Section{Title: title, Checks: checks})
	for _, c := range checks {
		switch c.Status {
		case Fail:
			r.Problems++
		case Warn:
			r.Warnings++
		}
	}
}

// Broken reports whether any check failed.
func (r *Report) Broken() bool { return r.Problems > 0 }

// Summary is the report's last line.
func (r *Report) Summary() string {
	switch {
	case r.Problems > 0:
		return fmt.Sprintf("%d problem(s) (✗) and %d warning(s) (!); fix the ✗ lines above", r.Problems, r.Warnings)
	case r.Warnings > 0:
		return fmt.Sprintf("nothing broken; %d warning(s) (!)", r.Warnings)
	}
	return "all checks passed"
}

// WriteText prints the report for a person.
func (r *Report) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "cgcat doctor (cgcat %s)\n", r.Version)
	for _, s := range r.Sections {
		fmt.Fprintln(w, s.Title)
		for _, c := range s.Checks {
			fmt.Fprintf(w, "  %s %s\n", c.Status.Mark(), c.What)
			for _, n := range c.Notes {
				fmt.Fprintf(w, "      %s\n", n)
			}
			if c.Fix != "" {
				fmt.Fprintf(w, "      fix: %s\n", c.Fix)
			}
		}
	}
	_, err := fmt.Fprintf(w, "summary: %s\n", r.Summary())
	return err
}

// WriteJSON prints the report as one JSON object.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(struct {
		*Report
		Summary string `json:"summary"`
	}{r, r.Summary()})
}
