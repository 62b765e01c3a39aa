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
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"hash/fnv"
	"io/fs"
	"log"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"

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

	var buf bytes.Buffer
	for _, p := range kept {
		r := p.rec
		if r.SameAs != "" {
			r.Kind, r.Files = "", nil
		}
		writeJSON(&buf, r)
	}
	if err := os.WriteFile(filepath.Join(*out, "catalog.jsonl"), buf.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}

	qs := genQueries(kept)
	hq, err := readQueries(filepath.Join(*out, "src", "queries.jsonl"))
	if err != nil {
		log.Fatal(err)
	}
	qs = append(qs, hq...)
	qs = append(qs, derivedQueries(kept)...)
	clones := map[string][]string{}
	for _, p := range kept {
		if p.rec.SameAs != "" {
			clones[p.rec.SameAs] = append(clones[p.rec.SameAs], p.rec.Dir)
		}
	}
	buf.Reset()
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
	if err := os.WriteFile(filepath.Join(*out, "queries.jsonl"), buf.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
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

// ---------------------------------------------------------------- npm

func npmPackages(roots []string) []*pkg {
	best := map[string]*pkg{}
	for _, root := range roots {
		root = strings.TrimSpace(root)
		if root == "" {
			continue
		}
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || d.Name() != "package.json" {
				return nil
			}
			dir := filepath.Dir(p)
			parent := filepath.Base(filepath.Dir(dir))
			if strings.HasPrefix(parent, "@") {
				parent = filepath.Base(filepath.Dir(filepath.Dir(dir)))
			}
			if parent != "node_modules" {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return nil
			}
			var v struct {
				Name         string            `json:"name"`
				Version      string            `json:"version"`
				Description  string            `json:"description"`
				Keywords     []string          `json:"keywords"`
				Dependencies map[string]string `json:"dependencies"`
			}
			if json.Unmarshal(b, &v) != nil || v.Name == "" {
				return nil
			}
			if o := best[v.Name]; o != nil && cmpVersion(o.version, v.Version) >= 0 {
				return nil
			}
			man := map[string]any{"name": v.Name, "version": v.Version}
			if v.Description != "" {
				man["description"] = v.Description
			}
			if len(v.Keywords) > 0 {
				man["keywords"] = v.Keywords
			}
			mb, _ := json.Marshal(man)
			files := map[string]string{"package.json": string(mb)}
			if name, body := readmeIn(dir); name != "" {
				files[name] = body
			}
			deps := make([]string, 0, len(v.Dependencies))
			for k := range v.Dependencies {
				deps = append(deps, k)
			}
			sort.Strings(deps)
			best[v.Name] = &pkg{
				rec: selection.Record{Dir: "js/" + v.Name, Kind: "package.json", From: "npm " + v.Name + "@" + v.Version, Files: files},
				eco: "npm", name: v.Name, version: v.Version, deps: deps,
			}
			return nil
		})
	}
	return sortedValues(best)
}

// readmeIn returns the README of dir that local/meta would pick.
func readmeIn(dir string) (string, string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", ""
	}
	rank, best := 99, ""
	for _, e := range ents {
		for i, want := range []string{"readme.md", "readme", "readme.rst", "readme.txt", "readme.markdown"} {
			if strings.EqualFold(e.Name(), want) && (i < rank || (i == rank && e.Name() < best)) {
				rank, best = i, e.Name()
			}
		}
	}
	if best == "" {
		return "", ""
	}
	b, err := os.ReadFile(filepath.Join(dir, best))
	if err != nil {
		return "", ""
	}
	return best, string(b)
}

// ---------------------------------------------------------------- Go

var reRequire = regexp.MustCompile(`^\s*(?:require\s+)?([a-zA-Z0-9][^\s]*\.[^\s]+/[^\s]+)\s+v[0-9][^\s]*(\s*//\s*indirect)?`)

func parseGoMod(b []byte) (module string, requires []string) {
	in := false
	for line := range strings.Lines(string(b)) {
		t := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(t, "module "):
			module = strings.Trim(strings.TrimSpace(strings.TrimPrefix(t, "module ")), `"`)
		case strings.HasPrefix(t, "require ("):
			in = true
		case in && t == ")":
			in = false
		case in || strings.HasPrefix(t, "require "):
			if m := reRequire.FindStringSubmatch(t); m != nil && m[2] == "" {
				requires = append(requires, m[1])
			}
		}
	}
	return module, requires
}

