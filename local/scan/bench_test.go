package scan

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

var (
	benchTreeOnce sync.Once
	benchTreeRoot string
)

// benchTree builds (once per test binary) a tree of 111,110 directories
// with a project every 100: fan-out 10, depth 5, like a large code folder.
// CGCAT_BENCH_TREE reuses a tree made before (see bench/scan.sh).
func benchTree(b *testing.B) string {
	benchTreeOnce.Do(func() {
		if p := os.Getenv("CGCAT_BENCH_TREE"); p != "" {
			benchTreeRoot = p
			return
		}
		dir, err := os.MkdirTemp("", "cgcat-bench-tree-")
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		var mk func(d string, depth int)
		mk = func(d string, depth int) {
			if depth == 5 {
				return
			}
			for i := range 10 {
				c := filepath.Join(d, fmt.Sprintf("d%d", i))
				if err := os.Mkdir(c, 0o755); err != nil {
					b.Fatal(err)
				}
				n++
				if n%100 == 0 {
					mkProject(b, c)
					write(b, filepath.Join(c, "package.json"), fmt.Sprintf(`{"name":"pkg-%d","description":"project %d"}`, n, n))
				}
				mk(c, depth+1)
			}
		}
		mk(dir, 0)
		benchTreeRoot = dir
	})
	return benchTreeRoot
}

// BenchmarkScanFullPass measures one whole discovery pass (walk, project
// checks, metadata, store commits) over the 111k-directory tree, warm cache.
func BenchmarkScanFullPass(b *testing.B) {
	root := benchTree(b)
	opt := testOptions(root)
	opt.MaxDepth = 10
	opt.VisibleCarry = opt.SliceTime / 4 // as OptionsFrom sets it
	dirs := 0
	cpu := processCPU()
	for b.Loop() {
		st := newStore(b)
		s, err := Start(context.Background(), st, opt)
		if err != nil {
			b.Fatal(err)
		}
		for {
			r, err := s.RunRound(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			dirs += r.Dirs
			if r.Finished {
				break
			}
		}
		s.Close()
	}
	b.ReportMetric(float64(dirs)/b.Elapsed().Seconds(), "dirs/s")
	reportCPU(b, cpu)
}

// BenchmarkScanRescan measures a pass over the same tree with the catalog
// of the pass before: what a periodic refresh of an unchanged tree costs.
func BenchmarkScanRescan(b *testing.B) {
	root := benchTree(b)
	opt := testOptions(root)
	opt.MaxDepth = 10
	st := newStore(b)
	pass := func() int {
		s, err := Start(context.Background(), st, opt)
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		dirs := 0
		for {
			r, err := s.RunRound(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			dirs += r.Dirs
			if r.Finished {
				return dirs
			}
		}
	}
	pass()
	dirs := 0
	cpu := processCPU()
	for b.Loop() {
		dirs += pass()
	}
	b.ReportMetric(float64(dirs)/b.Elapsed().Seconds(), "dirs/s")
	reportCPU(b, cpu)
}
