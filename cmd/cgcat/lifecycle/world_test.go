//go:build linux

package lifecycle

// The world: a real temp tree (discovery roots, deny roots spelled
// directly, through a symlinked parent, not existing yet, or through a
// symlink that appears later; bind mounts), the config file, and the facts
// the model reads back from the file system (markers, identities,
// canonical paths, what a walk within maxDepth can reach).

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
)

// Areas of the tree, relative to base.
const (
	relCode       = "code"
	relLibs       = "libs"
	relOutside    = "outside" // never a discovery root
	relLinks      = "links"
	relPrivate    = "code/private"
	relAliased    = "code/aliased"
	relLater      = "code/later"      // a deny root that does not exist at first
	relLateParent = "code/lateparent" // the target of a symlink that appears later
	relLateSecret = "code/lateparent/secret"
	relTeam       = "code/team"
)

// denySpec is one deny root as the config spells it.
type denySpec struct {
	key     string
	spelled string // absolute spelling in the config
	how     string // "direct", "symlinked parent", "not yet created", "symlink appears later"
}

type world struct {
	base, data, home, cfgPath string
	env                       []string
	deny                      []denySpec
	mounts                    []string // bind-mount points (absolute), newest last
	everMounted               []string // every mount point used so far
}

func (w *world) abs(rel string) string { return filepath.Join(w.base, filepath.FromSlash(rel)) }

func newWorld(base string) (*world, error) {
	w := &world{base: base, data: filepath.Join(base, "data"), home: filepath.Join(base, "home"), cfgPath: filepath.Join(base, "config.json")}
	for _, d := range []string{relCode, relLibs, relOutside, relLinks, relPrivate, relAliased, relLateSecret, relTeam, "data", "home"} {
		if err := os.MkdirAll(w.abs(d), 0o755); err != nil {
			return nil, err
		}
	}
	// links/codealias -> ../code: a symlinked parent through which a deny
	// root is spelled.
	if err := os.Symlink("../code", w.abs("links/codealias")); err != nil {
		return nil, err
	}
	w.deny = []denySpec{
		{key: "private", spelled: w.abs(relPrivate), how: "direct"},
		{key: "aliased", spelled: w.abs("links/codealias/aliased"), how: "symlinked parent"},
		{key: "later", spelled: w.abs(relLater), how: "not yet created"},
		{key: "latelink", spelled: w.abs("links/late/secret"), how: "symlink appears later"},
	}
	w.env = append(os.Environ(),
		"HOME="+w.home,
		"XDG_CONFIG_HOME="+filepath.Join(w.home, ".config"),
		"XDG_DATA_HOME="+filepath.Join(w.home, ".local", "share"),
		"CODEX_HOME="+filepath.Join(w.home, ".codex"),
		"CGCAT_CONFIG=",
		"OPENCODE_CONFIG=",
		fmt.Sprintf("CGCAT_WATCH_QUEUE=%d", watchQueue), // event storms overflow the watcher (live_test.go)
	)
	return w, nil
}

func (w *world) denySpec(key string) denySpec {
	for _, d := range w.deny {
		if d.key == key {
			return d
		}
	}
	panic("no deny spec " + key)
}

// cfg is the config the model holds in force.
type cfg struct {
	libsRoot bool            // libs is a discovery root (code always is)
	share    int             // 0: default (the discovery roots); 1: code/team + libs; 2: code only
	deny     map[string]bool // enabled deny specs by key
	maxDepth int
	gbrain   bool // gbrain.enabled
}

func (c cfg) clone() cfg {
	c.deny = maps(c.deny)
	return c
}

func maps(m map[string]bool) map[string]bool {
	out := make(map[string]bool, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func (w *world) roots(c cfg) []string {
	r := []string{w.abs(relCode)}
	if c.libsRoot {
		r = append(r, w.abs(relLibs))
	}
	return r
}

func (w *world) shareRoots(c cfg) []string {
	switch c.share {
	case 1:
		return []string{w.abs(relTeam), w.abs(relLibs)}
	case 2:
		return []string{w.abs(relCode)}
	}
	return w.roots(c)
}

func (w *world) denySpelled(c cfg) []string {
	var out []string
	for _, d := range w.deny {
		if c.deny[d.key] {
			out = append(out, d.spelled)
		}
	}
	return out
}

// walkKey is what a scan pass depends on: roots, depth and deny roots (a
// walker may skip denied trees), as spelled and as resolved now.
func (w *world) walkKey(c cfg) string {
	var res []string
	for _, d := range w.denySpelled(c) {
		res = append(res, resolveDeny(d))
	}
	return fmt.Sprintf("%q|%d|%q|%q", w.roots(c), c.maxDepth, w.denySpelled(c), res)
}

// writeConfig replaces the config file atomically (a user's editor, or
// `cgcat config` tooling, does the same).
func (w *world) writeConfig(c cfg, gb map[string]any) error {
	disc := map[string]any{
		"roots":                  w.roots(c),
		"refreshIntervalSeconds": 3600, // serves scan at start and when asked: "running" stays checkable
		"maxDepth":               c.maxDepth,
		"maxDirectoriesPerSlice": 6, // many small slices: kills land mid-pass
		"maxDirectoriesPerRound": 100000,
	}
	share := []string{}
	if c.share != 0 {
		share = w.shareRoots(c)
	}
	doc := map[string]any{
		"version":   1,
		"dataDir":   w.data,
		"discovery": disc,
		"sharing":   map[string]any{"roots": share, "denyRoots": nonNil(w.denySpelled(c)), "exposeAbsolutePaths": true},
	}
	if gb != nil {
		g := map[string]any{}
		for k, v := range gb {
			if k != "connections" {
				g[k] = v
			}
		}
		g["enabled"] = c.gbrain
		doc["gbrain"] = g
		doc["connections"] = gb["connections"]
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	tmp := w.cfgPath + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, w.cfgPath)
}

func nonNil(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}

// ---- file-system facts ------------------------------------------------------

// sqliteMagic starts every CodeGraph database.
const sqliteMagic = "SQLite format 3\x00"

func writeMarker(dir string) error {
	cg := filepath.Join(dir, ".codegraph")
	if err := os.MkdirAll(cg, 0o755); err != nil {
		return err
	}
	db := append([]byte(sqliteMagic), make([]byte, 240)...)
	return os.WriteFile(filepath.Join(cg, "codegraph.db"), db, 0o644)
}

// hasMarker: dir's own .codegraph/codegraph.db is a regular file of at
// least 100 bytes starting with the SQLite magic (R8), reached without a
// symlink at .codegraph or the file.
func hasMarker(dir string) bool {
	cg := filepath.Join(dir, ".codegraph")
	if fi, err := os.Lstat(cg); err != nil || !fi.IsDir() {
		return false
	}
	db := filepath.Join(cg, "codegraph.db")
	fi, err := os.Lstat(db)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() < 100 {
		return false
	}
	f, err := os.Open(db)
	if err != nil {
		return false
	}
	defer f.Close()
	b := make([]byte, 16)
	n, _ := f.Read(b)
	return n == 16 && string(b) == sqliteMagic
}

// fileID is a file's device and inode.
type fileID struct{ dev, ino uint64 }

func idOf(path string) (fileID, bool) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return fileID{}, false
	}
	return fileID{uint64(st.Dev), st.Ino}, true
}

