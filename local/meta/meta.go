// Package meta owns the bounded reading of one project root's own metadata
// (R12): names, descriptions, package names and keywords from its manifests,
// the first meaningful paragraph of its README, the git remote and branch or
// worktree identity from files under .git, and the optional hint file
// codegraph/project.json (R6).
//
// Everything a project holds is untrusted data. This package reads only a
// fixed set of files, each through a per-file bound and all under a
// per-project bound, and passes every string through Clean. It must never
// execute anything, run git, evaluate a manifest, follow a symlink out of
// the root, open anything under .codegraph/, or act on what it reads
// (commands, URLs, sharing settings): it only returns local.Metadata.
package meta

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/pathid"
)

// Default bounds, as in the configuration's metadata section.
const (
	DefaultMaxBytesPerFile    = 16384
	DefaultMaxBytesPerProject = 65536
)

// Limits bounds how much Read may read. A zero or negative field means its
// default.
type Limits struct {
	MaxBytesPerFile    int64 // per file; a larger file is skipped, or read in part where a prefix is useful (README)
	MaxBytesPerProject int64 // all files of one project together
}

// Length bounds, in runes, of what Read returns.
const (
	maxName     = 200
	maxDesc     = 500
	maxReadme   = 400
	maxItem     = 200 // one entry of a list
	maxItems    = 32  // entries of a list
	maxProblem  = 300
	maxProblems = 16
	maxPath     = 4096

	maxEntries = 4096 // root directory entries looked at
	maxGlob    = 4    // files of one *.gemspec / *.csproj kind
)

// Read returns what root's own files say about the project. root should be
// the canonical project root. Read never fails: whatever could not be read
// is left out, and anything worth a diagnostic is added to Problems.
func Read(root string, lim Limits) local.Metadata {
	if lim.MaxBytesPerFile <= 0 {
		lim.MaxBytesPerFile = DefaultMaxBytesPerFile
	}
	if lim.MaxBytesPerProject <= 0 {
		lim.MaxBytesPerProject = DefaultMaxBytesPerProject
	}
	r := &reader{root: filepath.Clean(root), lim: lim}
	base := filepath.Base(r.root)
	if err := r.list(r.root); err != nil {
		r.problem("root", err)
		return r.finish(base)
	}
	// Order matters once the project budget runs short: the hint file and
	// manifests are worth most, the README can make do with a prefix.
	r.readHint()
	r.readManifests()
	r.readGit()
	r.readReadme()
	return r.finish(base)
}

// reader holds one Read's state.
type reader struct {
	root     string // as given, canonical if the caller kept to the contract
	canon    string // root with symlinks resolved, once a symlink needs it
	lim      Limits
	used     int64 // bytes read so far
	spent    bool  // project budget exhausted: nothing more is read
	entries  map[string]fs.DirEntry
	complete bool // entries holds the whole root listing

	hint      *hintFile
	manifests []manifest
	m         local.Metadata
}

// list reads the root directory once, bounded, so that absent files cost no
// system call and case-insensitive or glob names can be matched.
func (r *reader) list(root string) error {
	f, err := os.Open(root)
	if err != nil {
		return err
	}
	defer f.Close()
	r.entries = make(map[string]fs.DirEntry)
	for len(r.entries) < maxEntries {
		batch, err := f.ReadDir(256)
		for _, e := range batch {
			r.entries[e.Name()] = e
		}
		if err == io.EOF {
			r.complete = true
			return nil
		}
		if err != nil {
			if len(r.entries) == 0 {
				return err
			}
			return nil
		}
	}
	return nil
}

// has reports whether the root may hold name. With a truncated listing the
// answer is yes, and opening the file decides.
func (r *reader) has(name string) bool {
	_, ok := r.entries[name]
	return ok || !r.complete
}

