// Command mcpclient drives a real `cgcat serve` over stdio with the mcp-go
// client, for the benchmarks in bench/*.sh. It prints Markdown table rows
// on stdout and notes on stderr.
//
//	mcpclient init      -config C [-repeat 10]
//	    process start → initialize answered, and → first tools/call
//	    answered (which waits for the catalog to load)
//	mcpclient query     -config C -queries Q [-n 2000] [-label L] [-limit 5]
//	    hot local_codegraph_projects latency p50/p99 (limit 5) once the
//	    first discovery pass is over, an MCP ping's round trip (the
//	    transport alone), and the server's RSS
//	mcpclient load      -config C [-serves 4] [-calls 500] [-scan=true] [-seed 1] [-raw]
//	    several servers on one data dir, a scan running, concurrent calls
//	    in a host-like mix: p50/p99/errors (see load.go)
//	mcpclient raw       -config C -queries Q [-n 2000] [-label L] [-limit 5]
//	    query's latency with a client that reads each answer line without
//	    decoding it: the server and the pipe, not mcp-go's client
//	mcpclient answers   -config C -out DIR [-query Q]
//	    one answer of each common kind (query at limit 1/5/10/50, a
//	    listing, a resolve, tools/list) written to DIR, and their sizes
//	mcpclient mem       -config C [-serves 3] [-settle 0s]
//	    several servers on one catalog, each asked the query set once:
//	    RSS, PSS and anonymous memory of each (Linux, /proc/PID/smaps_rollup)
//	mcpclient live      -config C -root R -data D [-events 50] [-bulk 100] [-storm 20000] [-idle 60s]
//	    two serves follow the disk: mkdir/mv/rm → answer p50/p99 per serve,
//	    100 projects at once, idle CPU and PSS, watches, an overflow's
//	    convergence (live.go)
//	mcpclient discovery -config C -root R -mode interval|refresh [-trials 5]
//	    a new project (a directory with .codegraph/codegraph.db) appears
//	    under R → it is in an answer; with refresh: true in the first call
//	    after it appeared, or by the periodic refresh alone
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cgcat/cgcat/bench/selection"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

