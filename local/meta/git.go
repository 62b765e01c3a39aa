package meta

import (
	"cmp"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/cgcat/cgcat/local/pathid"
)

const maxRemote = 500

// readGit fills Git from files only: .git/HEAD and .git/config, or for a
// linked worktree (.git is a file) its gitdir's HEAD and the main
// repository's config found through commondir. git itself never runs.
func (r *reader) readGit() {
	if !r.has(".git") {
		return
	}
	parts, mode, err := r.resolve(".git")
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			r.problem(".git", err)
		}
		return
	}
	gitDir := filepath.Join(r.root, filepath.FromSlash(strings.Join(parts, "/")))
	if !mode.IsDir() {
		// "gitdir: <path>", relative to the root: a linked worktree, a
		// submodule or a separate git dir.
		b, ok := r.file(".git", false)
		if !ok {
			return
		}
		if gitDir = gitdirLine(b); gitDir == "" {
			r.problemf(".git: no gitdir line")
			return
		}
		if !filepath.IsAbs(gitDir) {
			gitDir = filepath.Join(r.root, gitDir)
		}
		if gitDir, err = filepath.EvalSymlinks(gitDir); err != nil {
			r.problem(".git: gitdir", err)
			return
		}
	}
	if underCodegraph(gitDir) {
		r.problem(".git", errCodegraph)
		return
	}
	// A valid HEAD is what tells a git directory from any directory the
	// .git file may name; nothing else is read without one.
	head, ok := r.gitFile(gitDir, "HEAD")
	if !ok {
		return
	}
	branch, commit, ok := parseHead(head)
	if !ok {
		r.problemf("git HEAD: neither a ref nor a commit id")
		return
	}
	g := &r.m.Git
	g.Branch, g.Head = Clean(branch, maxItem), commit
	r.gitDir, r.refsDir = gitDir, gitDir
	configDir := gitDir
	if b, ok := r.gitFile(gitDir, "commondir"); ok {
		// A linked worktree: the config, and the remote, are the main
		// repository's.
		c := strings.TrimSpace(firstLine(b))
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitDir, c)
		}
		if c, err = pathid.Canonical(c); err != nil || underCodegraph(c) {
			r.problemf("git commondir: cannot be resolved")
			return
		}
		g.Worktree, configDir, r.refsDir = true, c, c
		r.keepGitDir(c)
	} else if !pathid.Within(r.root, gitDir) {
		// A .git file naming a repository's own git dir outside the root
		// (a separate git dir, a submodule's, or another project's): the
		// branch is that repository's, and an answer lends it only where
		// the sharing view holds that directory, so the record says which.
		r.keepGitDir(gitDir)
	}
	if b, ok := r.gitFile(configDir, "config"); ok {
		g.Remote = Clean(stripCredentials(gitRemote(b)), maxRemote)
	}
}

// gitFile reads name in a git directory: below the root through resolve
// (no symlinks out), elsewhere (a worktree's gitdir, canonical) by its
// path opened with no symlink in it.
func (r *reader) gitFile(dir, name string) ([]byte, bool) {
	p := filepath.Join(dir, name)
	if pathid.Within(r.root, dir) {
		rel, err := filepath.Rel(r.root, p)
		if err != nil {
			return nil, false
		}
		return r.file(filepath.ToSlash(rel), false)
	}
	return r.fileAt(p, "git "+name)
}

// keepGitDir records the repository git directory the branch and remote
// came from, when it lies outside the root (GitInfo.CommonDir). A path is
// kept exactly or not at all: cleaning would change it.
func (r *reader) keepGitDir(dir string) {
	if Clean(dir, maxPath) == dir {
		r.m.Git.CommonDir = dir
	} else {
		r.problemf("git commondir: path would not survive cleaning, not kept")
	}
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(string(b), "\n")
	return s
}

func gitdirLine(b []byte) string {
	d, ok := strings.CutPrefix(strings.TrimSpace(firstLine(b)), "gitdir:")
	if !ok {
		return ""
	}
	return strings.TrimSpace(d)
}

// parseHead reads a HEAD file: "ref: refs/heads/<branch>" or a detached
// commit id (SHA-1 or SHA-256). A symbolic ref outside refs/heads is valid
// but names no branch.
func parseHead(b []byte) (branch, commit string, ok bool) {
	s := strings.TrimSpace(firstLine(b))
	if ref, isRef := strings.CutPrefix(s, "ref:"); isRef {
		ref = strings.TrimSpace(ref)
		if !strings.HasPrefix(ref, "refs/") || strings.ContainsFunc(ref, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
			return "", "", false
		}
		branch, _ = strings.CutPrefix(ref, "refs/heads/")
		if branch == ref {
			branch = ""
		}
		return branch, "", true
	}
	if (len(s) == 40 || len(s) == 64) && strings.Trim(s, "0123456789abcdef") == "" {
		return "", s, true
	}
	return "", "", false
}

