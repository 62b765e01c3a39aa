package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cgcat/cgcat/bench/selection"
	"github.com/mark3labs/mcp-go/mcp"
)

// runLoad is issue 14's scenario: several `cgcat serve` processes on one
// data dir, a `cgcat scan` re-walking the tree meanwhile, and calls
// concurrent calls spread over the servers, in a mix of what hosts ask:
// 55 % one- or two-word queries (limit 5, 10 or 50), 15 % listings, 10 %
// with a workspacePath (a fifth of those with refresh: true) and 20 %
// resolves of ids seen earlier. It prints one table row: calls, errors,
// p50, p99, max, and how often mcp-go fell back to answering on its read
// loop ("queue full").
func runLoad(bin, cfg, queries string, serves, calls int, withScan bool, seed uint64) {
	words := shortQueries(queries)
	srv := make([]*server, serves)
	for i := range srv {
		var err error
		if srv[i], err = startServer(bin, cfg); err != nil {
			log.Fatal(err)
		}
		defer srv[i].stop()
	}
	// The catalog is loaded and every server answers before the clock starts.
	for _, s := range srv {
		if err := s.waitScanned(30 * time.Minute); err != nil {
			log.Fatal(err)
		}
	}
	ids, workspaces := catalogTargets(srv[0])
	if len(ids) == 0 || len(words) == 0 {
		log.Fatal("no projects or no queries")
	}
	var scans *scanLoop
	if withScan {
		// A scan runs through the whole burst: a warm pass over this tree
		// ends in well under a second now, so passes follow each other.
		scans = startScanLoop(bin, cfg)
		defer scans.stop()
		time.Sleep(200 * time.Millisecond) // the scan holds its lease and commits
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	jobs := loadJobs(rng, srv, calls, words, workspaces, ids)
	lat, errs, wall := burst(jobs, srv, scans)
	nerr := reportLoadErrors(jobs, errs)
	full := 0
	for _, s := range srv {
		full += strings.Count(s.stderr.String(), "queue full")
	}
	fmt.Printf("| %d | %d | %v | %d | %.1f | %.1f | %.1f | %.0f | %d |\n", serves, calls, withScan, nerr,
		ms(pct(lat, 0.5)), ms(pct(lat, 0.99)), ms(slices.Max(lat)), ms(wall), full)
}

// shortQueries are the one- and two-word queries of the set asked from no
// workspace.
func shortQueries(queries string) []string {
	qs, err := selection.LoadQueries(filepath.Dir(queries))
	if err != nil {
		log.Fatal(err)
	}
	var words []string
	for _, q := range qs {
		if q.Workspace == "" && len(strings.Fields(q.Query)) <= 2 {
			words = append(words, q.Query)
		}
	}
	return words
}

// catalogTargets are the ids of the catalog's first 50 projects, to
// resolve, and a directory inside each that has a path, to ask from.
func catalogTargets(s *server) (ids, workspaces []string) {
	all, err := s.call("local_codegraph_projects", map[string]any{"limit": 50})
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range all.Projects {
		ids = append(ids, p.ProjectID)
		if p.ProjectPath != nil {
			workspaces = append(workspaces, filepath.Join(*p.ProjectPath, "src"))
		}
	}
	return ids, workspaces
}

// loadJob is one call of the burst.
type loadJob struct {
	s    *server
	tool string
	args map[string]any
}

// loadJobs draws the calls of the burst in the hosts' mix (see runLoad),
// spread over the servers in turn.
func loadJobs(rng *rand.Rand, srv []*server, calls int, words, workspaces, ids []string) []loadJob {
	jobs := make([]loadJob, calls)
	for i := range jobs {
		s := srv[i%len(srv)]
		r := rng.IntN(100)
		switch {
		case r < 55:
			jobs[i] = loadJob{s, "local_codegraph_projects", map[string]any{"query": words[rng.IntN(len(words))], "limit": []int{5, 10, 50}[rng.IntN(3)]}}
		case r < 70:
			jobs[i] = loadJob{s, "local_codegraph_projects", map[string]any{"limit": []int{5, 10, 50}[rng.IntN(3)]}}
		case r < 80:
			a := map[string]any{"query": words[rng.IntN(len(words))], "workspacePath": workspaces[rng.IntN(len(workspaces))]}
			if rng.IntN(5) == 0 {
				a["refresh"] = true
			}
			jobs[i] = loadJob{s, "local_codegraph_projects", a}
		default:
			jobs[i] = loadJob{s, "local_codegraph_resolve", map[string]any{"projectId": ids[rng.IntN(len(ids))]}}
		}
	}
	return jobs
}

// burst sends every job at once and returns each call's latency and error
// and the burst's wall time; it reports on stderr the CPU the serves, the
// scans and this client used meanwhile.
func burst(jobs []loadJob, srv []*server, scans *scanLoop) (lat []time.Duration, errs []error, wall time.Duration) {
	lat = make([]time.Duration, len(jobs))
	errs = make([]error, len(jobs))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			t := time.Now()
			if rawMode { // the answer line, not decoded
				_, errs[i] = j.s.rc.call("tools/call", map[string]any{"name": j.tool, "arguments": j.args})
			} else {
				_, errs[i] = j.s.call(j.tool, j.args)
			}
			lat[i] = time.Since(t)
		}()
	}
	before := takeCPU(srv, scans)
	t0 := time.Now()
	close(start)
	wg.Wait()
	wall = time.Since(t0)
	takeCPU(srv, scans).reportSince(before, len(jobs))
	return lat, errs, wall
}