func goDir(module string) string {
	segs := strings.Split(module, "/")
	if n := len(segs); n > 1 && regexp.MustCompile(`^v[0-9]+$`).MatchString(segs[n-1]) {
		segs[n-2] += "-" + segs[n-1]
		segs = segs[:n-1]
	}
	return "go/" + strings.Join(segs, "/")
}

func goModules(cache string) []*pkg {
	best := map[string]*pkg{}
	add := func(modfile []byte, version, readmeName, readme, from string) {
		module, reqs := parseGoMod(modfile)
		if module == "" || strings.Contains(module, " ") {
			return
		}
		if o := best[module]; o != nil && (o.rec.Files["README.md"] != "" || len(o.rec.Files) > 1) && readme == "" {
			return // keep the extracted module with its README
		} else if o != nil && readme == "" && cmpVersion(o.version, version) >= 0 {
			return
		}
		files := map[string]string{"go.mod": "module " + module + "\n"}
		if readmeName != "" {
			files[readmeName] = readme
		}
		best[module] = &pkg{
			rec: selection.Record{Dir: goDir(module), Kind: "go.mod", From: "go " + module + "@" + version + " (" + from + ")", Files: files},
			eco: "go", name: module, version: version, deps: reqs,
		}
	}
	// Extracted modules: <path>@<version>/go.mod.
	_ = filepath.WalkDir(cache, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && d.Name() == "cache" && filepath.Dir(p) == cache {
			return filepath.SkipDir
		}
		if !d.IsDir() || !strings.Contains(d.Name(), "@v") {
			return nil
		}
		b, err := os.ReadFile(filepath.Join(p, "go.mod"))
		if err == nil {
			version := d.Name()[strings.LastIndex(d.Name(), "@")+1:]
			rn, rb := readmeIn(p)
			add(b, version, rn, rb, "module cache")
		}
		return filepath.SkipDir
	})
	// go.mod files only in cache/download: <path>/@v/<version>.mod.
	dl := filepath.Join(cache, "cache", "download")
	_ = filepath.WalkDir(dl, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".mod") || filepath.Base(filepath.Dir(p)) != "@v" {
			return nil
		}
		b, err := os.ReadFile(p)
		if err == nil {
			add(b, strings.TrimSuffix(d.Name(), ".mod"), "", "", "go.mod from the download cache")
		}
		return nil
	})
	return sortedValues(best)
}

// ---------------------------------------------------------------- Python

