// Command mkcatalog writes testdata/selection/catalog.jsonl and
// queries.jsonl from package metadata already on this machine, plus the
// hand-written projects and queries of testdata/selection/src.
//
// Sources (no registry is asked for anything):
//   - npm: every package directory under the given node_modules trees
//     (npm's own bundled dependencies in /usr/lib/node_modules, and the
//     project's own npm install of @colbymchenry/codegraph, @openai/codex
//     and opencode-ai): package.json name, version, description, keywords,
//     and the README;
//   - Go: the module cache (go.mod and README of extracted modules; go.mod
//     alone of modules only in cache/download);
//   - Python: the *.dist-info/METADATA of installed distributions (name,
//     summary, keywords, long description) as pyproject.toml + README;
//   - Debian: the descriptions of installed packages, one per source
//     package, as README-only projects (no manifest).
//
// Manifests keep only what metadata reading uses; READMEs are cut to the
// shortest prefix that gives the same README paragraph (checked with
// local/meta itself). Queries of the kinds exact, separators, unscoped and
// dependency are derived from the data by fixed rules (see genQueries), and
// the misspelt and host-qualified names from the catalog (derivedQueries);
// their expected answers come from the metadata, never from the ranker.
//
//	go run ./bench/selection/mkcatalog -out testdata/selection \
//	  -npm /usr/lib/node_modules,/tmp/sel/node_modules
//
// -derive only replaces the derived queries of the committed set, from the
// committed catalog: it needs nothing of the machine.
//
//	go run ./bench/selection/mkcatalog -derive -out testdata/selection
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"log"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/cgcat/cgcat/bench/selection"
	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/meta"
)

type pkg struct {
	rec     selection.Record
	eco     string   // npm, go, py, deb, hand
	name    string   // as declared
	version string   // for dedup
	deps    []string // as the manifest names them
	meta    local.Metadata
}

