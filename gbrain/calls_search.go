package gbrain

import (
	"context"
	"fmt"
	"strings"
)

// Chunk is one search / query hit.
type Chunk struct {
	Slug      string  `json:"slug"`
	PageID    any     `json:"page_id"`
	Title     string  `json:"title"`
	Type      string  `json:"type"`
	ChunkText string  `json:"chunk_text"`
	Score     float64 `json:"score"`
	SourceID  string  `json:"source_id"`
}

// QueryOptions for the semantic query tool. Expand (query expansion) may use
// the network on the GBrain side; it is sent as false unless asked for.
type QueryOptions struct {
	Query  string
	Limit  int // 0 = GBrain's default
	Expand bool
}

// Search is GBrain's keyword search: a page matches when any query word is
// in its title or body (tags and slugs are not indexed). Zero hits is an
// empty slice. With an expected source, hits of other sources are dropped
// (search has no source parameter). Errors as for ListPages.
func (c *Client) Search(ctx context.Context, query string, limit int) ([]Chunk, error) {
	const tool = "search"
	if strings.TrimSpace(query) == "" || limit < 0 {
		return nil, &CallError{Tool: tool, Class: Definite, Err: fmt.Errorf("%w: empty query or negative limit", ErrInvalidArgument)}
	}
	args := map[string]any{"query": query}
	if limit > 0 {
		args["limit"] = limit
	}
	return c.chunks(ctx, tool, args)
}

// Query is GBrain's semantic query, pinned to the expected source when there
// is one, with query expansion off unless o.Expand. Errors as for Search.
func (c *Client) Query(ctx context.Context, o QueryOptions) ([]Chunk, error) {
	const tool = "query"
	if strings.TrimSpace(o.Query) == "" || o.Limit < 0 {
		return nil, &CallError{Tool: tool, Class: Definite, Err: fmt.Errorf("%w: empty query or negative limit", ErrInvalidArgument)}
	}
	args := map[string]any{"query": o.Query, "expand": o.Expand}
	if o.Limit > 0 {
		args["limit"] = o.Limit
	}
	if c.opts.ExpectedSource != "" {
		args["source_id"] = c.opts.ExpectedSource
	}
	return c.chunks(ctx, tool, args)
}

func (c *Client) chunks(ctx context.Context, tool string, args map[string]any) ([]Chunk, error) {
	var hits []Chunk
	if err := c.call(ctx, tool, args, false, &hits); err != nil {
		return nil, err
	}
	out := hits[:0]
	for _, h := range hits {
		if h.Slug == "" {
			return nil, &CallError{Tool: tool, Class: Definite, Err: garbage("hit without slug", "")}
		}
		if c.opts.ExpectedSource != "" && h.SourceID != c.opts.ExpectedSource {
			continue
		}
		out = append(out, h)
	}
	return out, nil
}