func main() {
	if len(os.Args) < 2 {
		log.Fatal("usage: mcpclient init|query|discovery [flags]")
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	bin := fs.String("bin", "bin/cgcat", "the cgcat binary")
	cfg := fs.String("config", "", "config file for `cgcat serve --config`")
	repeat := fs.Int("repeat", 10, "init: process starts")
	queries := fs.String("queries", "testdata/selection/queries.jsonl", "query: the query set")
	n := fs.Int("n", 2000, "query: timed calls")
	label := fs.String("label", "", "query: the row's first column")
	limit := fs.Int("limit", 5, "query: the page size asked")
	root := fs.String("root", "", "discovery: where the new project appears (a discovery root)")
	mode := fs.String("mode", "refresh", "discovery: refresh (refresh: true) or interval (periodic refresh only)")
	trials := fs.Int("trials", 5, "discovery: new projects, one after the other")
	timeout := fs.Duration("timeout", 20*time.Minute, "discovery: give up on one project after this")
	serves := fs.Int("serves", 4, "load: cgcat serve processes on the one data dir")
	calls := fs.Int("calls", 500, "load: concurrent calls spread over the servers")
	withScan := fs.Bool("scan", true, "load: a cgcat scan re-walks the tree meanwhile")
	seed := fs.Uint64("seed", 1, "load: the mix's random seed")
	settle := fs.Duration("settle", 0, "mem: wait this long after the queries before reading memory")
	outDir := fs.String("out", "", "answers: where the answers are written")
	query := fs.String("query", "react", "answers: the query asked")
	data := fs.String("data", "", "live: the config's data dir (its watch.state)")
	events := fs.Int("events", 50, "live: mkdir/mv/rm events timed")
	bulk := fs.Int("bulk", 100, "live: projects appearing at once")
	storm := fs.Int("storm", 20000, "live: directories made at once to overflow the watcher")
	idle := fs.Duration("idle", 60*time.Second, "live: how long the serves are watched doing nothing")
	fs.BoolVar(&rawMode, "raw", false, "load: speak JSON-RPC without the mcp-go client and time calls without decoding answers")
	_ = fs.Parse(os.Args[2:])
	if *cfg == "" {
		log.Fatal("-config is required")
	}
	switch os.Args[1] {
	case "init":
		runInit(*bin, *cfg, *repeat)
	case "query":
		runQuery(*bin, *cfg, *queries, *n, *label, *limit)
	case "load":
		runLoad(*bin, *cfg, *queries, *serves, *calls, *withScan, *seed)
	case "raw":
		runRaw(*bin, *cfg, *queries, *n, *label, *limit)
	case "answers":
		if *outDir == "" {
			log.Fatal("-out is required")
		}
		runAnswers(*bin, *cfg, *outDir, *query)
	case "mem":
		runMem(*bin, *cfg, *queries, *serves, *settle)
	case "live":
		runLive(*bin, *cfg, *root, *data, *events, *bulk, *storm, *idle)
	case "discovery":
		if *root == "" {
			log.Fatal("-root is required")
		}
		runDiscovery(*bin, *cfg, *root, *mode, *trials, *timeout)
	default:
		log.Fatalf("unknown command %q", os.Args[1])
	}
}

// server is one `cgcat serve` process and its MCP client.
// rawMode: servers are spoken to with rawConn instead of the mcp-go
// client (load -raw).
var rawMode bool

type server struct {
	rc     *rawConn // in rawMode
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	c      *client.Client
	stderr bytes.Buffer
	init   time.Duration // process start → initialize answered
	start  time.Time
}

func startServer(bin, cfg string) (*server, error) {
	s := &server{cmd: exec.Command(bin, "serve", "--config", cfg)}
	s.cmd.Stderr = &s.stderr
	var err error
	if s.stdin, err = s.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	s.start = time.Now()
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	if rawMode {
		s.rc = newRawConn(s.stdin, out)
		if _, err := s.rc.call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "cgcat-bench-raw", "version": "1"}}); err != nil {
			s.stop()
			return nil, fmt.Errorf("initialize: %w\n%s", err, s.stderr.String())
		}
		s.rc.wmu.Lock()
		_, err := fmt.Fprintln(s.stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		s.rc.wmu.Unlock()
		s.init = time.Since(s.start)
		return s, err
	}
	s.c = client.NewClient(transport.NewIO(out, s.stdin, io.NopCloser(strings.NewReader(""))))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.c.Start(ctx); err != nil {
		s.stop()
		return nil, err
	}
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	req.Params.ClientInfo = mcp.Implementation{Name: "cgcat-bench", Version: "1"}
	if _, err := s.c.Initialize(ctx, req); err != nil {
		s.stop()
		return nil, fmt.Errorf("initialize: %w\n%s", err, s.stderr.String())
	}
	s.init = time.Since(s.start)
	return s, nil
}

// stop closes stdin (the server's signal to end) and waits for it.
func (s *server) stop() {
	s.stdin.Close()
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-done
	}
}

type envelope struct {
	Status    string `json:"status"`
	ScanState string `json:"scanState"`
	Coverage  string `json:"coverage"`
	Projects  []struct {
		Name        string  `json:"name"`
		ProjectPath *string `json:"projectPath"`
	} `json:"projects"`
}

