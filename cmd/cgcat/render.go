package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/server"
)

// The CLI twins' text for a person. Agents read server.Text, which names
// the tools and the cursor argument; a person gets the same facts with the
// CLI's own paging ("5 of 12 projects", --page, --all). Every name, path
// and description comes from project files: it is printed through
// local.Printable (no escape sequence reaches the terminal), and metadata
// is quoted, as data.

// listingView is where a page stands in the whole listing.
type listingView struct {
	query       string
	page, pages int
	limit       int
	all         bool
	again       func(page int) string // the command for another page; nil if unknown
}

// renderProjects renders `cgcat projects`.
func renderProjects(e *server.Envelope, v listingView) string {
	var b strings.Builder
	facts := catalogFacts(e)
	what := ""
	if strings.TrimSpace(v.query) != "" {
		what = " matching " + strconv.Quote(local.Printable(v.query))
	}
	switch e.Status {
	case server.StatusOK:
		fmt.Fprintf(&b, "%d of %d project(s)%s", len(e.Projects), e.Total, what)
		if !v.all && v.pages > 1 {
			fmt.Fprintf(&b, ", page %d of %d", v.page, v.pages)
		}
		b.WriteString(" " + facts + "\n")
	case server.StatusNoMatches:
		fmt.Fprintf(&b, "no project%s %s\n", what, facts)
	case server.StatusSetupRequired:
		b.WriteString("cgcat is not set up yet " + facts + "\n")
	default:
		fmt.Fprintf(&b, "%s %s\n", e.Status, facts)
	}
	if e.Message != "" {
		b.WriteString(e.Message + "\n")
	}
	if len(e.DidYouMean) > 0 {
		qs := make([]string, len(e.DidYouMean))
		for i, s := range e.DidYouMean {
			qs[i] = quoted(s)
		}
		b.WriteString("Did you mean: " + strings.Join(qs, ", ") + "? (cgcat projects NAME)\n")
	}
	for i, p := range e.Projects {
		n := i + 1
		if !v.all {
			n += (v.page - 1) * v.limit
		}
		b.WriteString("\n")
		writeProject(&b, fmt.Sprintf("%d. ", n), p)
	}
	if e.Status == server.StatusOK && !v.all && v.page < v.pages && v.again != nil {
		// Every word of the command is shell-quoted (shellWord): printable,
		// and pasted back into a shell it gives the same words.
		fmt.Fprintf(&b, "\nmore: %s  (or --all for all %d)\n", v.again(v.page+1), e.Total)
	}
	return b.String()
}

// renderResolve renders `cgcat resolve`.
func renderResolve(e *server.Envelope) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n", e.Status, catalogFacts(e))
	if e.Message != "" {
		b.WriteString(e.Message + "\n")
	}
	for _, p := range e.Projects {
		b.WriteString("\n")
		writeProject(&b, "", p)
	}
	return b.String()
}

func catalogFacts(e *server.Envelope) string {
	return fmt.Sprintf("(catalog revision %d, scan %s, coverage %s, GBrain %s)", e.CatalogRevision, e.ScanState, e.Coverage, e.GBrainState)
}

// writeProject writes one project: its name and id, then one fact a line.
func writeProject(b *strings.Builder, prefix string, p server.Project) {
	fmt.Fprintf(b, "%s%s  projectId=%s recordRevision=%d", prefix, quoted(p.Name), p.ProjectID, p.RecordRevision)
	if p.Workspace != "" {
		b.WriteString(" workspace=" + p.Workspace)
	}
	b.WriteString("\n")
	indent := strings.Repeat(" ", max(3, len(prefix)))
	line := func(label, text string) { b.WriteString(indent + label + ": " + text + "\n") }
	if p.ProjectPath != nil {
		line("projectPath", local.Printable(*p.ProjectPath))
	} else {
		line("projectPath", "none — "+local.Printable(p.Why))
	}
	if p.MovedTo != "" {
		line("movedTo", p.MovedTo+" (`cgcat resolve "+p.MovedTo+"` shows its path)")
	}
	if p.MachineID != "" {
		line("machine", local.Printable(p.MachineID))
	}
	line("state", fmt.Sprintf("availability=%s indexState=%s freshness=%s validatedAt=%s", p.Availability, p.IndexState, p.Freshness, p.ValidatedAt))
	if p.Branch != "" || p.Worktree {
		line("git", fmt.Sprintf("branch=%s worktree=%v", quoted(p.Branch), p.Worktree))
	}
	if len(p.Packages) > 0 {
		qs := make([]string, len(p.Packages))
		for i, pk := range p.Packages {
			qs[i] = quoted(pk)
		}
		line("packages", strings.Join(qs, ", "))
	}
	if p.Description != "" {
		line("description", quoted(p.Description))
	}
	if len(p.Reason) > 0 {
		line("reason", local.Printable(strings.Join(p.Reason, "; ")))
	}
	for _, w := range p.Warnings {
		line("warning", local.Printable(w))
	}
}

// quoted shows metadata as data: in quotes, printable.
func quoted(s string) string { return `"` + local.Printable(s) + `"` }
