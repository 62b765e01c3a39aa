package selection

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/cgcat/cgcat/local/catalog"
	"github.com/cgcat/cgcat/local/config"
	"github.com/cgcat/cgcat/local/scan"
	"github.com/cgcat/cgcat/local/store"
	"github.com/cgcat/cgcat/server"
	"github.com/cgcat/cgcat/server/protocol"
	mcpserver "github.com/mark3labs/mcp-go/server"
)

// Goals of issues 7 and 15, asserted on accuracy (never on time).
var goals = []struct {
	kind string
	top  int // 1 or 5
	min  float64
}{
	{KindExact, 1, 1.00},
	{KindSeparators, 1, 0.95},
	{KindUnscoped, 1, 0.95},
	{KindDescription, 5, 0.90},
	// Issue 15: a misspelt name is forgiven; a URL, registry page or
	// install command finds its package; and the kinds that had no goal
	// keep what they had (100 % when the forgiving search came).
	{KindTypo, 5, 0.90},
	{KindTypo2, 5, 0.90},
	{KindTransposed, 5, 0.90},
	{KindHost, 1, 0.95},
	{KindDependency, 1, 0.95},
	{KindChinese, 5, 0.95},
}

// result is one answered query.
type result struct {
	q       Query
	got     []string // relative dirs, best first ("?" for a project without a path)
	reasons []string // of the first hit
	top1    bool
	top5    bool
	// What the usual tools would have given, with generous ranking.
	find, grep struct{ top1, top5 bool }
}

// fixture is the materialised query-set catalog, scanned and loaded.
type fixture struct {
	root  string
	recs  []Record
	qs    []Query
	f     *server.Frontend
	store int64 // bytes of the data dir after the scan
	scan  time.Duration
}

func newFixture(tb testing.TB) *fixture {
	tb.Helper()
	recs, err := LoadCatalog(DataDir())
	if err != nil {
		tb.Fatal(err)
	}
	qs, err := LoadQueries(DataDir())
	if err != nil {
		tb.Fatal(err)
	}
	tmp := tempDir(tb)
	root, data := filepath.Join(tmp, "code"), filepath.Join(tmp, "data")
	if err := Materialise(root, recs); err != nil {
		tb.Fatal(err)
	}
	cfg, err := config.AdHoc([]string{root}, data)
	if err != nil {
		tb.Fatal(err)
	}
	ctx := context.Background()
	st, err := store.Open(ctx, data)
	if err != nil {
		tb.Fatal(err)
	}
	t0 := time.Now()
	s, err := scan.Start(ctx, st, scan.OptionsFrom(cfg))
	if err != nil {
		tb.Fatal(err)
	}
	for {
		r, err := s.RunRound(ctx)
		if err != nil {
			tb.Fatal(err)
		}
		if r.Finished {
			break
		}
	}
	s.Close()
	fx := &fixture{root: root, recs: recs, qs: qs, scan: time.Since(t0), store: DirSize(data)}
	fx.f = server.NewFrontend(server.Options{Config: config.Fixed(cfg), Open: func(ctx context.Context, _ *config.Config) (*catalog.Catalog, server.Discovery, error) {
		cat, err := catalog.Load(ctx, st)
		return cat, nil, err
	}})
	if err := fx.f.Ready(ctx); err != nil {
		tb.Fatal(err)
	}
	if n := fx.f.Catalog().Len(); n != len(recs) {
		tb.Fatalf("the scan found %d projects, the catalog has %d", n, len(recs))
	}
	return fx
}

// ask answers one query through the real frontend, as the MCP tool would.
func (fx *fixture) ask(tb testing.TB, q Query) result {
	a := server.ProjectsArgs{Query: q.Query, Limit: 5}
	if q.Workspace != "" {
		a.WorkspacePath = filepath.Join(fx.root, filepath.FromSlash(q.Workspace))
	}
	e, err := fx.f.Projects(context.Background(), a)
	if err != nil {
		tb.Fatalf("%q: %v", q.Query, err)
	}
	r := result{q: q}
	for i, p := range e.Projects {
		rel := "?"
		if p.ProjectPath != nil {
			if x, err := filepath.Rel(fx.root, *p.ProjectPath); err == nil {
				rel = filepath.ToSlash(x)
			}
		}
		r.got = append(r.got, rel)
		if i == 0 {
			r.reasons = p.Reason
		}
		if slices.Contains(q.Expect, rel) {
			r.top5 = true
			r.top1 = r.top1 || i == 0
		}
	}
	return r
}

