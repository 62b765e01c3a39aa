package search

// A query parsed once per call: its terms and how to show them, its
// compounds, which words are host-only qualifiers, its fuzzy keys and the
// neighbouring words run together.

import (
	"math/bits"
	"slices"
	"strings"
	"unicode/utf8"
)

// stopwords are dropped from a query that has other words, so "the service
// for orders" is not rewarded for matching "the" and "for". Stored stemmed.
var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an and are as at be by does for from has have how i in into is
		it its me my of on or our that the their this to was were what when where which who with you your`) {
		m[string(stem([]byte(w)))] = true
	}
	return m
}()

type query struct {
	lower  string // lowerFold of the trimmed query: literal exact matches
	norm   string // normalize: separator-insensitive exact matches
	quoted string // the query as shown in exact reasons
	// The package name the query wraps in a URL, registry page or install
	// command (see unwrap), in the same three forms; "" if none.
	altLower, altNorm, altQuoted string
	terms                        []string
	disp                         []string // per term: how a reason shows it
	groups                       []qgroup
	content                      uint64 // terms that are no host-only words
	fuzzy                        uint64 // terms with fuzzy keys
	whole                        uint64 // a one-word query: the term that is all of it
	fzKeys                       []fuzzyKey
	pairs                        []pairTerm
	phrases                      []pairTerm // a phrase's joined and short forms (phrases.go)
}

// qgroup is one compound ("order-sdk") or CJK run ("客户端") of the query
// with the bits of its terms. When a field matched every term of a group,
// a reason shows the group as the user wrote it; otherwise the pieces.
type qgroup struct {
	disp     string
	members  uint64
	complete bool   // false when the term cap cut the group
	text     string // lowercased, for the host-word test
	raw      string // normalize of the group: its letters and digits
}

// pairTerm is two neighbouring query words run together, for a name that
// writes them as one ("fast api" → fastapi, "oauth 2" → oauth2).
type pairTerm struct {
	text string
	bits uint64
}

// parseQuery reads a query: its exact forms, then its words — terms,
// compounds, host-only qualifiers, fuzzy keys, words run together and
// known phrases. nil for an empty query.
func parseQuery(s string) *query {
	s = strings.TrimSpace(cutUTF8(s, maxQueryBytes))
	if s == "" {
		return nil
	}
	q := &query{lower: lowerFold(s), norm: normalize(s), quoted: quote(s, maxQueryRunes)}
	if alt := unwrap(s); alt != "" && normalize(alt) != q.norm && normalize(alt) != "" {
		q.altLower, q.altNorm, q.altQuoted = lowerFold(alt), normalize(alt), quote(alt, maxQueryRunes)
	}
	// Words come from the query without what a URL wraps around a path
	// (scheme, user, ".git"): those are no words anyone searches for.
	s = trimURL(s)
	raw1, cjk := q.addTerms(s, queryTokens(s))
	host := q.qualifyHostWords()
	q.addFuzzyKeys(raw1, cjk)
	if len(q.groups) == 1 {
		for i := range q.terms {
			if raw1[i] == q.groups[0].raw && q.fuzzy&(1<<i) != 0 {
				q.whole = 1 << i
			}
		}
	}
	q.addPairs(host, cjk)
	q.addPhrases()
	return q
}

// queryToken is one term the tokenizer gave for a query, before repeats
// and stopwords are dropped.
type queryToken struct {
	term, disp string
	group      int
	start, end int
	stop       bool
	cjk        bool
}

// queryTokens tokenises a query, at most maxRawTokens terms.
func queryTokens(s string) []queryToken {
	var raws []queryToken
	var t tokenizer
	t.tokenize(s, func(kind tokKind, term []byte, group, start, end int) {
		if len(raws) >= maxRawTokens {
			return
		}
		disp := s[start:end]
		if kind == kindPart {
			disp = strings.ToLower(disp)
		}
		raws = append(raws, queryToken{string(term), disp, group, start, end, kind == kindPart && stopwords[string(term)], kind == kindCJK})
	})
	return raws
}

// addTerms gives the query its distinct terms (stopwords dropped when it
// has other words, at most maxQueryTerms) and its groups, and returns per
// term its letters and digits as typed, unstemmed, and the CJK terms.
func (q *query) addTerms(s string, raws []queryToken) (raw1 []string, cjk uint64) {
	content := slices.ContainsFunc(raws, func(r queryToken) bool { return !r.stop })
	pos := map[string]int{}
	cur := -1 // group id of the last qgroup
	var gStart, gEnd int
	finish := func() {
		if n := len(q.groups); n > 0 {
			g := &q.groups[n-1]
			g.disp = bound(s[gStart:gEnd], maxDisplayRunes)
			g.text = string(appendLower(nil, s[gStart:gEnd]))
			g.raw = normalize(s[gStart:gEnd])
		}
	}
	for _, r := range raws {
		if r.group != cur {
			finish()
			cur, gStart, gEnd = r.group, r.start, r.end
			q.groups = append(q.groups, qgroup{complete: true})
		}
		gStart, gEnd = min(gStart, r.start), max(gEnd, r.end)
		g := &q.groups[len(q.groups)-1]
		if content && r.stop {
			continue
		}
		i, ok := pos[r.term]
		if !ok {
			if len(q.terms) == maxQueryTerms {
				g.complete = false
				continue
			}
			i = len(q.terms)
			pos[r.term] = i
			q.terms = append(q.terms, r.term)
			q.disp = append(q.disp, bound(r.disp, maxDisplayRunes))
			raw1 = append(raw1, normalize(s[r.start:r.end]))
			if r.cjk {
				cjk |= 1 << i
			}
		}
		g.members |= 1 << i
	}
	finish()
	q.groups = slices.DeleteFunc(q.groups, func(g qgroup) bool { return g.members == 0 })
	return raw1, cjk
}

// qualifyHostWords sets the query's content terms: host-only words are
// qualifiers, unless the query has nothing else. It returns which groups
// are qualifiers.
func (q *query) qualifyHostWords() (host []bool) {
	texts := make([]string, len(q.groups))
	for i, g := range q.groups {
		texts[i] = g.text
	}
	var hostBits, contentBits uint64
	host = hostGroups(texts)
	for i, g := range q.groups {
		if host[i] {
			hostBits |= g.members
		} else {
			contentBits |= g.members
		}
	}
	q.content = contentBits
	if contentBits == 0 {
		q.content = hostBits
		clear(host)
	}
	return host
}

// addFuzzyKeys gives each content word of four runes or more (or a
// numeronym) its fuzzy keys: its stem and, when that differs, as typed.
func (q *query) addFuzzyKeys(raw1 []string, cjk uint64) {
	for i, term := range q.terms {
		if q.content&(1<<i) == 0 || cjk&(1<<i) != 0 || bits.OnesCount64(q.fuzzy) == maxFuzzyTerms {
			continue
		}
		d := fuzzyBound(utf8.RuneCountInString(raw1[i]))
		_, ok := fuzzyTerm(term)
		if ok || numeronym(term) > 0 {
			q.fzKeys = append(q.fzKeys, fuzzyKey{i, term, d})
		}
		if _, rok := fuzzyTerm(raw1[i]); rok && raw1[i] != term {
			q.fzKeys = append(q.fzKeys, fuzzyKey{i, raw1[i], d})
			ok = true
		}
		if ok || numeronym(term) > 0 {
			q.fuzzy |= 1 << i
		}
	}
}

// addPairs runs neighbouring one-word groups together (fast api →
// fastapi), qualifiers and CJK aside.
func (q *query) addPairs(host []bool, cjk uint64) {
	for i := 1; i < len(q.groups) && len(q.pairs) < maxPairs; i++ {
		a, b := &q.groups[i-1], &q.groups[i]
		if host[i-1] || host[i] || bits.OnesCount64(a.members) != 1 || bits.OnesCount64(b.members) != 1 ||
			(a.members|b.members)&cjk != 0 || !isASCII(a.raw) || !isASCII(b.raw) {
			continue
		}
		joined := stem([]byte(a.raw + b.raw))
		if len(joined) >= minFuzzyRunes && len(joined) <= maxTermLen {
			q.pairs = append(q.pairs, pairTerm{string(joined), a.members | b.members})
		}
	}
}
