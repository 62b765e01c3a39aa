// Package meta owns the bounded reading of one project root's own metadata
// (R12): names, descriptions, package names and keywords from its manifests,
// the first meaningful paragraph of its README, the git remote and branch or
// worktree identity from files under .git, and the optional hint file
// codegraph/project.json (R6).
//
// Everything a project holds is untrusted data. This package reads only a
// fixed set of files, each through a per-file bound and all under a
// per-project bound, and passes every string through Clean. Files are
// opened relative to the opened project root with O_NOFOLLOW on every name
// (package nofollow), never by a path that a swap could redirect. It must
// never execute anything, run git, evaluate a manifest, follow a symlink out
// of the root, open anything under .codegraph/, or act on what it reads
// (commands, URLs, sharing settings): it only returns local.Metadata.
package meta

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/nofollow"
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
	maxVersion  = 64
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
// the canonical project root: it is opened with no symlink in any component
// of its path (see ReadDir). Read never fails: whatever could not be read is
// left out, and anything worth a diagnostic is added to Problems.
func Read(root string, lim Limits) local.Metadata {
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	d, err := nofollow.OpenDir(root)
	if err != nil {
		r := newReader(root, lim)
		r.problem("root", err)
		return r.finish(filepath.Base(r.root))
	}
	defer d.Close()
	return ReadDir(d, lim)
}

// ReadDir is Read for a project root the caller has opened (the scanner,
// right after its project check on the same directory). Every file is
// opened relative to d, one name at a time with O_NOFOLLOW, so a directory
// swapped for a symlink after d was opened cannot make ReadDir read another
// directory's files. Symlinks inside the project are followed only by
// reading them (never by the kernel) and only while they stay inside it and
// out of .codegraph.
func ReadDir(d *nofollow.Dir, lim Limits) local.Metadata {
	r := newReader(d.Path(), lim)
	r.dir = d
	defer r.closeDirs()
	base := filepath.Base(r.root)
	if err := r.list(); err != nil {
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

func newReader(root string, lim Limits) *reader {
	if lim.MaxBytesPerFile <= 0 {
		lim.MaxBytesPerFile = DefaultMaxBytesPerFile
	}
	if lim.MaxBytesPerProject <= 0 {
		lim.MaxBytesPerProject = DefaultMaxBytesPerProject
	}
	return &reader{root: filepath.Clean(root), lim: lim}
}

// reader holds one Read's state.
type reader struct {
	root     string        // the root's path, as opened (no symlink in it)
	dir      *nofollow.Dir // the root, open
	dirs     map[string]*nofollow.Dir
	lim      Limits
	used     int64 // bytes read so far
	spent    bool  // project budget exhausted: nothing more is read
	entries  map[string]fs.FileMode
	complete bool // entries holds the whole root listing

	hint      *hintFile
	manifests []manifest
	// The git directory readGit found, and where its branches live (the
	// main repository's for a linked worktree).
	gitDir, refsDir string
	m               local.Metadata
}

// list reads the root directory once, bounded, so that absent files cost no
// system call and case-insensitive or glob names can be matched.
func (r *reader) list() error {
	r.entries = make(map[string]fs.FileMode)
	full := false
	err := r.dir.List(func(name string, typ fs.FileMode) {
		if len(r.entries) >= maxEntries {
			full = true
			return
		}
		r.entries[name] = typ
	})
	r.complete = err == nil && !full
	if err != nil && len(r.entries) == 0 {
		return err
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
	errLinks     = errors.New("too many symlinks, skipped")
)

// maxLinks bounds the symlinks followed for one file, as the kernel's 40.
const maxLinks = 40

// resolve returns rel (slash-separated, below the root) as names below the
// root with every symlink resolved, and the type of the last one. It reads
// symlinks itself, relative to the opened root, and fails if one leaves the
// root or anything enters a .codegraph directory. The root listing already
// knows the first name; only deeper ones cost an fstatat.
func (r *reader) resolve(rel string) ([]string, fs.FileMode, error) {
	todo := strings.Split(rel, "/")
	var done []string
	var mode fs.FileMode
	links := 0
	for len(todo) > 0 {
		part := todo[0]
		todo = todo[1:]
		switch part {
		case "", ".":
			continue
		case "..":
			if len(done) == 0 {
				return nil, 0, errOutside
			}
			done = done[:len(done)-1]
			continue
		case ".codegraph":
			return nil, 0, errCodegraph
		}
		m, err := r.lstat(done, part)
		if err != nil {
			return nil, 0, err
		}
		if m&fs.ModeSymlink != 0 {
			if links++; links > maxLinks {
				return nil, 0, errLinks
			}
			target, err := r.readlink(done, part)
			if err != nil {
				return nil, 0, err
			}
			if filepath.IsAbs(target) {
				t := filepath.Clean(target)
				below, ok := strings.CutPrefix(t, r.root+string(filepath.Separator))
				if !ok && t != r.root {
					return nil, 0, errOutside
				}
				done, target = nil, below
			}
			todo = append(strings.Split(filepath.ToSlash(target), "/"), todo...)
			continue
		}
		if len(todo) > 0 && !m.IsDir() {
			return nil, 0, &fs.PathError{Op: "open", Path: rel, Err: syscall.ENOTDIR}
		}
		done = append(done, part)
		mode = m
	}
	if len(done) == 0 {
		return nil, 0, errNotFile // the root itself
	}
	return done, mode, nil
}

// lstat returns the type of name in the directory at the names dir below
// the root.
func (r *reader) lstat(dir []string, name string) (fs.FileMode, error) {
	if len(dir) == 0 {
		if t, ok := r.entries[name]; ok {
			return t, nil
		}
		if r.complete {
			return 0, &fs.PathError{Op: "lstat", Path: name, Err: fs.ErrNotExist}
		}
	}
	d, err := r.subdir(dir)
	if err != nil {
		return 0, err
	}
	fi, err := d.Lstat(name)
	return fi.Mode, err
}

func (r *reader) readlink(dir []string, name string) (string, error) {
	d, err := r.subdir(dir)
	if err != nil {
		return "", err
	}
	return d.Readlink(name)
}

// subdir returns the directory at the names dir below the root, opened with
// no symlink in it and kept open until the read ends.
func (r *reader) subdir(dir []string) (*nofollow.Dir, error) {
	if len(dir) == 0 {
		return r.dir, nil
	}
	key := strings.Join(dir, "/")
	if d, ok := r.dirs[key]; ok {
		return d, nil
	}
	d, err := r.dir.OpenDir(key)
	if err != nil {
		return nil, err
	}
	if r.dirs == nil {
		r.dirs = map[string]*nofollow.Dir{}
	}
	r.dirs[key] = d
	return d, nil
}

func (r *reader) closeDirs() {
	for _, d := range r.dirs {
		d.Close()
	}
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
	parts, _, err := r.resolve(rel)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			r.problem(rel, err)
		}
		return nil, false
	}
	d, err := r.subdir(parts[:len(parts)-1])
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			r.problem(rel, err)
		}
		return nil, false
	}
	f, err := d.OpenFile(parts[len(parts)-1])
	return r.read(f, err, rel, whole)
}

