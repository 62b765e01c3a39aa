package fakebrain

import (
	"regexp"
	"sort"
	"strings"
)

var wordRE = regexp.MustCompile(`[\p{L}\p{N}]+`)

func words(s string) []string { return wordRE.FindAllString(strings.ToLower(s), -1) }

// Search: keyword match of ANY query word in title or body, ranked.
func (b *Brain) Search(st *State, args map[string]any, sourceParam bool) (any, []string, error) {
	q, ok, te := str(args, "query")
	if te != nil {
		return nil, nil, te
	}
	if !ok || strings.TrimSpace(q) == "" {
		return nil, nil, invalid("query is required")
	}
	limit, te := integer(args, "limit", 20)
	if te != nil {
		return nil, nil, te
	}
	offset, te := integer(args, "offset", 0)
	if te != nil {
		return nil, nil, te
	}
	src := b.Source
	if sourceParam {
		if src, te = b.readSource(args); te != nil {
			return nil, nil, te
		}
	}
	qw := words(q)
	type hit struct {
		p     *Page
		score float64
	}
	var hits []hit
	for _, p := range st.Pages {
		if p.Source != src || p.DeletedAt != "" {
			continue
		}
		title := map[string]bool{}
		for _, w := range words(p.Title) {
			title[w] = true
		}
		body := map[string]int{}
		for _, w := range words(p.Body) {
			body[w]++
		}
		score := 0.0
		for _, w := range qw {
			if title[w] {
				score += 2
			}
			score += float64(body[w])
		}
		if score > 0 {
			hits = append(hits, hit{p, score})
		}
	}
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].score != hits[j].score {
			return hits[i].score > hits[j].score
		}
		return hits[i].p.Slug < hits[j].p.Slug
	})
	rows := []map[string]any{}
	for i := offset; i < len(hits) && len(rows) < limit; i++ {
		p := hits[i].p
		text := p.Body
		if len(text) > 300 {
			text = text[:300]
		}
		rows = append(rows, map[string]any{"slug": p.Slug, "page_id": p.ID, "title": p.Title, "type": p.Type,
			"chunk_text": text, "score": hits[i].score, "source_id": p.Source, "chunk_index": 0})
	}
	if len(rows) == 0 {
		return rows, []string{"0 results. retrieved 0 before trimming. degraded: keyword search only (no embedding provider)"}, nil
	}
	return rows, nil, nil
}
