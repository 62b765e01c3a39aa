package scan

import (
	"context"
	"testing"
	"time"
)

// BenchmarkWalk measures the walk alone (listing, project checks and
// metadata, no store) over the benchmark tree, warm cache: the part the
// directory-access layer changes.
func BenchmarkWalk(b *testing.B) {
	root := benchTree(b)
	opt := testOptions(root)
	opt.MaxDepth = 10
	opt.Workers = 4
	s := &Scanner{opt: opt}
	dirs := 0
	cpu := processCPU()
	for b.Loop() {
		res := s.walk(context.Background(), []item{{Path: root}}, 1<<30, time.Now().Add(time.Hour))
		if len(res.pending) != 0 || len(res.found) == 0 {
			b.Fatalf("walk incomplete: %d pending, %d found", len(res.pending), len(res.found))
		}
		dirs += len(res.consumed)
	}
	b.ReportMetric(float64(dirs)/b.Elapsed().Seconds(), "dirs/s")
	reportCPU(b, cpu)
}