// names returns the listed root entries that match, sorted, at most maxGlob.
func (r *reader) names(match func(string) bool) []string {
	var out []string
	for n := range r.entries {
		if match(n) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out[:min(len(out), maxGlob)]
}

var (
	errOutside   = errors.New("symlink points outside the project, skipped")
	errCodegraph = errors.New("points into .codegraph, skipped")
	errNotFile   = errors.New("not a regular file, skipped")
)

// resolve returns the path of rel (slash-separated, below the root) with
// every symlink resolved, and fails if that path leaves the root or enters a
// .codegraph directory. The root listing already knows the type of the
// first element; only deeper ones cost an lstat.
func (r *reader) resolve(rel string) (string, error) {
	cur := r.root
	for i, part := range strings.Split(rel, "/") {
		cur = filepath.Join(cur, part)
		var mode fs.FileMode
		if e, ok := r.entries[part]; ok && i == 0 {
			mode = e.Type()
		} else {
			fi, err := os.Lstat(cur)
			if err != nil {
				return "", err
			}
			mode = fi.Mode()
		}
		if mode&fs.ModeSymlink != 0 {
			t, err := filepath.EvalSymlinks(cur)
			if err != nil {
				return "", err
			}
			if !pathid.Within(r.canonical(), t) {
				return "", errOutside
			}
			cur = t
		}
	}
	if underCodegraph(cur) {
		return "", errCodegraph
	}
	return cur, nil
}

// canonical returns the root with symlinks resolved, computed only when a
// symlink has to be checked against it.
func (r *reader) canonical() string {
	if r.canon == "" {
		r.canon = r.root
		if c, err := filepath.EvalSymlinks(r.root); err == nil {
			r.canon = c
		}
	}
	return r.canon
}

func underCodegraph(p string) bool {
	return slices.Contains(strings.Split(filepath.ToSlash(p), "/"), ".codegraph")
}

// file reads rel (slash-separated, below the root) within the bounds. A
// missing file is silently absent. whole says a prefix is of no use: a file
// over the per-file bound is skipped.
func (r *reader) file(rel string, whole bool) ([]byte, bool) {
	if r.spent {
		return nil, false
	}
	p, err := r.resolve(rel)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			r.problem(rel, err)
		}
		return nil, false
	}
	return r.read(p, rel, whole)
}

// read reads the file at p within the per-file and per-project bounds;
// label names it in Problems.
func (r *reader) read(p, label string, whole bool) ([]byte, bool) {
	if r.spent {
		return nil, false
	}
	// openFlags keeps a FIFO from blocking the open and refuses a symlink
	// swapped in after resolve.
	f, err := os.OpenFile(p, os.O_RDONLY|openFlags, 0)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			r.problem(label, err)
		}
		return nil, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		r.problem(label, err)
		return nil, false
	}
	if !fi.Mode().IsRegular() {
		r.problem(label, errNotFile)
		return nil, false
	}
	size := fi.Size()
	if whole && size > r.lim.MaxBytesPerFile {
		r.problemf("%s: larger than %d bytes, skipped", label, r.lim.MaxBytesPerFile)
		return nil, false
	}
	want := min(size, r.lim.MaxBytesPerFile)
	if left := r.lim.MaxBytesPerProject - r.used; want > left {
		if whole || left <= 0 {
			r.spent = true
			r.problemf("metadata: project budget of %d bytes spent at %s; later files skipped", r.lim.MaxBytesPerProject, label)
			return nil, false
		}
		want = left
	}
	// The buffer is the bound (an io.LimitReader in effect): a file that
	// grew since Stat is read only as far as want.
	buf := make([]byte, want)
	n, err := io.ReadFull(f, buf)
	r.used += int64(n)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		r.problem(label, err)
		return nil, false
	}
	return buf[:n], true
}

func (r *reader) problem(label string, err error) {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err // the path is already in label; keep the reason
	}
	r.problemf("%s: %v", label, err)
}

func (r *reader) problemf(format string, args ...any) {
	r.m.Problems = addList(r.m.Problems, maxProblems, maxProblem, fmt.Sprintf(format, args...))
}

// finish settles the name and description by precedence (hint file,
// manifests in priority order, folder name) and merges the lists.
func (r *reader) finish(base string) local.Metadata {
	m := r.m
	var names, descs []string
	if h := r.hint; h != nil {
		names = append(names, h.Name)
		descs = append(descs, h.Description)
		m.Aliases = addList(nil, maxItems, maxItem, h.Aliases...)
		m.Tags = addList(nil, maxItems, maxItem, h.Tags...)
		m.Related = addList(nil, maxItems, maxItem, h.Related...)
	}
	for _, mf := range r.manifests {
		names = append(names, mf.name)
		descs = append(descs, mf.description)
		m.Manifests = addList(m.Manifests, maxItems, maxItem, mf.files...)
		m.Packages = addList(m.Packages, maxItems, maxItem, mf.packages...)
		m.Keywords = addList(m.Keywords, maxItems, maxItem, mf.keywords...)
	}
	m.Name = firstClean(maxName, append(names, base)...)
	m.Description = firstClean(maxDesc, descs...)
	return m
}

// firstClean returns the first value that is not empty once cleaned.
func firstClean(max int, vals ...string) string {
	for _, v := range vals {
		if c := Clean(v, max); c != "" {
			return c
		}
	}
	return ""
}

// addList appends the cleaned, non-empty items not already in list (case
// folded), keeping at most maxN entries of at most maxLen runes each.
func addList(list []string, maxN, maxLen int, items ...string) []string {
	for _, it := range items {
		if len(list) >= maxN {
			break
		}
		c := Clean(it, maxLen)
		if c == "" || slices.ContainsFunc(list, func(s string) bool { return strings.EqualFold(s, c) }) {
			continue
		}
		list = append(list, c)
	}
	return list
}
