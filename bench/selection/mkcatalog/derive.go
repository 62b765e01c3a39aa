package main

import (
	"bytes"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cgcat/cgcat/bench/selection"
)

// Misspelt and host-qualified names (issue 15). They are derived from the
// catalog alone, by fixed rules, so `-derive` can add them to a committed
// query set without re-reading the machine's packages; a full run makes
// the same ones.

// derivedKinds are the kinds derivedQueries writes; -derive replaces them.
var derivedKinds = []string{selection.KindTypo, selection.KindTypo2, selection.KindTransposed, selection.KindHost}

// qwerty lists each letter's neighbours on a US keyboard: the letters a
// slipping finger types instead.
var qwerty = map[byte]string{
	'q': "wa", 'w': "qes", 'e': "wrd", 'r': "etf", 't': "ryg", 'y': "tuh", 'u': "yij", 'i': "uok", 'o': "ipl", 'p': "ol",
	'a': "qsz", 's': "adwx", 'd': "sfe", 'f': "dgr", 'g': "fht", 'h': "gjy", 'j': "hku", 'k': "jli", 'l': "ko",
	'z': "xa", 'x': "zcs", 'c': "xvd", 'v': "cbf", 'b': "vng", 'n': "bmh", 'm': "nj",
}

// osa is the optimal-string-alignment distance (Levenshtein plus adjacent
// transpositions), the plain textbook table: the yardstick the derived
// queries are checked against, independent of local/search's code.
func osa(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			c := 1
			if a[i-1] == b[j-1] {
				c = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+c)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// edit applies one slip to w at position p: deletion, a neighbouring key
// typed instead, or a neighbouring key typed as well.
func edit(w string, op, p int, h uint64) string {
	c := w[p]
	nb := qwerty[c]
	if nb == "" {
		nb = "e"
	}
	n := nb[h%uint64(len(nb))]
	switch op {
	case 0:
		return w[:p] + w[p+1:]
	case 1:
		return w[:p] + string(n) + w[p+1:]
	}
	return w[:p+1] + string(n) + w[p+1:]
}

func lettersOnly(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 'a' || s[i] > 'z' {
			return false
		}
	}
	return s != ""
}

// misspell misspells one part (split at separators) of name: one slip for
// KindTypo (parts of 4+ letters), two for KindTypo2 (parts of 8+ letters,
// at different places), two neighbouring letters swapped for
// KindTransposed (4+ letters). The choices follow h. ok is false when name
// has no such part, or the slips did not make a word of that many letters
// that far from the part.
func misspell(name, kind string, h uint64) (string, bool) {
	minLen, want := 4, 1
	if kind == selection.KindTypo2 {
		minLen, want = 8, 2
	}
	type span struct{ a, b int }
	var parts []span
	start := -1
	for i := 0; i <= len(name); i++ {
		if i < len(name) && !strings.ContainsRune("-_. /", rune(name[i])) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 && i-start >= minLen && lettersOnly(name[start:i]) {
			parts = append(parts, span{start, i})
		}
		start = -1
	}
	if len(parts) == 0 {
		return "", false
	}
	sp := parts[h%uint64(len(parts))]
	w := name[sp.a:sp.b]
	h /= uint64(len(parts))
	var out string
	switch kind {
	case selection.KindTransposed:
		p := int(h % uint64(len(w)-1))
		if w[p] == w[p+1] {
			p = (p + 1) % (len(w) - 1)
		}
		out = w[:p] + string(w[p+1]) + string(w[p]) + w[p+2:]
	case selection.KindTypo:
		out = edit(w, int(h%3), int((h/3)%uint64(len(w))), h/97)
	default:
		// Two slips at least two letters apart, the later one first so the
		// earlier position still points at the same letter.
		p1 := int((h / 3) % uint64(len(w)/2))
		p2 := len(w)/2 + int((h/7)%uint64(len(w)-len(w)/2))
		if p2-p1 < 2 {
			p2 = min(len(w)-1, p1+2)
		}
		out = edit(w, int((h/11)%3), p2, h/13)
		out = edit(out, int(h%3), p1, h/17)
	}
	// The misspelt part keeps the length its bound is for: the forgiving
	// search allows one slip in a word of 4–7 letters, two from 8.
	if osa(w, out) != want || len(out) < minLen {
		return "", false
	}
	return name[:sp.a] + out + name[sp.b:], true
}

// derivedQueries makes the misspelt and host-qualified name queries from
// the catalog's originals (clones are added to the answers later).
func derivedQueries(ps []*pkg) []selection.Query {
	originals := originalsOf(ps)
	idx := newNameIndex(originals)
	var known []string // every name and package, loose, to keep misspellings that are names themselves out
	for _, e := range idx.entries {
		known = append(known, e.loose...)
	}
	set := derivedSet{seen: map[string]bool{}}
	misspeltQueries(&set, idx, originals, known)
	hostQueries(&set, idx, originals)
	return set.qs
}

// derivedSet collects derived queries, one per kind and text, none without
// an expected answer.
type derivedSet struct {
	qs   []selection.Query
	seen map[string]bool
}

func (s *derivedSet) add(kind, q, target string, expect []string) bool {
	if len(expect) == 0 || s.seen[kind+"\x00"+q] {
		return false
	}
	s.seen[kind+"\x00"+q] = true
	s.qs = append(s.qs, selection.Query{Query: q, Kind: kind, Expect: expect, Target: target})
	return true
}

