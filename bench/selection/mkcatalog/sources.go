package main

// Where the catalog's projects come from: the package metadata already on
// this machine (npm, Go, Python, Debian) and the hand-written projects.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io/fs"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode"

	"github.com/cgcat/cgcat/bench/selection"
)

// ---------------------------------------------------------------- npm

func npmPackages(roots []string) []*pkg {
	best := map[string]*pkg{}
	for _, root := range roots {
		root = strings.TrimSpace(root)
		if root == "" {
			continue
		}
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || d.Name() != "package.json" || !inNodeModules(filepath.Dir(p)) {
				return nil
			}
			if n := npmPackage(p); n != nil {
				if o := best[n.name]; o == nil || cmpVersion(o.version, n.version) < 0 {
					best[n.name] = n
				}
			}
			return nil
		})
	}
	return sortedValues(best)
}

// inNodeModules says whether dir is a package installed in node_modules
// (scoped or not).
func inNodeModules(dir string) bool {
	parent := filepath.Base(filepath.Dir(dir))
	if strings.HasPrefix(parent, "@") {
		parent = filepath.Base(filepath.Dir(filepath.Dir(dir)))
	}
	return parent == "node_modules"
}

// npmPackage reads the package whose package.json is at p, keeping of the
// manifest what metadata reading uses; nil when it names no package.
func npmPackage(p string) *pkg {
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
	man := map[string]any{"name": v.Name, "version": v.Version}
	if v.Description != "" {
		man["description"] = v.Description
	}
	if len(v.Keywords) > 0 {
		man["keywords"] = v.Keywords
	}
	mb, _ := json.Marshal(man)
	files := map[string]string{"package.json": string(mb)}
	if name, body := readmeIn(filepath.Dir(p)); name != "" {
		files[name] = body
	}
	deps := make([]string, 0, len(v.Dependencies))
	for k := range v.Dependencies {
		deps = append(deps, k)
	}
	sort.Strings(deps)
	return &pkg{
		rec: selection.Record{Dir: "js/" + v.Name, Kind: "package.json", From: "npm " + v.Name + "@" + v.Version, Files: files},
		eco: "npm", name: v.Name, version: v.Version, deps: deps,
	}
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
	mods := goModuleSet{}
	mods.addExtracted(cache)
	mods.addDownloaded(cache)
	return sortedValues(mods)
}

// goModuleSet keeps one version of each module: an extracted one with its
// README over a go.mod alone, else the newest.
type goModuleSet map[string]*pkg

func (best goModuleSet) add(modfile []byte, version, readmeName, readme, from string) {
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

// addExtracted adds the extracted modules: <path>@<version>/go.mod.
func (best goModuleSet) addExtracted(cache string) {
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
			best.add(b, version, rn, rb, "module cache")
		}
		return filepath.SkipDir
	})
}

// addDownloaded adds the go.mod files only in cache/download:
// <path>/@v/<version>.mod.
func (best goModuleSet) addDownloaded(cache string) {
	dl := filepath.Join(cache, "cache", "download")
	_ = filepath.WalkDir(dl, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".mod") || filepath.Base(filepath.Dir(p)) != "@v" {
			return nil
		}
		b, err := os.ReadFile(p)
		if err == nil {
			best.add(b, strings.TrimSuffix(d.Name(), ".mod"), "", "", "go.mod from the download cache")
		}
		return nil
	})
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
			files := map[string]string{"pyproject.toml": pyProject(name, version, first(h["summary"]), pyKeywords(first(h["keywords"])))}
			if rn, rb := pyReadme(body, first(h["description-content-type"])); rn != "" {
				files[rn] = rb
			}
			best[key] = &pkg{
				rec: selection.Record{Dir: "py/" + key, Kind: "pyproject.toml", From: "pypi " + name + " " + version + " (installed METADATA)", Files: files},
				eco: "py", name: name, version: version, deps: pyRequires(h["requires-dist"]),
			}
		}
	}
	return sortedValues(best)
}

// pyKeywords splits the Keywords header: at commas when it has any, else
// at spaces.
func pyKeywords(k string) []string {
	if k == "" {
		return nil
	}
	sep := " "
	if strings.Contains(k, ",") {
		sep = ","
	}
	var kw []string
	for _, w := range strings.Split(k, sep) {
		if w = strings.TrimSpace(w); w != "" {
			kw = append(kw, w)
		}
	}
	return kw
}

// pyProject is the pyproject.toml that says what the METADATA says.
func pyProject(name, version, summary string, kw []string) string {
	var t strings.Builder
	t.WriteString("[project]\n")
	fmt.Fprintf(&t, "name = %s\nversion = %s\n", tomlString(name), tomlString(version))
	if summary != "" && summary != "UNKNOWN" {
		fmt.Fprintf(&t, "description = %s\n", tomlString(summary))
	}
	if len(kw) > 0 {
		qs := make([]string, len(kw))
		for i, k := range kw {
			qs[i] = tomlString(k)
		}
		fmt.Fprintf(&t, "keywords = [%s]\n", strings.Join(qs, ", "))
	}
	return t.String()
}

// pyReadme is the long description as a README named for its content
// type (reStructuredText unless it says otherwise); none when empty.
func pyReadme(body, contentType string) (name, text string) {
	if body = strings.TrimSpace(body); body == "" || body == "UNKNOWN" {
		return "", ""
	}
	name = "README.rst"
	switch {
	case strings.Contains(contentType, "markdown"):
		name = "README.md"
	case strings.Contains(contentType, "plain"):
		name = "README.txt"
	}
	return name, body + "\n"
}

// reDistName is the distribution name at the start of a Requires-Dist.
var reDistName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*`)

// pyRequires are the distributions required without an extra.
func pyRequires(requires []string) []string {
	var deps []string
	for _, r := range requires {
		if strings.Contains(r, "extra ==") {
			continue
		}
		if m := reDistName.FindString(r); m != "" {
			deps = append(deps, m)
		}
	}
	return deps
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