// fileAt reads the file at the absolute path p outside the root (a linked
// worktree's git directory), opened with no symlink in any component.
func (r *reader) fileAt(p, label string) ([]byte, bool) {
	if r.spent {
		return nil, false
	}
	d, err := nofollow.LookupDir(filepath.Dir(p))
	if err != nil {
		return r.read(nil, err, label, false)
	}
	defer d.Close()
	f, err := d.OpenFile(filepath.Base(p))
	return r.read(f, err, label, false)
}

// read reads the file f (opened with err) within the per-file and
// per-project bounds, and closes it; label names it in Problems.
func (r *reader) read(f *nofollow.File, err error, label string, whole bool) ([]byte, bool) {
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
	// Opened with O_NONBLOCK, so a FIFO did not block the open; it is not
	// read.
	if !fi.IsRegular() {
		r.problem(label, errNotFile)
		return nil, false
	}
	size := fi.Size
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
	var names, descs, versions []string
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
		versions = append(versions, mf.version)
		m.Manifests = addList(m.Manifests, maxItems, maxItem, mf.files...)
		m.Packages = addList(m.Packages, maxItems, maxItem, mf.packages...)
		m.Keywords = addList(m.Keywords, maxItems, maxItem, mf.keywords...)
	}
	m.Name = firstClean(maxName, append(names, base)...)
	m.Description = firstClean(maxDesc, descs...)
	// The version of the first manifest (in priority order) that declares
	// one: package.json's beside a go.mod, Cargo.toml's beside a setup.cfg.
	m.Version = firstClean(maxVersion, versions...)
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
