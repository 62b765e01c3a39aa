package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/ids"
	"github.com/cgcat/cgcat/local/scan"
	"github.com/cgcat/cgcat/local/store"
)

// Exported for the protocol tests (package server_test).
var (
	WriteCatalogForTest = writeCatalog
)

// MakeProjectDir makes dir a CodeGraph project as CodeGraph leaves it:
// .codegraph/codegraph.db, a regular file with the SQLite header.
func MakeProjectDir(tb testing.TB, dir string) {
	tb.Helper()
	cg := filepath.Join(dir, ".codegraph")
	if err := os.MkdirAll(cg, 0o755); err != nil {
		tb.Fatal(err)
	}
	db := append([]byte("SQLite format 3\x00"), make([]byte, 112)...)
	if err := os.WriteFile(filepath.Join(cg, "codegraph.db"), db, 0o644); err != nil {
		tb.Fatal(err)
	}
}

var benchWords = []string{
	"order", "payment", "ledger", "invoice", "auth", "user", "catalog", "search",
	"report", "notify", "billing", "gateway", "cache", "queue", "sdk", "client",
	"server", "worker", "inventory", "shipping", "pricing", "metrics", "trace", "config",
}

var benchCJK = []string{"订单", "支付", "客户端", "服务", "报表", "库存", "网关", "用户"}

// BenchName is the name writeCatalog gives record i.
func BenchName(i int) string {
	return fmt.Sprintf("%s-%s-%d", benchWords[i%len(benchWords)], benchWords[(i/len(benchWords)+3*i)%len(benchWords)], i)
}

// writeCatalog writes n project records straight into the store of
// dataDir, each bound to a real project directory under root (so the live
// re-check sees present projects), and returns their ids in order. It is
// how the benchmarks and fuzzers get a large catalog without a scan.
func writeCatalog(tb testing.TB, dataDir, root string, n int) []string {
	tb.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, dataDir)
	if err != nil {
		tb.Fatal(err)
	}
	now := time.Now().UTC()
	idList := make([]string, 0, n)
	const batch = 5000
	for start := 0; start < n; start += batch {
		end := min(start+batch, n)
		var recs []*local.Project
		for i := start; i < end; i++ {
			name := BenchName(i)
			dir := filepath.Join(root, name)
			MakeProjectDir(tb, dir)
			w1, w2 := benchWords[i%len(benchWords)], benchWords[(i*7+5)%len(benchWords)]
			m := local.Metadata{
				Name:        name,
				Description: fmt.Sprintf("%s %s service for the %s team (%s%s)", w1, w2, benchWords[(i*11+1)%len(benchWords)], benchCJK[i%len(benchCJK)], benchCJK[(i/3)%len(benchCJK)]),
				Packages:    []string{"@bench/" + name},
				Keywords:    []string{w1, w2},
				Readme:      fmt.Sprintf("The %s project handles %s and %s.", name, w1, w2),
				Manifests:   []string{"package.json"},
			}
			recs = append(recs, &local.Project{
				ID: ids.NewProjectID(), Root: dir, RecordRevision: 1, Meta: m, MetaHash: scan.MetaHash(m),
				Availability: local.Present, IndexState: local.MarkerPresent,
				FirstSeen: now, LastSeen: now, ValidatedAt: now,
			})
		}
		err := st.Update(ctx, func(tx *store.Tx) error {
			for _, p := range recs {
				if err := tx.PutProject(p); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			tb.Fatal(err)
		}
		for _, p := range recs {
			idList = append(idList, p.ID)
		}
	}
	return idList
}