// sameDir: a and b are two paths of one directory (a bind mount shows a
// directory under a second path), and both have the marker.
func sameDir(a, b string) bool {
	if a == "" || a == b || !hasMarker(a) || !hasMarker(b) {
		return false
	}
	ia, ok1 := idOf(a)
	ib, ok2 := idOf(b)
	return ok1 && ok2 && ia == ib
}

func markerID(dir string) (fileID, bool) {
	return idOf(filepath.Join(dir, ".codegraph", "codegraph.db"))
}

// within: p is root or below it, by whole segments.
func within(root, p string) bool {
	return p == root || strings.HasPrefix(p, strings.TrimSuffix(root, "/")+"/")
}

func underAny(roots []string, p string) bool {
	return slices.ContainsFunc(roots, func(r string) bool { return within(r, p) })
}

// resolveDeny is a deny root as the file system resolves it now: the
// longest existing prefix canonicalised, the rest appended.
func resolveDeny(spelled string) string {
	p := filepath.Clean(spelled)
	var rest []string
	for {
		if c, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(append([]string{c}, rest...)...)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return spelled
		}
		rest = append([]string{filepath.Base(p)}, rest...)
		p = parent
	}
}

// isCanonical: absolute, clean, and no symlink on the way.
func isCanonical(p string) bool {
	if !filepath.IsAbs(p) || filepath.Clean(p) != p {
		return false
	}
	c, err := filepath.EvalSymlinks(p)
	return err == nil && c == p
}

// deniedBy reports which deny root (spelled) hides path p: by the resolved
// path, or by directory identity of p or one of its ancestors (a bind mount
// or other alias of the deny root). "" when none.
func deniedBy(denySpelled []string, p string) string {
	ids := map[fileID]string{}
	for _, d := range denySpelled {
		if within(resolveDeny(d), p) {
			return d
		}
		if id, ok := idOf(d); ok {
			ids[id] = d
		}
	}
	if len(ids) == 0 {
		return ""
	}
	for q := p; ; q = filepath.Dir(q) {
		if id, ok := idOf(q); ok {
			if d, hit := ids[id]; hit {
				return d
			}
		}
		if filepath.Dir(q) == q {
			return ""
		}
	}
}

// depthIn is the number of path segments of p below root.
func depthIn(root, p string) int {
	if p == root {
		return 0
	}
	return strings.Count(strings.TrimPrefix(p, root+"/"), "/") + 1
}

// realPath: every directory from the discovery root down to p is a real
// directory (no symlink), so a walk that never follows symlinks reaches it.
func realPath(root, p string) bool {
	if !within(root, p) {
		return false
	}
	for q := p; ; q = filepath.Dir(q) {
		fi, err := os.Lstat(q)
		if err != nil || !fi.IsDir() {
			return false
		}
		if q == root {
			return true
		}
	}
}

// depthGaps walks the discovery roots as a walker that never follows
// symlinks and stops at maxDepth would, and returns the directories it
// cannot enter because of maxDepth: counted (shared, not denied) and
// uncertain (outside every sharing root: whether such a gap counts for a
// view is not specified). Gaps inside deny roots never count (issue 11).
func depthGaps(roots, share, deny []string, maxDepth int) (counted, uncertain []string) {
	for _, root := range roots {
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if !d.IsDir() {
				return nil
			}
			name := d.Name()
			if p != root && (name == ".codegraph" || name == ".git" || name == "node_modules" || name == "dist" || name == "build" || name == ".cache") {
				return fs.SkipDir
			}
			if depthIn(root, p) <= maxDepth {
				return nil
			}
			// p is a directory the walk may not enter.
			if deniedBy(deny, p) != "" {
				return fs.SkipDir
			}
			if underAny(share, p) {
				counted = append(counted, p)
			} else {
				uncertain = append(uncertain, p)
			}
			return fs.SkipDir
		})
	}
	sort.Strings(counted)
	return counted, uncertain
}
