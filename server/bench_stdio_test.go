package server_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cgcat/cgcat/server"
)

// BenchmarkStdio measures the real binary over stdio with a catalog of 1k
// and 10k projects (100k with CGCAT_BENCH_100K=1): process start to
// initialize answered, the first tools/call (which waits for the catalog to
// load), hot tools/call latency p50/p99 per query, and the server's RSS.
//
//	go test ./server -run '^$' -bench BenchmarkStdio -benchtime 500x
func BenchmarkStdio(b *testing.B) {
	sizes := []int{1000, 10000}
	if os.Getenv("CGCAT_BENCH_100K") != "" {
		sizes = append(sizes, 100000)
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			dir := tempDir(b)
			root, data := filepath.Join(dir, "code"), filepath.Join(dir, "data")
			server.WriteCatalogForTest(b, data, root, n)
			depth := 0 // the records are written directly; the walk only re-checks them
			p := serve(b, cfg{DataDir: data, Roots: []string{root}, MaxDepth: &depth}.write(b))
			t0 := time.Now()
			first := p.projects(map[string]any{"query": "@bench/" + server.BenchName(n/3)})
			firstCall := time.Since(t0)
			if len(first.env.Projects) == 0 {
				b.Fatalf("first call: %s", first.text)
			}
			p.waitScanned()
			b.Logf("n=%d: initialize answered %s after process start; first tools/call %s; RSS after load %s",
				n, p.InitTime.Round(time.Microsecond), firstCall.Round(time.Microsecond), rss(p.cmd.Process.Pid))
			b.ReportMetric(float64(p.InitTime.Microseconds())/1e3, "init-ms")

			mid := server.BenchName(n / 2)
			for _, q := range []struct {
				name string
				args map[string]any
			}{
				{"list", map[string]any{}},
				{"exact-package", map[string]any{"query": "@bench/" + mid}},
				{"words", map[string]any{"query": "order payment client"}},
				{"chinese", map[string]any{"query": "订单 客户端"}},
				{"resolve", nil},
			} {
				b.Run(q.name, func(b *testing.B) {
					call := func() { p.projects(q.args) }
					if q.args == nil {
						id := first.env.Projects[0].ProjectID
						call = func() { p.resolve(map[string]any{"projectId": id}) }
					}
					call()
					var lat []time.Duration
					for b.Loop() {
						s := time.Now()
						call()
						lat = append(lat, time.Since(s))
					}
					slices.Sort(lat)
					if len(lat) > 0 {
						b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
						b.ReportMetric(float64(lat[min(len(lat)-1, len(lat)*99/100)].Microseconds()), "p99-µs")
					}
				})
			}
			b.Logf("n=%d: RSS after the hot queries %s", n, rss(p.cmd.Process.Pid))
		})
	}
}

// rss reads a process's resident set size from /proc.
func rss(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return "?"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}
