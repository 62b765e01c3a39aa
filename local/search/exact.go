package search

// The exact tiers: documents by the normalised keys of their name, aliases
// and package names (kept by the overlay, read from the base), and the
// bands a query that is one of them gives.

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// indexExact adds (or removes) overlay slot under the normalised keys of
// its name, aliases and packages.
func (ix *Index) indexExact(slot uint32, add bool) {
	ix.over1(slot).eachExact(func(k exactKind, key string) {
		m := ix.exact[k]
		list := m[key]
		i := slices.Index(list, slot)
		switch {
		case add && i < 0:
			m[key] = append(list, slot)
		case !add && i >= 0:
			if list = slices.Delete(list, i, i+1); len(list) == 0 {
				delete(m, key)
			} else {
				m[key] = list
			}
		}
	})
}

// foldEq reports whether lowerFold(s) == lower, without allocating: exact
// matches compare a document's values with the query this way.
func foldEq(s, lower string) bool {
	s = strings.TrimSpace(s)
	var buf [utf8.UTFMax]byte
	j := 0
	for _, r := range s {
		if r < utf8.RuneSelf {
			c := byte(r)
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if j >= len(lower) || lower[j] != c {
				return false
			}
			j++
			continue
		}
		n := utf8.EncodeRune(buf[:], unicode.ToLower(foldWidth(r)))
		if len(lower)-j < n || lower[j:j+n] != string(buf[:n]) {
			return false
		}
		j += n
	}
	return j == len(lower)
}

var partialLabels = []string{"without scope", "artifact id", "last path segment"}

// exactKey is one form of the query the exact tiers compare: the query
// itself, or the package name it wraps (alt).
type exactKey struct {
	lower, norm, quoted string
	alt                 bool
}

func (q *query) exactKeys() []exactKey {
	keys := []exactKey{{q.lower, q.norm, q.quoted, false}}
	if q.altNorm != "" {
		keys = append(keys, exactKey{q.altLower, q.altNorm, q.altQuoted, true})
	}
	return keys
}

// matchExact raises the band of documents whose package, alias or name is
// the query, or the package name the query wraps.
func (ix *Index) matchExact(q *query, sc *scratch, narrow bool) {
	for _, key := range q.exactKeys() {
		if key.norm == "" {
			continue
		}
		for k := range numExact {
			if ix.base != nil {
				for _, slot := range ix.base.exact(exactKind(k), key.norm) {
					if ix.isTomb(slot) {
						continue
					}
					band, label, _ := ix.base.entry(slot).exactMatch(exactKind(k), key)
					if c := &sc.cands[sc.cand(slot, narrow)]; band > c.band {
						c.band, c.label = band, label
					}
				}
			}
			for _, slot := range ix.exact[k][key.norm] {
				band, label, _ := ix.over1(slot).exactMatch(exactKind(k), key)
				if c := &sc.cands[sc.cand(slot, narrow)]; band > c.band {
					c.band, c.label = band, label
				}
			}
		}
	}
}

// exactMatch returns the band of the document's best match of kind k with
// key, the partial form's label, and which package or alias matched (-1:
// the name).
func (e *docEntry) exactMatch(k exactKind, key exactKey) (band, label uint8, idx int) {
	list := e.packages
	lit, norm := bandPkg, bandPkgNorm
	switch k {
	case exPkgPart:
		idx = -1
		for i, p := range e.packages {
			form, flabel := partialOf(p)
			b := uint8(0)
			switch {
			case form == "":
			case foldEq(form, key.lower):
				b = bandPkgPartial
			case normalize(form) == key.norm:
				b = bandPkgPartialNorm
			}
			if b > band {
				band, label, idx = b, uint8(slices.Index(partialLabels, flabel)), i
			}
		}
		return band, label, idx
	case exAlias:
		list, lit, norm = e.aliases, bandAlias, bandAliasNorm
	case exName:
		switch {
		case foldEq(e.name, key.lower):
			return bandName, 0, -1
		case normalize(e.name) == key.norm:
			return bandNameNorm, 0, -1
		}
		return 0, 0, -1
	}
	if i := slices.IndexFunc(list, func(v string) bool { return foldEq(v, key.lower) }); i >= 0 {
		return uint8(lit), 0, i
	}
	for i, v := range list {
		if normalize(v) == key.norm {
			return uint8(norm), 0, i
		}
	}
	return 0, 0, -1
}
