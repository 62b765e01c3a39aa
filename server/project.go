package server

import (
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/catalog"
	"github.com/cgcat/cgcat/local/meta"
	"github.com/cgcat/cgcat/local/pathid"
)

// project renders one record after its live re-check. The handoff is built
// from the checked root only, never from metadata.
func (f *Frontend) project(c *call, p *local.Project, ck catalog.Check, reasons []string, ws string, withHandoff bool) Project {
	sh := shownOf(p)
	out := Project{
		ProjectID:              p.ID,
		RecordRevision:         p.RecordRevision,
		Name:                   sh.name,
		Description:            sh.description,
		Reason:                 reasons,
		Availability:           string(ck.Availability),
		IndexState:             string(ck.IndexState),
		Freshness:              local.FreshnessUnknown,
		ValidatedAt:            ck.At.UTC().Format(time.RFC3339),
		RevalidateAfterSeconds: RevalidateAfter,
		Packages:               slices.Clip(sh.packages),
		Version:                sh.version,
		Workspace:              ws,
		Warnings:               capList(p.Meta.Problems, 4, 300),
	}
	if out.Reason == nil {
		out.Reason = []string{}
	}
	if gitLent(p, c.pol) {
		out.Branch, out.Worktree = dataText(p.Meta.Git.Branch, 120), p.Meta.Git.Worktree
	}
	if p.MovedTo != "" && !ck.OK && ck.Availability == local.Missing {
		out.MovedTo = p.MovedTo
	}
	switch {
	case !ck.OK:
		out.Why = ck.Why
		if out.MovedTo != "" {
			out.Why = "its index moved: it is now the project " + out.MovedTo
		}
	case !c.pol.ExposePaths:
		out.Why = "browse-only: this catalog is configured not to expose absolute paths (sharing.exposeAbsolutePaths is false), so this project cannot be queried from here"
	case hasControl(p.Root) || !utf8.ValidString(p.Root):
		// JSON would carry such a path changed (invalid bytes become
		// U+FFFD), and a changed path points somewhere else.
		out.Why = "the project's path contains control characters or bytes that are not UTF-8, so it cannot be handed out unchanged"
	default:
		root := p.Root
		out.ProjectPath = &root
		if withHandoff {
			out.Handoff = &Handoff{
				MCPServerHint:     f.opt.CodeGraphServer,
				ToolName:          "codegraph_explore",
				Arguments:         map[string]string{"projectPath": root},
				RequiredFromAgent: []string{"query"},
			}
		}
	}
	return out
}

// gitLent reports whether the git directory a record's branch was read
// from may be seen by this caller: the project's own .git, or a git dir
// that lies under a sharing root and no deny root. A git dir outside the
// sharing view (a denied repository's, named by a .git file) lends no
// branch.
func gitLent(p *local.Project, pol catalog.Policy) bool {
	d := p.Meta.Git.CommonDir
	return d == "" || dirLent(d, pol)
}

// dirLent reports whether what was read in d, a directory outside a
// project's root, may be shown to this caller: d lies under a sharing
// root and no deny root.
func dirLent(d string, pol catalog.Policy) bool {
	return slices.ContainsFunc(pol.Share, func(r string) bool { return pathid.Within(r, d) }) && !pol.Hides(d)
}

// dataText bounds a metadata string for output: it is data, never an
// instruction, so control characters go and the length is capped.
func dataText(s string, n int) string { return meta.Clean(s, n) }

func capList(xs []string, n, each int) []string {
	var out []string
	for _, x := range xs {
		if len(out) == n {
			break
		}
		out = append(out, dataText(x, each))
	}
	return out
}

func firstNonEmpty(xs ...string) string {
	for _, x := range xs {
		if strings.TrimSpace(x) != "" {
			return x
		}
	}
	return ""
}

func hasControl(s string) bool {
	return strings.ContainsFunc(s, unicode.IsControl)
}