func main() {
	out := flag.String("out", "testdata/selection", "output directory")
	npmRoots := flag.String("npm", "/usr/lib/node_modules,/tmp/sel/node_modules", "comma-separated node_modules trees")
	gomod := flag.String("gomod", filepath.Join(os.Getenv("HOME"), "go", "pkg", "mod"), "Go module cache")
	pyGlob := flag.String("python", "/root/.pyenv/versions/*/lib/python*/site-packages", "site-packages glob")
	deb := flag.Bool("dpkg", true, "include Debian package descriptions")
	derive := flag.Bool("derive", false, "only replace the derived queries (misspelt and host-qualified names) of the committed set in -out")
	flag.Parse()
	if *derive {
		deriveOnly(*out)
		return
	}

	var all []*pkg
	all = append(all, npmPackages(strings.Split(*npmRoots, ","))...)
	all = append(all, goModules(*gomod)...)
	all = append(all, pyDists(*pyGlob)...)
	if *deb {
		all = append(all, debSources()...)
	}
	hand, err := handwritten(filepath.Join(*out, "src", "projects.jsonl"))
	if err != nil {
		log.Fatal(err)
	}
	all = append(all, hand...)

	tmp, err := os.MkdirTemp("", "mkcatalog-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	kept := keepDistinct(tmp, all)
	byDir := readAllMeta(tmp, kept)
	writeCatalog(*out, kept)

	qs := genQueries(kept)
	hq, err := readQueries(filepath.Join(*out, "src", "queries.jsonl"))
	if err != nil {
		log.Fatal(err)
	}
	qs = append(qs, hq...)
	qs = append(qs, derivedQueries(kept)...)
	writeQueries(*out, qs, kept, byDir)
	count := map[string]int{}
	for _, p := range kept {
		count[p.eco]++
	}
	qcount := map[string]int{}
	for _, q := range qs {
		qcount[q.Kind]++
	}
	log.Printf("%d projects %v; %d queries %v", len(kept), count, len(qs), qcount)
}

// keepDistinct keeps the first package of each directory and trims the
// READMEs of those that are not clones.
func keepDistinct(tmp string, all []*pkg) []*pkg {
	seen := map[string]bool{}
	var kept []*pkg
	for _, p := range all {
		if seen[p.rec.Dir] {
			log.Printf("skip %s: directory taken", p.rec.Dir)
			continue
		}
		seen[p.rec.Dir] = true
		if p.rec.SameAs == "" {
			trimReadme(tmp, p)
		}
		kept = append(kept, p)
	}
	return kept
}

// readAllMeta reads each package's metadata as local/meta does (a clone
// takes its original's) and returns the packages by directory.
func readAllMeta(tmp string, kept []*pkg) map[string]*pkg {
	byDir := map[string]*pkg{}
	for _, p := range kept {
		byDir[p.rec.Dir] = p
	}
	for _, p := range kept {
		if p.rec.SameAs != "" {
			o := byDir[p.rec.SameAs]
			if o == nil {
				log.Fatalf("%s: clone of unknown %s", p.rec.Dir, p.rec.SameAs)
			}
			p.meta, p.rec.Kind = o.meta, o.rec.Kind
		} else {
			p.meta = readMeta(tmp, p.rec.Dir, p.rec.Files)
		}
	}
	return byDir
}

// writeCatalog writes catalog.jsonl; a clone keeps no files of its own.
func writeCatalog(out string, kept []*pkg) {
	var buf bytes.Buffer
	for _, p := range kept {
		r := p.rec
		if r.SameAs != "" {
			r.Kind, r.Files = "", nil
		}
		writeJSON(&buf, r)
	}
	if err := os.WriteFile(filepath.Join(out, "catalog.jsonl"), buf.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
}

// writeQueries writes queries.jsonl, each query's answers with their
// clones; a query that names a directory the catalog lacks is fatal.
func writeQueries(out string, qs []selection.Query, kept []*pkg, byDir map[string]*pkg) {
	clones := map[string][]string{}
	for _, p := range kept {
		if p.rec.SameAs != "" {
			clones[p.rec.SameAs] = append(clones[p.rec.SameAs], p.rec.Dir)
		}
	}
	var buf bytes.Buffer
	for _, q := range qs {
		for _, d := range slices.Clone(q.Expect) {
			if byDir[d] == nil {
				log.Fatalf("query %q expects unknown %s", q.Query, d)
			}
			for _, c := range clones[d] {
				if !slices.Contains(q.Expect, c) {
					q.Expect = append(q.Expect, c)
				}
			}
		}
		if q.Workspace != "" && byDir[q.Workspace] == nil {
			log.Fatalf("query %q: unknown workspace %s", q.Query, q.Workspace)
		}
		writeJSON(&buf, q)
	}
	if err := os.WriteFile(filepath.Join(out, "queries.jsonl"), buf.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
}

// ---------------------------------------------------------------- metadata

// readMeta reads the metadata of a project with these files in a directory
// named like relDir's last element (the name of a project without one).
func readMeta(tmp, relDir string, files map[string]string) local.Metadata {
	parent, err := os.MkdirTemp(tmp, "p")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(parent)
	dir := filepath.Join(parent, path.Base(relDir))
	if err := os.Mkdir(dir, 0o755); err != nil {
		log.Fatal(err)
	}
	for n, b := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(b), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	return meta.Read(dir, meta.Limits{})
}

// trimReadme cuts the README to the shortest prefix of whole lines that
// local/meta reads to the same paragraph (none at all when it yields none).
func trimReadme(tmp string, p *pkg) {
	name := ""
	for n := range p.rec.Files {
		if strings.HasPrefix(strings.ToLower(n), "readme") {
			name = n
		}
	}
	if name == "" {
		return
	}
	full := p.rec.Files[name]
	want := readMeta(tmp, p.rec.Dir, p.rec.Files).Readme
	if want == "" {
		delete(p.rec.Files, name)
		return
	}
	lines := strings.SplitAfter(full, "\n")
	with := func(k int) string {
		files := map[string]string{}
		for n, b := range p.rec.Files {
			files[n] = b
		}
		files[name] = strings.Join(lines[:k], "")
		return readMeta(tmp, p.rec.Dir, files).Readme
	}
	lo, hi := 1, len(lines)
	for lo < hi {
		mid := (lo + hi) / 2
		if with(mid) == want {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	if with(lo) != want {
		lo = len(lines)
	}
	p.rec.Files[name] = strings.Join(lines[:lo], "")
}

// ---------------------------------------------------------------- util

// writeJSON appends v as one line of JSON, HTML characters unescaped.
func writeJSON(buf *bytes.Buffer, v any) {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		log.Fatal(err)
	}
}

func sortedValues(m map[string]*pkg) []*pkg {
	out := make([]*pkg, 0, len(m))
	for _, p := range m {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].rec.Dir < out[j].rec.Dir })
	return out
}

var reNum = regexp.MustCompile(`[0-9]+`)

// cmpVersion compares versions by their numbers in order (1.10 > 1.9), a
// release above its pre-releases.
func cmpVersion(a, b string) int {
	na, nb := reNum.FindAllString(a, 4), reNum.FindAllString(b, 4)
	for i := range max(len(na), len(nb)) {
		var x, y int
		if i < len(na) {
			x, _ = strconv.Atoi(na[i])
		}
		if i < len(nb) {
			y, _ = strconv.Atoi(nb[i])
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	pa, pb := strings.Contains(a, "-"), strings.Contains(b, "-")
	switch {
	case pa && !pb:
		return -1
	case !pa && pb:
		return 1
	}
	return strings.Compare(a, b)
}