func (s *server) projects(args map[string]any) (envelope, error) {
	if rawMode {
		var e envelope
		raw, err := s.rc.tool("local_codegraph_projects", args)
		if err == nil {
			err = json.Unmarshal(raw, &e)
		}
		return e, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = "local_codegraph_projects"
	req.Params.Arguments = args
	res, err := s.c.CallTool(ctx, req)
	var e envelope
	if err != nil {
		return e, err
	}
	if res.IsError {
		return e, fmt.Errorf("tool error: %v", res.Content)
	}
	err = json.Unmarshal(res.RawStructuredContent, &e)
	return e, err
}

// waitScanned polls until a discovery pass has finished.
func (s *server) waitScanned(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		e, err := s.projects(map[string]any{"query": "cgcat-bench-no-such-project"})
		if err != nil {
			return err
		}
		if e.ScanState == "idle" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("discovery still running after %s", limit)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// rss reads VmRSS or VmHWM of pid in MiB.
func rss(pid int, field string) float64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
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

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }

func pct(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

func runInit(bin, cfg string, repeat int) {
	var inits, firsts []time.Duration
	var rssMB float64
	for range repeat {
		s, err := startServer(bin, cfg)
		if err != nil {
			log.Fatal(err)
		}
		if _, err := s.projects(map[string]any{"query": "cgcat-bench-no-such-project"}); err != nil {
			log.Fatalf("first call: %v\n%s", err, s.stderr.String())
		}
		first := time.Since(s.start)
		rssMB = rss(s.cmd.Process.Pid, "VmRSS")
		s.stop()
		inits, firsts = append(inits, s.init), append(firsts, first)
	}
	fmt.Printf("| %d | %.1f | %.1f | %.1f | %.1f | %.1f |\n", repeat,
		ms(pct(inits, 0.5)), ms(slices.Min(inits)), ms(slices.Max(inits)), ms(pct(firsts, 0.5)), rssMB)
}

func runQuery(bin, cfg, queries string, n int, label string, limit int) {
	qs, err := selection.LoadQueries(filepath.Dir(queries))
	if err != nil {
		log.Fatal(err)
	}
	qs = slices.DeleteFunc(qs, func(q selection.Query) bool { return q.Workspace != "" })
	s, err := startServer(bin, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer s.stop()
	if _, err := s.projects(map[string]any{"query": qs[0].Query}); err != nil {
		log.Fatal(err)
	}
	first := time.Since(s.start)
	t0 := time.Now()
	if err := s.waitScanned(30 * time.Minute); err != nil {
		log.Fatal(err)
	}
	scanned := time.Since(t0)
	for _, q := range qs { // warm
		if _, err := s.projects(map[string]any{"query": q.Query}); err != nil {
			log.Fatal(err)
		}
	}
	// The transport alone: MCP ping round trips.
	var pings []time.Duration
	for range 500 {
		st := time.Now()
		if err := s.c.Ping(context.Background()); err != nil {
			log.Fatal(err)
		}
		pings = append(pings, time.Since(st))
	}
	lat := make([]time.Duration, 0, n)
	for i := range n {
		q := qs[i%len(qs)]
		st := time.Now()
		e, err := s.projects(map[string]any{"query": q.Query, "limit": limit})
		if err != nil {
			log.Fatal(err)
		}
		lat = append(lat, time.Since(st))
		if e.Status != "ok" && e.Status != "no_matches" {
			log.Fatalf("%q: status %s", q.Query, e.Status)
		}
	}
	pid := s.cmd.Process.Pid
	fmt.Printf("| %s | %.1f | %.0f | %.1f | %.0f | %.0f | %.0f | %.0f | %.0f |\n", label,
		ms(s.init), ms(first), scanned.Seconds(), float64(pct(lat, 0.5).Microseconds()), float64(pct(lat, 0.99).Microseconds()),
		float64(pct(pings, 0.5).Microseconds()), rss(pid, "VmRSS"), rss(pid, "VmHWM"))
}

func runDiscovery(bin, cfg, root, mode string, trials int, timeout time.Duration) {
	c, err := os.ReadFile(cfg)
	if err != nil {
		log.Fatal(err)
	}
	var conf struct {
		Discovery struct {
			RefreshIntervalSeconds int `json:"refreshIntervalSeconds"`
		} `json:"discovery"`
	}
	if err := json.Unmarshal(c, &conf); err != nil {
		log.Fatal(err)
	}
	interval := time.Duration(conf.Discovery.RefreshIntervalSeconds) * time.Second
	s, err := startServer(bin, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer s.stop()
	if err := s.waitScanned(30 * time.Minute); err != nil {
		log.Fatal(err)
	}
	var lat []time.Duration
	for i := range trials {
		if mode == "interval" {
			// Appear at a random moment of the refresh cycle.
			time.Sleep(time.Duration(rand.Int64N(int64(interval))))
		}
		name := fmt.Sprintf("cgcatdiscovery%d%d%d", os.Getpid(), time.Now().UnixNano()%1e6, i)
		dir := filepath.Join(root, name)
		if err := selection.MakeProject(dir, map[string]string{"package.json": `{"name":"` + name + `"}`}); err != nil {
			log.Fatal(err)
		}
		t0 := time.Now()
		args := map[string]any{"query": name}
		if mode == "refresh" {
			args["refresh"] = true
		}
		for {
			e, err := s.projects(args)
			if err != nil {
				log.Fatal(err)
			}
			delete(args, "refresh") // an agent asks for a refresh once
			if len(e.Projects) > 0 && e.Projects[0].Name == name {
				break
			}
			if time.Since(t0) > timeout {
				log.Fatalf("%s not visible after %s", name, timeout)
			}
			time.Sleep(10 * time.Millisecond)
		}
		d := time.Since(t0)
		lat = append(lat, d)
		fmt.Fprintf(os.Stderr, "mcpclient: trial %d: visible after %s\n", i+1, d.Round(time.Millisecond))
		if err := os.RemoveAll(dir); err != nil {
			log.Fatal(err)
		}
	}
	var sum time.Duration
	for _, d := range lat {
		sum += d
	}
	fmt.Printf("| %s | %d | %.2f | %.2f | %.2f |\n", mode, trials, (sum / time.Duration(len(lat))).Seconds(), slices.Min(lat).Seconds(), slices.Max(lat).Seconds())
}

// runMem is the memory of several serves on one catalog: each is started,
// answers the query set once (its pages of the catalog are touched), and
// then every serve's RSS, PSS (shared pages divided among the processes
// that map them) and anonymous memory are read from
// /proc/PID/smaps_rollup.
func runMem(bin, cfg, queries string, serves int, settle time.Duration) {
	qs, err := selection.LoadQueries(filepath.Dir(queries))
	if err != nil {
		log.Fatal(err)
	}
	qs = slices.DeleteFunc(qs, func(q selection.Query) bool { return q.Workspace != "" })
	srv := make([]*server, serves)
	for i := range srv {
		if srv[i], err = startServer(bin, cfg); err != nil {
			log.Fatal(err)
		}
		defer srv[i].stop()
	}
	for _, s := range srv {
		for _, q := range qs {
			if _, err := s.projects(map[string]any{"query": q.Query, "limit": 10}); err != nil {
				log.Fatal(err)
			}
		}
		if _, err := s.projects(map[string]any{"limit": 50}); err != nil {
			log.Fatal(err)
		}
	}
	time.Sleep(settle)
	for i, s := range srv {
		m := smaps(s.cmd.Process.Pid)
		fmt.Printf("| %d | %d | %.0f | %.1f | %.1f | %.1f | %.1f |\n", serves, i+1, settle.Seconds(), m["Rss"], m["Pss"], m["Anonymous"], m["Pss_File"])
	}
}

// smaps reads /proc/PID/smaps_rollup in MiB.
func smaps(pid int) map[string]float64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/smaps_rollup")
	if err != nil {
		log.Fatal(err)
	}
	out := map[string]float64{}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 3 && f[2] == "kB" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			out[strings.TrimSuffix(f[0], ":")] = kb / 1024
		}
	}
	return out
}