// gitRemote returns the first url of [remote "origin"] in a git config, or
// else of the first remote that has one. Includes are not followed.
func gitRemote(b []byte) string {
	var section, sub, origin, other string
	for line := range strings.Lines(string(b)) {
		t := strings.TrimSpace(line)
		if t == "" || t[0] == '#' || t[0] == ';' {
			continue
		}
		if t[0] == '[' {
			hdr, _, ok := strings.Cut(t[1:], "]")
			if !ok {
				section = ""
				continue
			}
			section, sub = gitSection(hdr)
			continue
		}
		if section != "remote" {
			continue
		}
		k, v, ok := strings.Cut(t, "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), "url") {
			continue
		}
		v = gitValue(v)
		switch {
		case sub == "origin" && origin == "":
			origin = v
		case other == "":
			other = v
		}
	}
	return cmp.Or(origin, other)
}

// gitSection splits a section header: `remote "origin"` or the old
// `remote.origin`.
func gitSection(hdr string) (section, sub string) {
	hdr = strings.TrimSpace(hdr)
	if name, q, ok := strings.Cut(hdr, " "); ok {
		q = strings.TrimSpace(q)
		if len(q) >= 2 && q[0] == '"' && q[len(q)-1] == '"' {
			q = strings.NewReplacer(`\"`, `"`, `\\`, `\`).Replace(q[1 : len(q)-1])
		}
		return strings.ToLower(name), q
	}
	name, sub, _ := strings.Cut(hdr, ".")
	return strings.ToLower(name), strings.ToLower(sub)
}

// gitValue reads a config value: quotes removed, a comment outside quotes
// cut off.
func gitValue(v string) string {
	var b strings.Builder
	quoted := false
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '"':
			quoted = !quoted
		case c == '\\' && i+1 < len(v):
			i++
			b.WriteByte(v[i])
		case (c == '#' || c == ';') && !quoted:
			return strings.TrimSpace(b.String())
		default:
			b.WriteByte(c)
		}
	}
	return strings.TrimSpace(b.String())
}

// stripCredentials removes what may be a secret from a remote URL: the
// password always, and the whole user part except the plain user name of
// ssh URLs (git@host), since an http "user" is often a token. Queries and
// fragments go too.
func stripCredentials(u string) string {
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok || strings.ContainsAny(scheme, "/@:") {
		// A local path, or scp-like [user@]host:path: as git decides, a
		// colon with no slash before it (and no drive letter) makes it
		// scp-like.
		at := strings.LastIndexByte(u, '@')
		colon := strings.IndexByte(u, ':')
		if at < 0 || colon < 0 || strings.Contains(u[:colon], "/") || isDrive(u) {
			return u
		}
		if strings.Contains(u[:at], ":") {
			return u[at+1:] // "user:password@host:path"
		}
		return u
	}
	if strings.EqualFold(scheme, "file") {
		return u
	}
	hostPath := rest
	if at := userEnd(rest); at >= 0 {
		user := rest[:at]
		hostPath = rest[at+1:]
		if strings.Contains(strings.ToLower(scheme), "ssh") && !strings.ContainsAny(user, ":/?#") {
			hostPath = user + "@" + hostPath
		}
	}
	if i := strings.IndexAny(hostPath, "?#"); i >= 0 {
		hostPath = hostPath[:i]
	}
	return scheme + "://" + hostPath
}

// isDrive reports a Windows path that starts with a drive letter (C:\x,
// C:/x, C:).
func isDrive(u string) bool {
	if len(u) < 2 || u[1] != ':' || !('a' <= u[0]|0x20 && u[0]|0x20 <= 'z') {
		return false
	}
	return len(u) == 2 || u[2] == '\\' || u[2] == '/'
}

// userEnd returns the index in rest (an URL after "://") of the '@' that
// ends the user part, or -1.
func userEnd(rest string) int {
	at := strings.LastIndexByte(rest, '@')
	slash := strings.IndexByte(rest, '/')
	if at < 0 || slash < 0 || at < slash {
		return at
	}
	if i := strings.LastIndexByte(rest[:slash], '@'); i >= 0 {
		return i
	}
	// No '@' before the first '/': the later one is in the path, unless a
	// password holding a '/' put it there ("user:pa/ss@host"), which a
	// colon before the slash that is not a port gives away.
	if _, port, ok := strings.Cut(rest[:slash], ":"); ok && strings.Trim(port, "0123456789") != "" {
		return at
	}
	return -1
}
