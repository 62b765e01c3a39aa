package search

import (
	"math/bits"
	"slices"
	"strings"
	"unicode/utf8"
)

// maxSuggestions bounds what Suggest returns, whatever n asks.
const maxSuggestions = 20

// Suggest returns up to n spellings the query may have meant: names,
// aliases and package names of documents keep accepts (nil keeps all) with
// a word within the fuzzy tier's bound of a query word (one edit in a word
// of 4–7 runes, two from 8; swapped neighbours count as one), or, for a
// query of several words, of all of them run together. The best come
// first: those that hold more of the query's words, then fewer edits, then
// the listing order. Each is cleaned like a reason's quote (printable,
// one line, at most 48 runes) and appears once, whatever its case.
//
// It is for a "did you mean" when Search found nothing or only fuzzy hits.
// keep decides before anything about a document is used: a document it
// rejects never shapes the answer, so a suggestion never names a project
// the caller cannot see. Like Search, keep runs under the index's read
// lock and must not call back into the Index.
func (ix *Index) Suggest(query string, keep func(id string) bool, n int) []string {
	return ix.SuggestFilter(query, Filter{ID: keep}, n)
}

// SuggestFilter is Suggest with a Filter.
func (ix *Index) SuggestFilter(query string, keep Filter, n int) (suggestions []string) {
	defer ix.unguard(ix.guard())
	q := parseQuery(query)
	n = min(n, maxSuggestions)
	if q == nil || n <= 0 {
		return nil
	}
	keys := suggestKeys(q)
	if len(keys) == 0 {
		return nil
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.live == 0 {
		return nil
	}
	_, rank := ix.ensureOrder()
	targets := ix.expand(keys, nil)
	docs := ix.suggestDocs(targets, keep, rank)

	match := map[string]bool{}
	for _, t := range targets {
		match[ix.termText(t.id)] = true
	}
	var out []string
	var tok tokenizer
	for _, d := range docs {
		if len(out) == n {
			break
		}
		e := ix.entry(d.slot)
		if v := suggestValue(e, match, &tok); v != "" && !slices.ContainsFunc(out, func(o string) bool { return strings.EqualFold(o, v) }) {
			out = append(out, v)
		}
	}
	return out
}

// suggestKeys are the query's fuzzy keys and, for a query of several
// words, all of them run together: "react routr dom" → reactrouterdom, a
// compound of the name.
func suggestKeys(q *query) []fuzzyKey {
	keys := q.fzKeys
	if len(q.groups) > 1 {
		whole := fuzzyKey{qi: len(q.terms), text: string(stem([]byte(q.norm))), d: fuzzyBound(utf8.RuneCountInString(q.norm))}
		if _, ok := fuzzyTerm(whole.text); ok && whole.qi < 64 {
			keys = append(slices.Clip(keys), whole)
		}
	}
	return keys
}

// suggestDoc is a visible document with a name field close to the query:
// the query words it holds and its edits.
type suggestDoc struct {
	slot  uint32
	words uint64
	edits int
}

// suggestDocs are the visible documents the targets reach through a name
// field, best first: more of the query's words, then fewer edits, then
// the listing order. keep runs once per document.
func (ix *Index) suggestDocs(targets []fuzzyTarget, keep Filter, rank []uint32) []suggestDoc {
	var docs []suggestDoc
	seen := map[uint32]int{} // 1 + index in docs, or -1: rejected
	for _, t := range targets {
		bp, op := ix.postLists(t.id)
		for _, post := range [2][]posting{bp, op} {
			for _, p := range post {
				if p.tfs&nameTFs == 0 || ix.isTomb(p.slot) {
					continue
				}
				i, ok := seen[p.slot]
				if !ok {
					i = -1
					if keep.keeps(ix, p.slot) {
						docs = append(docs, suggestDoc{slot: p.slot})
						i = len(docs)
					}
					seen[p.slot] = i
				}
				if i < 0 {
					continue
				}
				d := &docs[i-1]
				if d.words&(1<<t.qi) == 0 {
					d.words |= 1 << t.qi
					d.edits += int(t.dist) // targets come best first per word
				}
			}
		}
	}
	slices.SortFunc(docs, func(a, b suggestDoc) int {
		if wa, wb := bits.OnesCount64(a.words), bits.OnesCount64(b.words); wa != wb {
			return wb - wa
		}
		if a.edits != b.edits {
			return a.edits - b.edits
		}
		return int(rank[a.slot]) - int(rank[b.slot])
	})
	return docs
}

// suggestValue is the first of the document's name, aliases and package
// names that holds a matched term, cleaned.
func suggestValue(e *docEntry, match map[string]bool, tok *tokenizer) string {
	for _, f := range []field{fName, fAlias, fPackage} {
		for i := range e.values(f) {
			idx := i
			if f == fName {
				idx = -1
			}
			v := e.value(f, idx)
			found := false
			tok.tokenize(v, func(_ tokKind, term []byte, _, _, _ int) {
				found = found || match[string(term)]
			})
			if found {
				return clean(v, maxValueRunes)
			}
		}
	}
	return ""
}
