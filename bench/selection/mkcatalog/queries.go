package main

// The queries derived from the data by fixed rules: exact, separators,
// unscoped and dependency (see genQueries).

import (
	"hash/fnv"
	"log"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/cgcat/cgcat/bench/selection"
	"github.com/cgcat/cgcat/local"
)

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

// nameIndex answers which projects a name query expects, from each
// project's exact and loose (separator- and case-insensitive) names.
type nameIndex struct {
	entries []nameEntry
}

type nameEntry struct {
	p            *pkg
	exact, loose []string
}

func newNameIndex(ps []*pkg) nameIndex {
	var idx nameIndex
	for _, p := range ps {
		e, l := names(p.meta)
		idx.entries = append(idx.entries, nameEntry{p, e, l})
	}
	return idx
}

// exact: the projects whose name or a package is q, case aside.
func (idx nameIndex) exact(q string) []string {
	var out []string
	for _, e := range idx.entries {
		if slices.Contains(e.exact, strings.ToLower(q)) {
			out = append(out, e.p.rec.Dir)
		}
	}
	return out
}

// loose: the projects whose name, a package or a package's base is q,
// separators and case aside.
func (idx nameIndex) loose(q string) []string {
	var out []string
	for _, e := range idx.entries {
		if slices.Contains(e.loose, norm(q)) {
			out = append(out, e.p.rec.Dir)
		}
	}
	return out
}

// pkg: the projects that declare the package q, separators and case aside.
func (idx nameIndex) pkg(q string) []string {
	var out []string
	for _, e := range idx.entries {
		if slices.ContainsFunc(e.p.meta.Packages, func(p string) bool { return norm(p) == norm(q) }) {
			out = append(out, e.p.rec.Dir)
		}
	}
	return out
}

// declared is the name an agent would type: the package, else the name.
func declared(p *pkg) string {
	if len(p.meta.Packages) > 0 {
		return p.meta.Packages[0]
	}
	return p.meta.Name
}

// originalsOf leaves out the clones (records that are the same as another).
func originalsOf(ps []*pkg) []*pkg {
	return slices.DeleteFunc(slices.Clone(ps), func(p *pkg) bool { return p.rec.SameAs != "" })
}

// ofEco are the packages of one source that meet cond (all of them for nil).
func ofEco(ps []*pkg, eco string, cond func(*pkg) bool) []*pkg {
	var out []*pkg
	for _, p := range ps {
		if p.eco == eco && (cond == nil || cond(p)) {
			out = append(out, p)
		}
	}
	return out
}

func dirKey(p *pkg) string { return p.rec.Dir }

func scoped(p *pkg) bool   { return strings.HasPrefix(declared(p), "@") }
func unscoped(p *pkg) bool { return !scoped(p) }

// querySet collects the generated queries: one per kind and text, none
// without an expected answer.
type querySet struct {
	qs []selection.Query
}

// add keeps the query unless it has no expectation or is there already;
// it says whether it kept it.
func (s *querySet) add(kind, q, target string, expect []string) bool {
	if len(expect) == 0 {
		log.Printf("no expectation for %s %q", kind, q)
		return false
	}
	for _, x := range s.qs {
		if x.Query == q && x.Kind == kind {
			return false
		}
	}
	s.qs = append(s.qs, selection.Query{Query: q, Kind: kind, Expect: expect, Target: target})
	return true
}

// genQueries makes the queries of the kinds exact, separators, unscoped
// and dependency, each source's share taken in a fixed pseudo-random order.
func genQueries(ps []*pkg) []selection.Query {
	idx := newNameIndex(ps)
	originals := originalsOf(ps)
	var set querySet
	exactQueries(&set, idx, originals)
	separatorQueries(&set, idx, originals)
	unscopedQueries(&set, idx, originals)
	dependencyQueries(&set, idx, originals)
	return set.qs
}

// exactQueries: the declared package (or name), from every source.
func exactQueries(set *querySet, idx nameIndex, originals []*pkg) {
	for _, g := range []struct {
		eco  string
		cond func(*pkg) bool
		n    int
	}{{"npm", unscoped, 30}, {"npm", scoped, 15}, {"go", nil, 15}, {"py", nil, 20}, {"deb", nil, 15}, {"hand", nil, 12}} {
		for _, p := range pick(ofEco(originals, g.eco, g.cond), dirKey, g.n) {
			d := declared(p)
			set.add(selection.KindExact, d, d, idx.exact(d))
		}
	}
}

// separatorQueries: a multi-word base name written with other separators
// or case; one variant per name, the variants taken in turn.
func separatorQueries(set *querySet, idx nameIndex, originals []*pkg) {
	i := 0
	for _, g := range []struct {
		eco string
		n   int
	}{{"npm", 45}, {"py", 20}, {"deb", 15}, {"go", 8}, {"hand", 12}} {
		cands := ofEco(originals, g.eco, func(p *pkg) bool { return len(variants(base(declared(p)))) > 0 })
		for _, p := range pick(cands, dirKey, g.n) {
			vs := variants(base(declared(p)))
			v := vs[i%len(vs)]
			i++
			set.add(selection.KindSeparators, v, declared(p), idx.loose(v))
		}
	}
}

// unscopedQueries: a scoped npm name without its scope, a module path's
// last element.
func unscopedQueries(set *querySet, idx nameIndex, originals []*pkg) {
	for _, g := range []struct {
		eco  string
		cond func(*pkg) bool
		n    int
	}{{"npm", scoped, 40}, {"go", nil, 15}, {"hand", func(p *pkg) bool { return base(declared(p)) != declared(p) }, 10}} {
		for _, p := range pick(ofEco(originals, g.eco, g.cond), dirKey, g.n) {
			b := base(declared(p))
			if b == declared(p) {
				continue
			}
			set.add(selection.KindUnscoped, b, declared(p), idx.loose(b))
		}
	}
}

// depEdge is a workspace and one dependency its manifest names.
type depEdge struct {
	ws  *pkg
	dep string
}

// dependencyQueries: a dependency exactly as a catalogued workspace's
// manifest names it, asked from that workspace.
func dependencyQueries(set *querySet, idx nameIndex, originals []*pkg) {
	for _, g := range []struct {
		eco string
		n   int
	}{{"npm", 25}, {"go", 12}, {"py", 15}} {
		edges := dependencyEdges(idx, ofEco(originals, g.eco, nil))
		for _, e := range pick(edges, func(e depEdge) string { return e.dep }, g.n) {
			if set.add(selection.KindDependency, e.dep, e.dep, idx.pkg(e.dep)) {
				set.qs[len(set.qs)-1].Workspace = e.ws.rec.Dir
			}
		}
	}
}

// dependencyEdges takes one dependency per workspace (in a fixed
// pseudo-random order of workspaces): the first that another catalogued
// project declares and no earlier workspace took.
func dependencyEdges(idx nameIndex, workspaces []*pkg) []depEdge {
	var edges []depEdge
	seenDep := map[string]bool{}
	for _, p := range pick(workspaces, dirKey, 1<<30) {
		for _, d := range p.deps {
			if seenDep[norm(d)] || len(idx.pkg(d)) == 0 || slices.Contains(idx.pkg(d), p.rec.Dir) {
				continue
			}
			seenDep[norm(d)] = true
			edges = append(edges, depEdge{p, d})
			break // one dependency per workspace, then the next workspace
		}
	}
	return edges
}
