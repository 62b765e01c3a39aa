package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/cgcat/cgcat/local/catalog"
	"github.com/cgcat/cgcat/local/config"
	"github.com/cgcat/cgcat/local/store"
)

// benchSizes are the catalog sizes measured; CGCAT_BENCH_100K=1 adds 100k.
func benchSizes() []int {
	s := []int{1000, 10000}
	if os.Getenv("CGCAT_BENCH_100K") != "" {
		s = append(s, 100000)
	}
	return s
}

// BenchmarkProjects measures hot local_codegraph_projects answers in
// process (catalog loaded, no scan running) at 1k and 10k catalogued
// projects, and reports p50/p99 per query and the heap the catalog holds.
//
//	go test ./server -run '^$' -bench BenchmarkProjects -benchtime 2000x
func BenchmarkProjects(b *testing.B) {
	for _, n := range benchSizes() {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			dir, err := filepath.EvalSymlinks(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			root, data := filepath.Join(dir, "code"), filepath.Join(dir, "data")
			t0 := time.Now()
			writeCatalog(b, data, root, n)
			setup := time.Since(t0)

			var before runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			cfg := config.Default()
			cfg.DataDir = data
			cfg.Discovery.Roots, cfg.Sharing.Roots = []string{root}, []string{root}
			t1 := time.Now()
			f := NewFrontend(Options{Config: config.Fixed(&cfg), Open: func(ctx context.Context, _ *config.Config) (*catalog.Catalog, Discovery, error) {
				st, err := store.Open(ctx, data)
				if err != nil {
					return nil, nil, err
				}
				cat, err := catalog.Load(ctx, st)
				return cat, nil, err
			}})
			if err := f.Ready(context.Background()); err != nil {
				b.Fatal(err)
			}
			load := time.Since(t1)
			var after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&after)
			b.Logf("n=%d: wrote %d records in %s; catalog load %s; heap +%.1f MB", n, n, setup.Round(time.Millisecond), load.Round(time.Millisecond), float64(after.HeapAlloc-before.HeapAlloc)/(1<<20))

			mid := BenchName(n / 2)
			queries := []struct {
				name string
				args ProjectsArgs
			}{
				{"list", ProjectsArgs{Limit: 5}},
				{"exact-package", ProjectsArgs{Query: "@bench/" + mid, Limit: 5}},
				{"name", ProjectsArgs{Query: mid, Limit: 5}},
				{"words", ProjectsArgs{Query: "order payment client", Limit: 5}},
				{"chinese", ProjectsArgs{Query: "订单 客户端", Limit: 5}},
				{"limit50", ProjectsArgs{Query: "ledger service", Limit: 50}},
				{"no-match", ProjectsArgs{Query: "zyxwvutsrq", Limit: 5}},
			}
			for _, q := range queries {
				b.Run(q.name, func(b *testing.B) {
					ctx := context.Background()
					if e, err := f.Projects(ctx, q.args); err != nil {
						b.Fatal(err)
					} else if q.name == "exact-package" && (len(e.Projects) == 0 || e.Projects[0].Name != mid) {
						b.Fatalf("exact package: %v", e.Projects)
					}
					lat := make([]time.Duration, 0, b.N)
					for b.Loop() {
						s := time.Now()
						if _, err := f.Projects(ctx, q.args); err != nil {
							b.Fatal(err)
						}
						lat = append(lat, time.Since(s))
					}
					reportPercentiles(b, lat)
				})
			}
			b.Run("page2-cursor", func(b *testing.B) {
				ctx := context.Background()
				a := ProjectsArgs{Query: "order", Limit: 5}
				e, err := f.Projects(ctx, a)
				if err != nil || e.NextCursor == nil {
					b.Fatalf("%v %v", err, e)
				}
				a.Cursor = *e.NextCursor
				lat := make([]time.Duration, 0, b.N)
				for b.Loop() {
					s := time.Now()
					if e, err := f.Projects(ctx, a); err != nil || e.Status != StatusOK {
						b.Fatalf("%v %v", err, e.Status)
					}
					lat = append(lat, time.Since(s))
				}
				reportPercentiles(b, lat)
			})
		})
	}
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	pct := func(p float64) float64 {
		i := min(len(lat)-1, int(float64(len(lat))*p))
		return float64(lat[i].Nanoseconds()) / 1e3
	}
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
}
