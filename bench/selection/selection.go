// Package selection is the project-selection query set (issue 7, R35): a
// catalog of real package metadata in testdata/selection, the queries an
// agent sends to local_codegraph_projects, and the code that turns the
// catalog into a real tree of CodeGraph projects.
//
// The catalog is data: catalog.jsonl holds one project per line (its
// directory relative to the tree root, its manifest kind and the manifest
// and README text, cut to what metadata reading uses), queries.jsonl one
// query per line with the directories acceptable as its answer. Both are
// written by ./mkcatalog from package metadata found on the machine that
// made them (see testdata/selection/README.md); the tests only read them.
package selection

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/ids"
	"github.com/cgcat/cgcat/local/meta"
	"github.com/cgcat/cgcat/local/scan"
	"github.com/cgcat/cgcat/local/store"
)

// Record is one catalogued project.
type Record struct {
	Dir  string `json:"dir"`  // relative to the tree root, slash-separated
	Kind string `json:"kind"` // the manifest file name, or "none"
	// From says where the metadata came from (an ecosystem and the package
	// and version it was read from), or "handwritten".
	From string `json:"from,omitempty"`
	// Files are the project's own files by name (manifest, README).
	Files map[string]string `json:"files,omitempty"`
	// SameAs makes this record a clone of another directory's files (a
	// second checkout or worktree of the same project).
	SameAs string `json:"sameAs,omitempty"`
}

// Query is one question an agent asks, with every directory that is a
// right answer to it.
type Query struct {
	Query  string   `json:"query"`
	Kind   string   `json:"kind"`
	Expect []string `json:"expect"`
	// Workspace is the directory the agent works in (dependency queries):
	// passed as workspacePath.
	Workspace string `json:"workspace,omitempty"`
	// Target is the package or text the query was derived from.
	Target string `json:"target,omitempty"`
}

// Query kinds, in the order the runner reports them.
const (
	KindExact       = "exact"       // the package name as declared
	KindSeparators  = "separators"  // the name with other separators or case
	KindUnscoped    = "unscoped"    // a scoped or path-like name without its scope / path
	KindDependency  = "dependency"  // a dependency as the workspace's manifest names it
	KindDescription = "description" // a distinctive phrase about what the project does
	KindChinese     = "chinese"     // a Chinese phrase from the description
	KindTypo        = "typo"        // a name with one slip (deletion, insertion, substitution) in a part of 4+ letters
	KindTypo2       = "typo2"       // a name with two slips in a part of 8+ letters
	KindTransposed  = "transposed"  // a name with two neighbouring letters swapped
	KindHost        = "host"        // a package as a URL, registry page or install command names it
)

// Kinds lists every query kind in report order.
var Kinds = []string{KindExact, KindSeparators, KindUnscoped, KindDependency, KindDescription, KindChinese, KindTypo, KindTypo2, KindTransposed, KindHost}

// DataDir is testdata/selection, found from this package's directory.
func DataDir() string {
	return filepath.Join("..", "..", "testdata", "selection")
}

// LoadCatalog reads catalog.jsonl of dir and resolves clones.
func LoadCatalog(dir string) ([]Record, error) {
	var recs []Record
	if err := readJSONL(filepath.Join(dir, "catalog.jsonl"), func(line []byte) error {
		var r Record
		if err := json.Unmarshal(line, &r); err != nil {
			return err
		}
		recs = append(recs, r)
		return nil
	}); err != nil {
		return nil, err
	}
	byDir := map[string]int{}
	for i, r := range recs {
		if _, dup := byDir[r.Dir]; dup {
			return nil, fmt.Errorf("catalog: directory %s appears twice", r.Dir)
		}
		if !validDir(r.Dir) {
			return nil, fmt.Errorf("catalog: bad directory %q", r.Dir)
		}
		byDir[r.Dir] = i
	}
	for i := range recs {
		if s := recs[i].SameAs; s != "" {
			j, ok := byDir[s]
			if !ok || recs[j].SameAs != "" {
				return nil, fmt.Errorf("catalog: %s is a clone of %q, which is not an original record", recs[i].Dir, s)
			}
			recs[i].Kind, recs[i].Files = recs[j].Kind, recs[j].Files
		}
	}
	return recs, nil
}

// LoadQueries reads queries.jsonl of dir.
func LoadQueries(dir string) ([]Query, error) {
	var qs []Query
	err := readJSONL(filepath.Join(dir, "queries.jsonl"), func(line []byte) error {
		var q Query
		if err := json.Unmarshal(line, &q); err != nil {
			return err
		}
		qs = append(qs, q)
		return nil
	})
	return qs, err
}

func readJSONL(file string, fn func([]byte) error) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<22)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Bytes()
		if len(strings.TrimSpace(string(line))) == 0 {
			continue
		}
		if err := fn(line); err != nil {
			return fmt.Errorf("%s:%d: %w", file, n, err)
		}
	}
	return sc.Err()
}

