package projection

import (
	"context"
	"maps"
	"sync"

	"github.com/cgcat/cgcat/gbrain"
)

// callCounts counts the GBrain calls made through a Conn, across redials:
// `gbrain sync` reports them, and benchmarks read them.
type callCounts struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *callCounts) add(tool string) {
	c.mu.Lock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[tool]++
	c.mu.Unlock()
}

func (c *callCounts) snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.n)
}

// counted is a Brain whose calls are counted (each attempt, as sent).
type counted struct {
	gbrain.Brain
	n *callCounts
}

func (c counted) GetPage(ctx context.Context, slug string, content bool) (*gbrain.Page, error) {
	c.n.add("get_page")
	return c.Brain.GetPage(ctx, slug, content)
}

func (c counted) PutPage(ctx context.Context, slug, content string) (*gbrain.PutResult, error) {
	c.n.add("put_page")
	return c.Brain.PutPage(ctx, slug, content)
}

func (c counted) DeletePage(ctx context.Context, slug string) (*gbrain.DeleteResult, error) {
	c.n.add("delete_page")
	return c.Brain.DeletePage(ctx, slug)
}

func (c counted) ListPages(ctx context.Context, o gbrain.ListOptions) ([]gbrain.PageRef, error) {
	c.n.add("list_pages")
	return c.Brain.ListPages(ctx, o)
}

func (c counted) Search(ctx context.Context, q string, limit int) ([]gbrain.Chunk, error) {
	c.n.add("search")
	return c.Brain.Search(ctx, q, limit)
}

func (c counted) Query(ctx context.Context, o gbrain.QueryOptions) ([]gbrain.Chunk, error) {
	c.n.add("query")
	return c.Brain.Query(ctx, o)
}

func (c counted) CheckSource(ctx context.Context) error {
	c.n.add("sources_list")
	return c.Brain.CheckSource(ctx)
}