// cpuUse is the CPU used so far by the serves, the scan passes and this
// client, and how many scan passes ended.
type cpuUse struct {
	serves       []time.Duration
	scan, client time.Duration
	passes       int
}

func takeCPU(srv []*server, scans *scanLoop) cpuUse {
	u := cpuUse{serves: make([]time.Duration, len(srv))}
	for i, s := range srv {
		u.serves[i] = procCPU(s.cmd.Process.Pid)
	}
	if scans != nil {
		u.scan, u.passes = scans.cpu()
	}
	u.client = selfCPU()
	return u
}

// reportSince prints on stderr the CPU used since before, in all and a call.
func (u cpuUse) reportSince(before cpuUse, calls int) {
	var serveCPU time.Duration
	for i := range u.serves {
		serveCPU += u.serves[i] - before.serves[i]
	}
	scanCPU, passes := u.scan-before.scan, u.passes-before.passes
	clientCPU := u.client - before.client
	fmt.Fprintf(os.Stderr, "mcpclient: CPU during the burst: serves %.0f ms (%.2f ms a call), scan %.0f ms (%d passes ended), this client %.0f ms (%.2f ms a call)\n",
		ms(serveCPU), ms(serveCPU)/float64(calls), ms(scanCPU), passes, ms(clientCPU), ms(clientCPU)/float64(calls))
}

// reportLoadErrors counts the failed calls and prints the first three,
// with the stderr tail of the first one's server.
func reportLoadErrors(jobs []loadJob, errs []error) int {
	nerr := 0
	for _, e := range errs {
		if e != nil {
			nerr++
			if nerr <= 3 {
				fmt.Fprintln(os.Stderr, "error:", e)
			}
			if nerr == 1 {
				st := jobs[errIndex(errs)].s.stderr.String()
				fmt.Fprintln(os.Stderr, "its server's stderr (tail):", st[max(0, len(st)-3000):])
			}
		}
	}
	return nerr
}

type answer struct {
	Status   string `json:"status"`
	Projects []struct {
		ProjectID   string  `json:"projectId"`
		ProjectPath *string `json:"projectPath"`
	} `json:"projects"`
}

func (s *server) call(tool string, args map[string]any) (answer, error) {
	if rawMode {
		var a answer
		raw, err := s.rc.tool(tool, args)
		if err == nil {
			err = json.Unmarshal(raw, &a)
		}
		return a, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = tool, args
	res, err := s.c.CallTool(ctx, req)
	var a answer
	if err != nil {
		return a, err
	}
	if res.IsError {
		return a, fmt.Errorf("tool error: %v", res.Content)
	}
	return a, json.Unmarshal(res.RawStructuredContent, &a)
}

func errIndex(errs []error) int {
	for i, e := range errs {
		if e != nil {
			return i
		}
	}
	return 0
}

// procCPU is a process's user and system time so far (Linux; 0 elsewhere
// or once it exited).
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100 // USER_HZ
}

func selfCPU() time.Duration { return procCPU(os.Getpid()) }

// scanLoop runs `cgcat scan` again and again until stopped, and keeps the
// CPU its passes used.
type scanLoop struct {
	mu       sync.Mutex
	cur      *exec.Cmd
	finished time.Duration // CPU of the passes that ended
	passes   int
	quit     chan struct{}
	done     chan struct{}
}

func startScanLoop(bin, cfg string) *scanLoop {
	l := &scanLoop{quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(l.done)
		for {
			cmd := exec.Command(bin, "scan", "--config", cfg)
			l.mu.Lock()
			select {
			case <-l.quit:
				l.mu.Unlock()
				return
			default:
			}
			if err := cmd.Start(); err != nil {
				l.mu.Unlock()
				log.Fatal(err)
			}
			l.cur = cmd
			l.mu.Unlock()
			_ = cmd.Wait()
			l.mu.Lock()
			l.cur = nil
			if ps := cmd.ProcessState; ps != nil {
				l.finished += ps.UserTime() + ps.SystemTime()
			}
			l.passes++
			l.mu.Unlock()
		}
	}()
	return l
}

// cpu is the CPU all passes used so far (the running one's too) and how
// many passes ended.
func (l *scanLoop) cpu() (time.Duration, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.finished
	if l.cur != nil && l.cur.Process != nil {
		c += procCPU(l.cur.Process.Pid)
	}
	return c, l.passes
}

func (l *scanLoop) stop() {
	l.mu.Lock()
	close(l.quit)
	if l.cur != nil && l.cur.Process != nil {
		_ = l.cur.Process.Kill()
	}
	l.mu.Unlock()
	<-l.done
}