// TestSelection answers every query of the set through the real frontend
// over a scanned tree of the catalog, prints top-1 and top-5 accuracy per
// query kind and the misses, and checks the goals. CGCAT_SELECTION_ALL=1
// also prints every answer.
//
//	go test ./bench/selection -run TestSelection -v
func TestSelection(t *testing.T) {
	fx := newFixture(t)
	if len(fx.recs) < 500 || len(fx.qs) < 200 {
		t.Fatalf("the query set needs ≥ 500 projects and ≥ 200 queries, has %d and %d", len(fx.recs), len(fx.qs))
	}
	byKind := map[string][]result{}
	for _, q := range fx.qs {
		if !slices.Contains(Kinds, q.Kind) {
			t.Fatalf("query %q: unknown kind %q", q.Query, q.Kind)
		}
		r := fx.ask(t, q)
		r.find.top1, r.find.top5 = score(q, baselineFind(fx.recs, q.Query))
		r.grep.top1, r.grep.top5 = score(q, baselineGrep(fx.recs, q.Query))
		byKind[q.Kind] = append(byKind[q.Kind], r)
	}
	accOf := func(rs []result, ok func(result) bool) float64 {
		n := 0
		for _, r := range rs {
			if ok(r) {
				n++
			}
		}
		return float64(n) / float64(max(1, len(rs)))
	}
	acc := func(rs []result, top int) float64 {
		return accOf(rs, func(r result) bool { return (top == 1 && r.top1) || (top == 5 && r.top5) })
	}
	pct := func(rs []result, ok func(result) bool) string { return fmt.Sprintf("%.1f%%", 100*accOf(rs, ok)) }

	var b strings.Builder
	fmt.Fprintf(&b, "\n%d projects (scan %s, store %.0f KiB = %.0f KiB per 1k projects), %d queries\n\n",
		len(fx.recs), fx.scan.Round(time.Millisecond), float64(fx.store)/1024, float64(fx.store)/1024/float64(len(fx.recs))*1000, len(fx.qs))
	tw := tabwriter.NewWriter(&b, 0, 0, 1, ' ', tabwriter.AlignRight|tabwriter.Debug)
	fmt.Fprintln(tw, "kind\t queries\t top-1\t top-5\t goal\t find top-1\t find top-5\t grep top-1\t grep top-5\t")
	var all []result
	for _, k := range Kinds {
		rs := byKind[k]
		all = append(all, rs...)
		goal := ""
		for _, g := range goals {
			if g.kind == k {
				goal = fmt.Sprintf("top-%d ≥ %.0f%%", g.top, g.min*100)
			}
		}
		fmt.Fprintf(tw, "%s\t %d\t %.1f%%\t %.1f%%\t %s\t %s\t %s\t %s\t %s\t\n", k, len(rs), 100*acc(rs, 1), 100*acc(rs, 5), goal,
			pct(rs, func(r result) bool { return r.find.top1 }), pct(rs, func(r result) bool { return r.find.top5 }),
			pct(rs, func(r result) bool { return r.grep.top1 }), pct(rs, func(r result) bool { return r.grep.top5 }))
	}
	fmt.Fprintf(tw, "all\t %d\t %.1f%%\t %.1f%%\t \t %s\t %s\t %s\t %s\t\n", len(all), 100*acc(all, 1), 100*acc(all, 5),
		pct(all, func(r result) bool { return r.find.top1 }), pct(all, func(r result) bool { return r.find.top5 }),
		pct(all, func(r result) bool { return r.grep.top1 }), pct(all, func(r result) bool { return r.grep.top5 }))
	tw.Flush()
	if os.Getenv("CGCAT_SELECTION_ALL") != "" { // every answer, for review
		b.WriteString("\nanswers:\n")
		for _, r := range all {
			fmt.Fprintf(&b, "%-11s %q -> %s [%s]\n", r.q.Kind, r.q.Query, strings.Join(r.got, ", "), strings.Join(r.reasons, "; "))
		}
	}
	b.WriteString("\nmisses (top-1 wrong; * = not in the top 5 either):\n")
	for _, k := range Kinds {
		for _, r := range byKind[k] {
			if r.top1 {
				continue
			}
			mark := " "
			if !r.top5 {
				mark = "*"
			}
			ws := ""
			if r.q.Workspace != "" {
				ws = " (from " + r.q.Workspace + ")"
			}
			fmt.Fprintf(&b, "%s %-11s %q%s\n    expected %s\n    got      %s\n    first hit's reason: %s\n",
				mark, k, r.q.Query, ws, strings.Join(r.q.Expect, ", "), strings.Join(r.got, ", "), strings.Join(r.reasons, "; "))
		}
	}
	t.Log(b.String())

	for _, g := range goals {
		if a := acc(byKind[g.kind], g.top); a < g.min {
			t.Errorf("goal missed: %s top-%d accuracy %.1f%% < %.0f%%", g.kind, g.top, 100*a, 100*g.min)
		}
	}
}