func pyDists(glob string) []*pkg {
	dirs, _ := filepath.Glob(glob)
	best := map[string]*pkg{}
	for _, sp := range dirs {
		infos, _ := filepath.Glob(filepath.Join(sp, "*.dist-info"))
		for _, info := range infos {
			b, err := os.ReadFile(filepath.Join(info, "METADATA"))
			if err != nil {
				continue
			}
			h, body := parseMetadata(string(b))
			name := first(h["name"])
			if name == "" {
				continue
			}
			key := pep503(name)
			version := first(h["version"])
			if o := best[key]; o != nil && cmpVersion(o.version, version) >= 0 {
				continue
			}
			var kw []string
			if k := first(h["keywords"]); k != "" {
				sep := " "
				if strings.Contains(k, ",") {
					sep = ","
				}
				for _, w := range strings.Split(k, sep) {
					if w = strings.TrimSpace(w); w != "" {
						kw = append(kw, w)
					}
				}
			}
			var t strings.Builder
			t.WriteString("[project]\n")
			fmt.Fprintf(&t, "name = %s\nversion = %s\n", tomlString(name), tomlString(version))
			if s := first(h["summary"]); s != "" && s != "UNKNOWN" {
				fmt.Fprintf(&t, "description = %s\n", tomlString(s))
			}
			if len(kw) > 0 {
				qs := make([]string, len(kw))
				for i, k := range kw {
					qs[i] = tomlString(k)
				}
				fmt.Fprintf(&t, "keywords = [%s]\n", strings.Join(qs, ", "))
			}
			files := map[string]string{"pyproject.toml": t.String()}
			if body = strings.TrimSpace(body); body != "" && body != "UNKNOWN" {
				rn := "README.rst"
				switch ct := first(h["description-content-type"]); {
				case strings.Contains(ct, "markdown"):
					rn = "README.md"
				case strings.Contains(ct, "plain"):
					rn = "README.txt"
				}
				files[rn] = body + "\n"
			}
			var deps []string
			for _, r := range h["requires-dist"] {
				if strings.Contains(r, "extra ==") {
					continue
				}
				if m := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*`).FindString(r); m != "" {
					deps = append(deps, m)
				}
			}
			best[key] = &pkg{
				rec: selection.Record{Dir: "py/" + key, Kind: "pyproject.toml", From: "pypi " + name + " " + version + " (installed METADATA)", Files: files},
				eco: "py", name: name, version: version, deps: deps,
			}
		}
	}
	return sortedValues(best)
}

// parseMetadata reads core metadata: RFC 822 headers, then the long
// description as the body (or a Description header with continuation
// lines, in older versions).
func parseMetadata(s string) (map[string][]string, string) {
	h := map[string][]string{}
	lines := strings.Split(s, "\n")
	i := 0
	last := ""
	var desc []string
	for ; i < len(lines); i++ {
		l := strings.TrimRight(lines[i], "\r")
		if l == "" {
			i++
			break
		}
		if (l[0] == ' ' || l[0] == '\t') && last != "" {
			if last == "description" {
				desc = append(desc, strings.TrimPrefix(strings.TrimLeft(l, " \t"), "|"))
			}
			continue
		}
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		last = strings.ToLower(strings.TrimSpace(k))
		v = strings.TrimSpace(v)
		if last == "description" {
			desc = append(desc, v)
			continue
		}
		h[last] = append(h[last], v)
	}
	body := strings.Join(lines[min(i, len(lines)):], "\n")
	if strings.TrimSpace(body) == "" {
		body = strings.Join(desc, "\n")
	}
	return h, body
}

func pep503(s string) string {
	return strings.ToLower(regexp.MustCompile(`[-_.]+`).ReplaceAllString(s, "-"))
}

func tomlString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

// ---------------------------------------------------------------- Debian

func debSources() []*pkg {
	out, err := exec.Command("dpkg-query", "-W", "-f", "${Package}\t${Source}\t${Version}\n${Description}\n\x1e\n").Output()
	if err != nil {
		log.Printf("dpkg-query: %v (no Debian packages)", err)
		return nil
	}
	type bin struct{ name, source, version, desc string }
	bySource := map[string][]bin{}
	for _, chunk := range strings.Split(string(out), "\x1e\n") {
		head, desc, ok := strings.Cut(chunk, "\n")
		if !ok {
			continue
		}
		f := strings.Split(head, "\t")
		if len(f) < 3 {
			continue
		}
		src := strings.Fields(f[1] + " ")
		source := f[0]
		if len(src) > 0 {
			source = src[0]
		}
		bySource[source] = append(bySource[source], bin{f[0], source, f[2], strings.TrimRight(desc, "\n")})
	}
	var res []*pkg
	for source, bins := range bySource {
		sort.Slice(bins, func(i, j int) bool { return bins[i].name < bins[j].name })
		b := bins[0]
		for _, x := range bins {
			if x.name == source {
				b = x
			}
		}
		lines := strings.Split(b.desc, "\n")
		syn := strings.TrimSpace(lines[0])
		var para []string
		for _, l := range lines[1:] {
			t := strings.TrimSpace(l)
			if t == "." {
				break
			}
			para = append(para, t)
		}
		if syn == "" {
			continue
		}
		text := upperFirst(syn) + "."
		if len(para) > 0 {
			text += " " + strings.Join(para, " ")
		}
		readme := "# " + source + "\n\n" + wrap(text, 78) + "\n"
		res = append(res, &pkg{
			rec: selection.Record{Dir: "src/" + source, Kind: "none", From: "debian " + b.name + " " + b.version + " (dpkg description)", Files: map[string]string{"README.md": readme}},
			eco: "deb", name: source, version: b.version,
		})
	}
	sort.Slice(res, func(i, j int) bool { return res[i].rec.Dir < res[j].rec.Dir })
	return res
}

func upperFirst(s string) string {
	for i, r := range s {
		return string(unicode.ToUpper(r)) + s[i+len(string(r)):]
	}
	return s
}

func wrap(s string, n int) string {
	var b strings.Builder
	col := 0
	for _, w := range strings.Fields(s) {
		if col > 0 && col+1+len(w) > n {
			b.WriteByte('\n')
			col = 0
		} else if col > 0 {
			b.WriteByte(' ')
			col++
		}
		b.WriteString(w)
		col += len(w)
	}
	return b.String()
}

// ---------------------------------------------------------------- hand-written

func handwritten(file string) ([]*pkg, error) {
	var res []*pkg
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var r selection.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", file, n, err)
		}
		if r.From == "" {
			r.From = "handwritten"
		}
		res = append(res, &pkg{rec: r, eco: "hand"})
	}
	return res, sc.Err()
}

func readQueries(file string) ([]selection.Query, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var qs []selection.Query
	for n, line := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var q selection.Query
		if err := json.Unmarshal([]byte(line), &q); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", file, n+1, err)
		}
		qs = append(qs, q)
	}
	return qs, nil
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

// ---------------------------------------------------------------- queries

// norm is the separator- and case-insensitive form used to decide which
// projects answer a name query: letters and digits only, lowercased.
func norm(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// base is a package name without its npm scope, or a module path's last
// element (not a /vN major-version suffix).
func base(p string) string {
	if strings.HasPrefix(p, "@") {
		if _, after, ok := strings.Cut(p, "/"); ok {
			return after
		}
	}
	if strings.Contains(p, "/") {
		segs := strings.Split(strings.Trim(p, "/"), "/")
		n := len(segs) - 1
		if n > 0 && regexp.MustCompile(`^v[0-9]+$`).MatchString(segs[n]) {
			n--
		}
		return segs[n]
	}
	return p
}

func names(m local.Metadata) (exact, loose []string) {
	exact = append(exact, strings.ToLower(m.Name))
	loose = append(loose, norm(m.Name))
	for _, p := range m.Packages {
		exact = append(exact, strings.ToLower(p))
		loose = append(loose, norm(p), norm(base(p)))
	}
	return exact, loose
}

func hash(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// pick returns up to n items in a fixed pseudo-random order.
func pick[T any](items []T, key func(T) string, n int) []T {
	s := slices.Clone(items)
	sort.SliceStable(s, func(i, j int) bool { return hash(key(s[i])) < hash(key(s[j])) })
	return s[:min(n, len(s))]
}

var rePart = regexp.MustCompile(`[A-Z]+[a-z0-9]*|[a-z0-9]+`)

// parts splits a name at separators (and camelCase humps when it has none).
func parts(s string) []string {
	var out []string
	for _, seg := range regexp.MustCompile(`[-_. ]+`).Split(s, -1) {
		if seg == "" {
			continue
		}
		if strings.ContainsAny(s, "-_. ") {
			out = append(out, strings.ToLower(seg))
			continue
		}
		for _, p := range rePart.FindAllString(seg, -1) {
			out = append(out, strings.ToLower(p))
		}
	}
	return out
}

func variants(s string) []string {
	ps := parts(s)
	if len(ps) < 2 {
		return nil
	}
	letters := 0
	for _, p := range ps {
		if strings.IndexFunc(p, unicode.IsLetter) >= 0 {
			letters++
		}
	}
	if letters < 2 {
		return nil
	}
	camel := ps[0]
	title := []string{}
	for i, p := range ps {
		t := strings.ToUpper(p[:1]) + p[1:]
		if i > 0 {
			camel += t
		}
		title = append(title, t)
	}
	vs := []string{strings.Join(ps, " "), strings.Join(ps, "_"), camel, strings.Join(ps, "-"), strings.Join(title, " ")}
	return slices.DeleteFunc(vs, func(v string) bool { return v == s })
}

func genQueries(ps []*pkg) []selection.Query {
	type entry struct {
		p            *pkg
		exact, loose []string
	}
	var es []entry
	for _, p := range ps {
		e, l := names(p.meta)
		es = append(es, entry{p, e, l})
	}
	expectExact := func(q string) []string {
		var out []string
		for _, e := range es {
			if slices.Contains(e.exact, strings.ToLower(q)) {
				out = append(out, e.p.rec.Dir)
			}
		}
		return out
	}
	expectLoose := func(q string) []string {
		var out []string
		for _, e := range es {
			if slices.Contains(e.loose, norm(q)) {
				out = append(out, e.p.rec.Dir)
			}
		}
		return out
	}
	expectPkg := func(q string) []string {
		var out []string
		for _, e := range es {
			if slices.ContainsFunc(e.p.meta.Packages, func(p string) bool { return norm(p) == norm(q) }) {
				out = append(out, e.p.rec.Dir)
			}
		}
		return out
	}
	// The declared name an agent would type: the package, else the name.
	declared := func(p *pkg) string {
		if len(p.meta.Packages) > 0 {
			return p.meta.Packages[0]
		}
		return p.meta.Name
	}
	originals := slices.DeleteFunc(slices.Clone(ps), func(p *pkg) bool { return p.rec.SameAs != "" })
	byEco := func(eco string, cond func(*pkg) bool) []*pkg {
		var out []*pkg
		for _, p := range originals {
			if p.eco == eco && (cond == nil || cond(p)) {
				out = append(out, p)
			}
		}
		return out
	}
	key := func(p *pkg) string { return p.rec.Dir }
	scoped := func(p *pkg) bool { return strings.HasPrefix(declared(p), "@") }
	unscoped := func(p *pkg) bool { return !scoped(p) }

	var qs []selection.Query
	add := func(kind, q, target string, expect []string) {
		if len(expect) == 0 {
			log.Printf("no expectation for %s %q", kind, q)
			return
		}
		for _, x := range qs {
			if x.Query == q && x.Kind == kind {
				return
			}
		}
		qs = append(qs, selection.Query{Query: q, Kind: kind, Expect: expect, Target: target})
	}

	// exact: the declared package (or name), from every source.
	for _, g := range []struct {
		eco  string
		cond func(*pkg) bool
		n    int
	}{{"npm", unscoped, 30}, {"npm", scoped, 15}, {"go", nil, 15}, {"py", nil, 20}, {"deb", nil, 15}, {"hand", nil, 12}} {
		for _, p := range pick(byEco(g.eco, g.cond), key, g.n) {
			d := declared(p)
			add(selection.KindExact, d, d, expectExact(d))
		}
	}

	// separators: a multi-word base name written with other separators
	// or case; one variant per name, the variants taken in turn.
	i := 0
	for _, g := range []struct {
		eco string
		n   int
	}{{"npm", 45}, {"py", 20}, {"deb", 15}, {"go", 8}, {"hand", 12}} {
		cands := byEco(g.eco, func(p *pkg) bool { return len(variants(base(declared(p)))) > 0 })
		for _, p := range pick(cands, key, g.n) {
			vs := variants(base(declared(p)))
			v := vs[i%len(vs)]
			i++
			add(selection.KindSeparators, v, declared(p), expectLoose(v))
		}
	}

	// unscoped: a scoped npm name without its scope, a module path's last
	// element.
	for _, g := range []struct {
		eco  string
		cond func(*pkg) bool
		n    int
	}{{"npm", scoped, 40}, {"go", nil, 15}, {"hand", func(p *pkg) bool { return base(declared(p)) != declared(p) }, 10}} {
		for _, p := range pick(byEco(g.eco, g.cond), key, g.n) {
			b := base(declared(p))
			if b == declared(p) {
				continue
			}
			add(selection.KindUnscoped, b, declared(p), expectLoose(b))
		}
	}

	// dependency: a dependency exactly as a catalogued workspace's
	// manifest names it, asked from that workspace.
	type edge struct {
		ws  *pkg
		dep string
	}
	for _, g := range []struct {
		eco string
		n   int
	}{{"npm", 25}, {"go", 12}, {"py", 15}} {
		var edges []edge
		seenDep := map[string]bool{}
		for _, p := range pick(byEco(g.eco, nil), key, 1<<30) {
			for _, d := range p.deps {
				if seenDep[norm(d)] || len(expectPkg(d)) == 0 || slices.Contains(expectPkg(d), p.rec.Dir) {
					continue
				}
				seenDep[norm(d)] = true
				edges = append(edges, edge{p, d})
				break // one dependency per workspace, then the next workspace
			}
		}
		for _, e := range pick(edges, func(e edge) string { return e.dep }, g.n) {
			n := len(qs)
			add(selection.KindDependency, e.dep, e.dep, expectPkg(e.dep))
			if len(qs) > n {
				qs[n].Workspace = e.ws.rec.Dir
			}
		}
	}
	return qs
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
