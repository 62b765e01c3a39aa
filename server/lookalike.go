package server

import (
	"slices"
	"strings"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/catalog"
	"github.com/cgcat/cgcat/local/meta"
	"github.com/cgcat/cgcat/local/pathid"
)

// Look-alikes (seed section 7): candidates of one answer that share a
// name, a package or a repository (clones, worktrees, two checkouts of one
// package at different versions) are put side by side, with what tells
// them apart, so that an agent chooses by package, purpose, version,
// branch and path, never at random. Clones checked out at the same commit
// are marked as equivalent code.

// Lookalike relates a candidate to the others in the same answer that
// look like it.
type Lookalike struct {
	// Of lists the projectIds of the look-alikes in this answer.
	Of []string `json:"of"`
	// DiffersBy names what tells this candidate apart from at least one of
	// them: "name", "package", "version", "branch", "worktree", "commit".
	// Empty: nothing cgcat reads but the path does.
	DiffersBy []string `json:"differsBy"`
	// SameCommitAs lists the look-alikes checked out at the same commit
	// with the same name, packages and version: equivalent code (local
	// changes not compared).
	SameCommitAs []string `json:"sameCommitAs,omitempty"`
	// More counts the look-alikes in this answer that Of leaves out: the
	// lists name at most lookalikeListMax ids each, so that a page of 50
	// clones of one repository costs 50 short lists, not 50 × 49 ids.
	More int `json:"more,omitempty"`
}

// lookalikeListMax bounds Of and SameCommitAs: the nearest look-alikes in
// answer order are named, the rest counted in More.
const lookalikeListMax = 4

// Traits compared between look-alikes, in the order they are named.
var lookalikeTraits = []string{"name", "package", "version", "branch", "worktree", "commit"}

// markLookalikes groups the answer's projects that share a name, a package
// or a repository, reads the commit each one has checked out (only these:
// a few small files each; only from git directories the caller's view
// holds, as for the branch) and fills Commit and Lookalike. recs is
// parallel to ps (nil for a historical card).
func markLookalikes(ps []Project, recs []*local.Project, pol catalog.Policy) {
	n := len(ps)
	if n < 2 {
		return
	}
	group := make([]int, n)
	for i := range group {
		group[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		for group[i] != i {
			group[i] = group[group[i]]
			i = group[i]
		}
		return i
	}
	for i := range n {
		for j := i + 1; j < n; j++ {
			if alike(&ps[i], &ps[j], recs[i], recs[j]) {
				group[find(j)] = find(i)
			}
		}
	}
	members := map[int][]int{}
	for i := range n {
		members[find(i)] = append(members[find(i)], i)
	}
	for _, m := range members {
		if len(m) < 2 {
			continue
		}
		for _, i := range m {
			if ps[i].ProjectPath != nil && recs[i] != nil && gitLent(recs[i], pol) {
				id, outside := meta.Commit(*ps[i].ProjectPath)
				if !slices.ContainsFunc(outside, func(d string) bool { return !dirLent(d, pol) }) {
					ps[i].Commit = id
				}
			}
		}
		for _, i := range m {
			l := &Lookalike{DiffersBy: []string{}}
			for _, j := range m {
				if j == i {
					continue
				}
				if len(l.Of) < lookalikeListMax {
					l.Of = append(l.Of, ps[j].ProjectID)
				} else {
					l.More++
				}
				d := differences(&ps[i], &ps[j])
				if sameCode(&ps[i], &ps[j], d) && len(l.SameCommitAs) < lookalikeListMax {
					l.SameCommitAs = append(l.SameCommitAs, ps[j].ProjectID)
				}
				for _, t := range d {
					if !slices.Contains(l.DiffersBy, t) {
						l.DiffersBy = append(l.DiffersBy, t)
					}
				}
			}
			slices.SortFunc(l.DiffersBy, func(a, b string) int {
				return slices.Index(lookalikeTraits, a) - slices.Index(lookalikeTraits, b)
			})
			ps[i].Lookalike = l
		}
	}
}

// alike reports whether two candidates could be taken for one another: the
// same name or a shared package, or one repository (a remote, or a
// worktree and its main checkout).
func alike(a, b *Project, ra, rb *local.Project) bool {
	if a.Name != "" && strings.EqualFold(a.Name, b.Name) {
		return true
	}
	for _, p := range a.Packages {
		if slices.ContainsFunc(b.Packages, func(q string) bool { return strings.EqualFold(p, q) }) {
			return true
		}
	}
	if ra == nil || rb == nil {
		return false
	}
	ga, gb := ra.Meta.Git, rb.Meta.Git
	if ga.Remote != "" && ga.Remote == gb.Remote {
		return true
	}
	mainOf := func(g local.GitInfo) string { return strings.TrimSuffix(g.CommonDir, "/.git") }
	switch {
	case ga.CommonDir != "" && ga.CommonDir == gb.CommonDir:
		return true
	case ga.CommonDir != "" && pathid.Same(mainOf(ga), rb.Root):
		return true
	case gb.CommonDir != "" && pathid.Same(mainOf(gb), ra.Root):
		return true
	}
	return false
}

// differences names the traits in which a and b differ. A commit counts
// only when both are known.
func differences(a, b *Project) []string {
	var d []string
	if !strings.EqualFold(a.Name, b.Name) {
		d = append(d, "name")
	}
	if !samePackages(a.Packages, b.Packages) {
		d = append(d, "package")
	}
	if a.Version != b.Version {
		d = append(d, "version")
	}
	if a.Branch != b.Branch {
		d = append(d, "branch")
	}
	if a.Worktree != b.Worktree {
		d = append(d, "worktree")
	}
	if a.Commit != "" && b.Commit != "" && a.Commit != b.Commit {
		d = append(d, "commit")
	}
	return d
}

// sameCode reports clones of one commit: the same commit checked out (both
// known) under the same name, packages and version. Branch and worktree
// say where it is checked out, not what it is.
func sameCode(a, b *Project, d []string) bool {
	if a.Commit == "" || a.Commit != b.Commit {
		return false
	}
	for _, t := range d {
		if t != "branch" && t != "worktree" {
			return false
		}
	}
	return true
}

func samePackages(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for _, p := range a {
		if !slices.ContainsFunc(b, func(q string) bool { return strings.EqualFold(p, q) }) {
			return false
		}
	}
	return true
}