// validDir accepts a clean relative slash path that the scan will walk into
// (none of the default excluded names, no hidden directory).
func validDir(d string) bool {
	if d == "" || path.Clean(d) != d || path.IsAbs(d) || strings.HasPrefix(d, "..") {
		return false
	}
	for _, seg := range strings.Split(d, "/") {
		switch seg {
		case "node_modules", "dist", "build":
			return false
		}
		if strings.HasPrefix(seg, ".") {
			return false
		}
	}
	return true
}

// Marker is the content written as .codegraph/codegraph.db: the SQLite
// header and enough bytes to pass the project rule (≥ 100 bytes).
var Marker = append([]byte("SQLite format 3\x00"), make([]byte, 112)...)

// MakeProject writes dir's files and its CodeGraph marker.
func MakeProject(dir string, files map[string]string) error {
	if err := os.MkdirAll(filepath.Join(dir, ".codegraph"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, ".codegraph", "codegraph.db"), Marker, 0o644); err != nil {
		return err
	}
	for name, body := range files {
		if name != filepath.Base(name) || strings.HasPrefix(name, ".") {
			return fmt.Errorf("%s: bad file name %q", dir, name)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Materialise writes every record under root as a real project directory.
func Materialise(root string, recs []Record) error {
	for _, r := range recs {
		if err := MakeProject(filepath.Join(root, filepath.FromSlash(r.Dir)), r.Files); err != nil {
			return err
		}
	}
	return nil
}

// Base is one catalogued project with the metadata the scan reads from it.
type Base struct {
	Dir  string
	Meta local.Metadata
}

// ReadBase materialises recs under tmp and reads each project's metadata
// with local/meta, as a scan would.
func ReadBase(tmp string, recs []Record) ([]Base, error) {
	if err := Materialise(tmp, recs); err != nil {
		return nil, err
	}
	out := make([]Base, len(recs))
	for i, r := range recs {
		out[i] = Base{Dir: r.Dir, Meta: meta.Read(filepath.Join(tmp, filepath.FromSlash(r.Dir)), meta.Limits{})}
	}
	return out, nil
}

var copyWords = []string{"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda", "omicron", "sigma", "tau", "upsilon", "omega"}

// Synthetic returns project i of a synthetic catalog built by repeating
// base: copy 0 is base itself, copy k > 0 the same metadata under varied
// names (name, package names and directory get a suffix such as
// "-gamma2"), so term statistics scale with the catalog while every query
// of the query set still names its copy-0 project.
func Synthetic(base []Base, i int) (dir string, m local.Metadata) {
	b := base[i%len(base)]
	k := i / len(base)
	m = b.Meta
	dir = fmt.Sprintf("c%04d/%s", k, b.Dir)
	if k == 0 {
		return dir, m
	}
	suffix := fmt.Sprintf("-%s%d", copyWords[k%len(copyWords)], k)
	m.Name += suffix
	m.Packages = slices.Clone(m.Packages)
	for j, p := range m.Packages {
		m.Packages[j] = withSuffix(p, suffix)
	}
	return dir, m
}

// withSuffix appends suffix to a package name, before a Go major-version
// element (example.com/x/v2 → example.com/x-s/v2).
func withSuffix(p, suffix string) string {
	if i := strings.LastIndexByte(p, '/'); i > 0 {
		last := p[i+1:]
		if len(last) > 1 && last[0] == 'v' && strings.Trim(last[1:], "0123456789") == "" {
			return p[:i] + suffix + p[i:]
		}
	}
	return p + suffix
}

// WriteSynthetic makes n synthetic projects: a project directory (the
// marker only) under root for each, and its record written straight into
// the store of dataDir, in batches, as a scan would have left it.
func WriteSynthetic(ctx context.Context, base []Base, n int, root, dataDir string) error {
	st, err := store.Open(ctx, dataDir)
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	const batch = 5000
	for start := 0; start < n; start += batch {
		var recs []*local.Project
		for i := start; i < min(start+batch, n); i++ {
			dir, m := Synthetic(base, i)
			abs := filepath.Join(root, filepath.FromSlash(dir))
			if err := MakeProject(abs, nil); err != nil {
				return err
			}
			recs = append(recs, &local.Project{
				ID: ids.NewProjectID(), Root: abs, RecordRevision: 1, Meta: m, MetaHash: scan.MetaHash(m),
				Availability: local.Present, IndexState: local.MarkerPresent,
				FirstSeen: now, LastSeen: now, ValidatedAt: now,
			})
		}
		err := st.Update(ctx, func(tx *store.Tx) error {
			for _, p := range recs {
				if err := tx.PutProject(p); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// DirSize is the total size of the regular files under dir.
func DirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