// baselineFind is what `find ROOT -type d -ipath '*QUERY*'` over the
// project roots gives, ranked generously: a root whose last element is the
// query first, then shorter paths.
func baselineFind(recs []Record, query string) []string {
	q := strings.ToLower(query)
	var out []string
	for _, r := range recs {
		if strings.Contains(strings.ToLower(r.Dir), q) {
			out = append(out, r.Dir)
		}
	}
	exact := func(d string) bool { return strings.ToLower(path.Base(d)) == q }
	slices.SortStableFunc(out, func(a, b string) int {
		if ea, eb := exact(a), exact(b); ea != eb {
			if ea {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(len(a), len(b)), strings.Compare(a, b))
	})
	return out
}

// baselineGrep is what `grep -rilF QUERY` over the projects' manifests and
// READMEs gives, ranked generously: most occurrences first.
func baselineGrep(recs []Record, query string) []string {
	q := strings.ToLower(query)
	count := map[string]int{}
	var out []string
	for _, r := range recs {
		n := 0
		for _, body := range r.Files {
			n += strings.Count(strings.ToLower(body), q)
		}
		if n > 0 {
			count[r.Dir] = n
			out = append(out, r.Dir)
		}
	}
	slices.SortStableFunc(out, func(a, b string) int { return cmp.Or(count[b]-count[a], strings.Compare(a, b)) })
	return out
}

func score(q Query, got []string) (top1, top5 bool) {
	for i, d := range got[:min(5, len(got))] {
		if slices.Contains(q.Expect, d) {
			return i == 0, true
		}
	}
	return false, false
}

// benchSizes are the catalog sizes measured; CGCAT_BENCH_100K=1 adds 100k.
func benchSizes() []int {
	s := []int{1000, 10000}
	if os.Getenv("CGCAT_BENCH_100K") != "" {
		s = append(s, 100000)
	}
	return s
}

var (
	baseOnce sync.Once
	baseMeta []Base
	baseQs   []Query
	baseErr  error
)

// loadBase reads the query-set catalog's metadata once per test binary.
func loadBase(b *testing.B) ([]Base, []Query) {
	baseOnce.Do(func() {
		recs, err := LoadCatalog(DataDir())
		if err != nil {
			baseErr = err
			return
		}
		tmp, err := os.MkdirTemp("", "cgcat-selection-base-")
		if err != nil {
			baseErr = err
			return
		}
		defer os.RemoveAll(tmp)
		baseMeta, baseErr = ReadBase(tmp, recs)
		if baseErr == nil {
			baseQs, baseErr = LoadQueries(DataDir())
		}
	})
	if baseErr != nil {
		b.Fatal(baseErr)
	}
	return baseMeta, baseQs
}

// BenchmarkQuery measures hot local_codegraph_projects answers in process
// (catalog loaded, no scan running, limit 5) over synthetic catalogs of 1k,
// 10k and (with CGCAT_BENCH_100K=1) 100k projects made by repeating the
// query set's real metadata under varied names. Each iteration asks the
// next query of the query set; p50/p99 are over all of them. Sub-benchmarks
// separate the whole answer (frontend), the workspace hint (hot and cold)
// and the ranker alone (index). It also reports the heap the loaded catalog
// holds, the process RSS and the store's size on disk per 1k projects.
//
//	CGCAT_BENCH_100K=1 go test ./bench/selection -run '^$' -bench BenchmarkQuery -benchtime 2000x
func BenchmarkQuery(b *testing.B) {
	base, qs := loadBase(b)
	for _, n := range benchSizes() {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			dir := tempDir(b)
			root, data := filepath.Join(dir, "code"), filepath.Join(dir, "data")
			ctx := context.Background()
			t0 := time.Now()
			if err := WriteSynthetic(ctx, base, n, root, data); err != nil {
				b.Fatal(err)
			}
			write := time.Since(t0)
			size := DirSize(data)

			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			cfg, err := config.AdHoc([]string{root}, data)
			if err != nil {
				b.Fatal(err)
			}
			t1 := time.Now()
			f := server.NewFrontend(server.Options{Config: config.Fixed(cfg), Open: func(ctx context.Context, _ *config.Config) (*catalog.Catalog, server.Discovery, error) {
				st, err := store.Open(ctx, data)
				if err != nil {
					return nil, nil, err
				}
				cat, err := catalog.Load(ctx, st)
				return cat, nil, err
			}})
			if err := f.Ready(ctx); err != nil {
				b.Fatal(err)
			}
			load := time.Since(t1)
			runtime.GC()
			runtime.ReadMemStats(&after)
			heap := float64(after.HeapAlloc) - float64(before.HeapAlloc)

			b.Logf("n=%d: wrote the store in %s (%.1f MB on disk, %.0f KB per 1k projects); catalog load %s; heap +%.1f MB",
				n, write.Round(time.Millisecond), float64(size)/(1<<20), float64(size)/1024/(float64(n)/1000), load.Round(time.Millisecond), heap/(1<<20))

			var plain, deps []Query
			for _, q := range qs {
				if q.Workspace == "" {
					plain = append(plain, q)
				} else {
					deps = append(deps, q)
				}
			}
			ms := protocol.New(f, "bench")
			mcpInit(b, ms)
			pol := catalog.PolicyFrom(cfg)
			cat := f.Catalog()
			ws := deps[0].Workspace
			for _, m := range []struct {
				name string
				qs   []Query
				ask  func(q Query)
			}{
				// The whole answer: ranking, the live re-check of the five
				// answers (stat, open, read the marker, canonical path) and
				// the envelope, for every query of the set without its
				// workspace hint.
				{"frontend", plain, func(q Query) { mustProjects(b, f, server.ProjectsArgs{Query: q.Query, Limit: 5}) }},
				// The same with a page of 50 (the largest the tool allows):
				// fifty re-checks and a ten times larger envelope.
				{"frontend-50", plain, func(q Query) { mustProjects(b, f, server.ProjectsArgs{Query: q.Query, Limit: 50}) }},
				// Dependency queries asked from one workspace, as one
				// agent session does (the workspace's project is cached).
				{"workspace-hot", deps, func(q Query) { mustProjects(b, f, argsFrom(root, q.Query, ws)) }},
				// Each dependency query from its own workspace, more
				// workspaces than the frontend caches: the workspace's
				// project is looked up every time.
				{"workspace-cold", deps, func(q Query) { mustProjects(b, f, argsFrom(root, q.Query, q.Workspace)) }},
				// The MCP layer in process: the JSON-RPC tools/call request
				// decoded, the tool run, the answer (structured content and
				// text) encoded as the stdio server writes it; no pipes.
				{"mcp", plain, func(q Query) { mcpCall(b, ms, q.Query) }},
				// The ranker alone: catalog.SearchTop with the sharing
				// filter, the best 1000 hits sorted and given reasons (what
				// the frontend asks of it: server's maxHits), no re-check,
				// no envelope.
				{"index", plain, func(q Query) { cat.SearchTop(q.Query, pol, frontendMaxHits) }},
			} {
				b.Run(m.name, func(b *testing.B) {
					for _, q := range m.qs { // warm
						m.ask(q)
					}
					b.ReportAllocs()
					lat := make([]time.Duration, 0, b.N)
					perKind := map[string][]time.Duration{}
					i := 0
					for b.Loop() {
						q := m.qs[i%len(m.qs)]
						i++
						s := time.Now()
						m.ask(q)
						d := time.Since(s)
						lat = append(lat, d)
						perKind[q.Kind] = append(perKind[q.Kind], d)
					}
					b.ReportMetric(us(percentile(lat, 0.50)), "p50-µs")
					b.ReportMetric(us(percentile(lat, 0.99)), "p99-µs")
					b.ReportMetric(rssMB("VmRSS"), "rss-MB")
					b.ReportMetric(heap/(1<<20), "heap-MB")
					b.ReportMetric(float64(size)/1024/(float64(n)/1000), "store-KB/1k")
					b.ReportMetric(float64(load.Milliseconds()), "load-ms")
					var kinds []string
					for _, k := range Kinds {
						if d := perKind[k]; len(d) > 0 {
							kinds = append(kinds, fmt.Sprintf("%s %.0f/%.0f", k, us(percentile(d, 0.5)), us(percentile(d, 0.99))))
						}
					}
					b.Logf("n=%d %s: RSS %.0f MB (peak %.0f MB); p50/p99 µs by kind: %s", n, m.name, rssMB("VmRSS"), rssMB("VmHWM"), strings.Join(kinds, ", "))
				})
			}
		})
	}
}

