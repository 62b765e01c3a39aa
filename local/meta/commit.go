package meta

import (
	"slices"
	"strings"

	"github.com/cgcat/cgcat/local/nofollow"
	"github.com/cgcat/cgcat/local/pathid"
)

// Commit returns the commit checked out in the git repository at root
// (SHA-1 or SHA-256, hex), read from files only: HEAD, then the branch's
// loose ref or its line in packed-refs; and the git directories outside
// root it read them from (a worktree's, a separate git dir's), so that a
// caller lends the commit only where its sharing view holds every one of
// them. It returns "" when root is no git checkout or the commit cannot be
// told (an unborn branch, a ref outside refs/heads, a packed-refs too
// large to search, a git dir whose path would not survive cleaning).
//
// It is read when an answer is made, never stored: the commit moves with
// every `git commit` in the project, which no metadata stamp watches. It
// reads with the same protections as Read (no symlink out of the root,
// nothing under .codegraph, no FIFO, bounded sizes).
func Commit(root string) (id string, outside []string) {
	d, err := nofollow.OpenDir(root)
	if err != nil {
		return "", nil
	}
	defer d.Close()
	r := newReader(d.Path(), Limits{MaxBytesPerFile: maxPackedRefs, MaxBytesPerProject: 2 * maxPackedRefs})
	r.dir = d
	defer r.closeDirs()
	if r.list() != nil {
		return "", nil
	}
	r.readGit()
	for _, dir := range []string{r.gitDir, r.refsDir} {
		if dir == "" || pathid.Within(r.root, dir) || slices.Contains(outside, dir) {
			continue
		}
		if Clean(dir, maxPath) != dir {
			return "", nil // a path that could not be shown could not be checked
		}
		outside = append(outside, dir)
	}
	if id = r.commit(); id == "" {
		return "", nil
	}
	return id, outside
}

// commit resolves what readGit found to a commit id, or "".
func (r *reader) commit() string {
	g := r.m.Git
	if g.Head != "" {
		return g.Head
	}
	if g.Branch == "" || r.refsDir == "" || !validBranch(g.Branch) {
		return ""
	}
	ref := "refs/heads/" + g.Branch
	if b, ok := r.gitFile(r.refsDir, ref); ok {
		if id := strings.TrimSpace(firstLine(b)); isCommitID(id) {
			return id
		}
		return ""
	}
	b, ok := r.gitFile(r.refsDir, "packed-refs")
	if !ok {
		return ""
	}
	for line := range strings.Lines(string(b)) {
		id, name, ok := strings.Cut(strings.TrimSpace(line), " ")
		if ok && name == ref && isCommitID(id) {
			return id
		}
	}
	return ""
}

// maxPackedRefs bounds the packed-refs read (a prefix: a branch beyond it
// is not found, and the commit is unknown).
const maxPackedRefs = 1 << 20

func isCommitID(s string) bool {
	return (len(s) == 40 || len(s) == 64) && strings.Trim(s, "0123456789abcdef") == ""
}

// validBranch applies git's ref-name rules that matter for a path: no
// empty or dot-led component, no "..", no ".lock" suffix, no control
// bytes, spaces or the characters git forbids. A HEAD naming anything
// else is not followed.
func validBranch(b string) bool {
	if strings.ContainsAny(b, " ~^:?*[\\") || strings.Contains(b, "..") || strings.Contains(b, "@{") {
		return false
	}
	for _, c := range b {
		if c < 0x20 || c == 0x7f {
			return false
		}
	}
	for _, part := range strings.Split(b, "/") {
		if part == "" || part[0] == '.' || strings.HasSuffix(part, ".lock") {
			return false
		}
	}
	return true
}