// misspellable: the name an agent would type is letters (digits aside).
func misspellable(p *pkg) bool {
	return lettersOnly(strings.Trim(norm(base(declared(p))), "0123456789"))
}

// misspeltQueries: the name an agent would type (the unscoped package, a
// module path's last element), lowercased, one part misspelt. A
// misspelling that is itself some project's name is no typo: skipped.
func misspeltQueries(set *derivedSet, idx nameIndex, originals []*pkg, known []string) {
	for _, g := range []struct {
		kind string
		n    map[string]int
	}{
		{selection.KindTypo, map[string]int{"npm": 25, "go": 10, "py": 15, "deb": 15, "hand": 5}},
		{selection.KindTypo2, map[string]int{"npm": 15, "go": 5, "py": 10, "deb": 10, "hand": 3}},
		{selection.KindTransposed, map[string]int{"npm": 15, "go": 6, "py": 10, "deb": 10, "hand": 4}},
	} {
		for _, eco := range []string{"npm", "go", "py", "deb", "hand"} {
			got := 0
			for _, p := range pick(ofEco(originals, eco, misspellable), func(p *pkg) string { return g.kind + p.rec.Dir }, 1<<30) {
				if got == g.n[eco] {
					break
				}
				target := strings.ToLower(base(declared(p)))
				q, ok := misspell(target, g.kind, hash(g.kind+"/"+p.rec.Dir))
				if !ok || slices.Contains(known, norm(q)) {
					continue
				}
				if set.add(g.kind, q, target, idx.loose(target)) {
					got++
				}
			}
		}
	}
}

// hostForms are the ways a registry page, a repository URL or an install
// command names a package, per source.
var hostForms = map[string][]func(string) string{
	"npm": {
		func(n string) string { return "npm " + n },
		func(n string) string { return "https://www.npmjs.com/package/" + n },
		func(n string) string { return "npm install " + n },
		func(n string) string { return "npmjs.com/package/" + n },
	},
	"go": {
		func(m string) string { return "https://" + m },
		func(m string) string { return "pkg.go.dev/" + m },
		func(m string) string { return "go get " + m },
		func(m string) string { return "https://" + m + ".git" },
	},
	"py": {
		func(n string) string { return "pypi " + n },
		func(n string) string { return "https://pypi.org/project/" + n + "/" },
		func(n string) string { return "pip install " + n },
	},
}

// hostQueries: host-qualified names, the forms taken in turn. The expected
// answer is the package.
func hostQueries(set *derivedSet, idx nameIndex, originals []*pkg) {
	for _, g := range []struct {
		eco string
		n   int
	}{{"npm", 16}, {"go", 12}, {"py", 12}} {
		forms := hostForms[g.eco]
		i := 0
		for _, p := range pick(originals, func(p *pkg) string { return "host" + p.rec.Dir }, 1<<30) {
			if i == g.n {
				break
			}
			if p.eco != g.eco || len(p.meta.Packages) == 0 {
				continue
			}
			d := p.meta.Packages[0]
			if g.eco == "go" && !strings.HasPrefix(d, "github.com/") && i%len(forms) == 3 {
				continue // only GitHub repositories end in .git
			}
			if set.add(selection.KindHost, forms[i%len(forms)](d), d, idx.exact(d)) {
				i++
			}
		}
	}
}

// ecoOf maps a catalog record's From back to its source.
func ecoOf(from string) string {
	switch {
	case strings.HasPrefix(from, "npm "):
		return "npm"
	case strings.HasPrefix(from, "go "):
		return "go"
	case strings.HasPrefix(from, "pypi "):
		return "py"
	case strings.HasPrefix(from, "debian "):
		return "deb"
	}
	return "hand"
}

// deriveOnly replaces the derived queries of the committed query set in
// dir, reading the committed catalog (no package of the machine).
func deriveOnly(dir string) {
	recs, err := selection.LoadCatalog(dir)
	if err != nil {
		log.Fatal(err)
	}
	tmp, err := os.MkdirTemp("", "mkcatalog-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	var ps []*pkg
	clones := map[string][]string{}
	for _, r := range recs {
		p := &pkg{rec: r, eco: ecoOf(r.From)}
		if r.SameAs != "" {
			clones[r.SameAs] = append(clones[r.SameAs], r.Dir)
		} else {
			p.meta = readMeta(tmp, r.Dir, r.Files)
		}
		ps = append(ps, p)
	}
	qs, err := selection.LoadQueries(dir)
	if err != nil {
		log.Fatal(err)
	}
	qs = slices.DeleteFunc(qs, func(q selection.Query) bool { return slices.Contains(derivedKinds, q.Kind) })
	qs = append(qs, withClones(derivedQueries(ps), clones)...)
	var buf bytes.Buffer
	for _, q := range qs {
		writeJSON(&buf, q)
	}
	if err := os.WriteFile(filepath.Join(dir, "queries.jsonl"), buf.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
	count := map[string]int{}
	for _, q := range qs {
		count[q.Kind]++
	}
	log.Printf("%d queries %v", len(qs), count)
}

// withClones adds to each query's answers the clones of its answers.
func withClones(qs []selection.Query, clones map[string][]string) []selection.Query {
	for i := range qs {
		for _, d := range slices.Clone(qs[i].Expect) {
			for _, c := range clones[d] {
				if !slices.Contains(qs[i].Expect, c) {
					qs[i].Expect = append(qs[i].Expect, c)
				}
			}
		}
	}
	return qs
}