// tempDir is a fresh canonical directory with a neutral name: the path of
// a project is indexed (low weight), and t.TempDir's would put the test's
// name ("TestSelection", "BenchmarkQuery") into every project's path. The
// tree root below it is named "code", like the ~/code many people keep
// their projects in.
func tempDir(tb testing.TB) string {
	tb.Helper()
	dir, err := os.MkdirTemp("", "cgsel-")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	dir, err = filepath.EvalSymlinks(dir)
	if err != nil {
		tb.Fatal(err)
	}
	return dir
}

func mcpInit(b *testing.B, s *mcpserver.MCPServer) {
	msg := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`
	if _, err := json.Marshal(s.HandleMessage(context.Background(), json.RawMessage(msg))); err != nil {
		b.Fatal(err)
	}
	s.HandleMessage(context.Background(), json.RawMessage(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
}

// mcpCall runs one tools/call through the MCP server in process and
// encodes the answer as the stdio transport would.
func mcpCall(b *testing.B, s *mcpserver.MCPServer, query string) {
	req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": "local_codegraph_projects", "arguments": map[string]any{"query": query}}})
	out, err := json.Marshal(s.HandleMessage(context.Background(), req))
	if err != nil {
		b.Fatal(err)
	}
	if !bytes.Contains(out, []byte(`"structuredContent"`)) {
		b.Fatalf("tools/call %q: %s", query, out)
	}
}

func mustProjects(b *testing.B, f *server.Frontend, a server.ProjectsArgs) {
	if _, err := f.Projects(context.Background(), a); err != nil {
		b.Fatal(err)
	}
}

// frontendMaxHits is server.maxHits: the hits a search keeps for paging.
const frontendMaxHits = 1000

// argsFrom asks query from a workspace of copy 0 of the synthetic catalog.
func argsFrom(root, query, ws string) server.ProjectsArgs {
	return server.ProjectsArgs{Query: query, Limit: 5, WorkspacePath: filepath.Join(root, "c0000", filepath.FromSlash(ws))}
}

func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

// rssMB reads a VmRSS/VmHWM line of /proc/self/status (0 elsewhere).
func rssMB(field string) float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}
