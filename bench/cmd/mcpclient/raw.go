package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/cgcat/cgcat/bench/selection"
)

// rawServer speaks JSON-RPC to a `cgcat serve` line by line without
// decoding its answers: what the server and the pipe cost, without the
// mcp-go client's decoding (which, for a page of 50, takes more CPU than
// the server's answer on a 2-core machine, and shares its cores).
type rawServer struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
	id  int
}

func startRaw(bin, cfg string) (*rawServer, error) {
	s := &rawServer{cmd: exec.Command(bin, "serve", "--config", cfg)}
	var err error
	if s.in, err = s.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	s.out = bufio.NewReaderSize(out, 1<<20)
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	if _, err := s.call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "cgcat-bench-raw", "version": "1"}}); err != nil {
		return nil, err
	}
	_, err = fmt.Fprintln(s.in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return s, err
}

// call sends one request and returns its answer line, unparsed.
func (s *rawServer) call(method string, params any) ([]byte, error) {
	s.id++
	req, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": s.id, "method": method, "params": params})
	if err != nil {
		return nil, err
	}
	if _, err := s.in.Write(append(req, '\n')); err != nil {
		return nil, err
	}
	want := []byte(fmt.Sprintf(`"id":%d`, s.id))
	for {
		line, err := s.out.ReadBytes('\n')
		if err != nil {
			return nil, err
		}
		if bytes.Contains(line, want) { // notifications and logs carry no id
			if bytes.Contains(line, []byte(`"isError":true`)) || bytes.HasPrefix(line, []byte(`{"jsonrpc":"2.0","id":`+fmt.Sprint(s.id)+`,"error"`)) {
				return line, fmt.Errorf("error answer: %.300s", line)
			}
			return line, nil
		}
	}
}

func (s *rawServer) stop() {
	s.in.Close()
	s.cmd.Wait()
}

// runRaw is runQuery over rawServer: hot latency p50/p99 of the query set
// at a page size, and the answers' mean size.
func runRaw(bin, cfg, queries string, n int, label string, limit int) {
	qs, err := selection.LoadQueries(filepath.Dir(queries))
	if err != nil {
		log.Fatal(err)
	}
	qs = slices.DeleteFunc(qs, func(q selection.Query) bool { return q.Workspace != "" })
	s, err := startRaw(bin, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer s.stop()
	ask := func(q string) ([]byte, error) {
		return s.call("tools/call", map[string]any{"name": "local_codegraph_projects", "arguments": map[string]any{"query": q, "limit": limit}})
	}
	// Wait for the first discovery pass (scanState idle), then warm.
	for deadline := time.Now().Add(30 * time.Minute); ; {
		line, err := ask("cgcat-bench-no-such-project")
		if err != nil {
			log.Fatal(err)
		}
		if bytes.Contains(line, []byte(`\"scanState\":\"idle\"`)) || bytes.Contains(line, []byte(`"scanState":"idle"`)) {
			break
		}
		if time.Now().After(deadline) {
			log.Fatal("discovery still running")
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, q := range qs {
		if _, err := ask(q.Query); err != nil {
			log.Fatal(err)
		}
	}
	// The floor under every call: a bare ping round trip on the same pipe.
	pings := make([]time.Duration, 0, n)
	for range n {
		st := time.Now()
		if _, err := s.call("ping", map[string]any{}); err != nil {
			log.Fatal(err)
		}
		pings = append(pings, time.Since(st))
	}
	lat := make([]time.Duration, 0, n)
	bytesIn := 0
	serve0, self0 := procCPU(s.cmd.Process.Pid), selfCPU()
	for i := range n {
		st := time.Now()
		line, err := ask(qs[i%len(qs)].Query)
		if err != nil {
			log.Fatal(err)
		}
		lat = append(lat, time.Since(st))
		bytesIn += len(line)
	}
	serveCPU, clientCPU := procCPU(s.cmd.Process.Pid)-serve0, selfCPU()-self0
	// CPU per call (the server's, then this client's): unlike latency it
	// does not count time the scheduler gave to other processes.
	fmt.Printf("| %s | %d | %.0f | %.0f | %.1f | %.0f | %.0f | %.0f |\n", label, limit, float64(pct(lat, 0.5).Microseconds()), float64(pct(lat, 0.99).Microseconds()), float64(bytesIn)/float64(n)/1024,
		float64(serveCPU.Microseconds())/float64(n), float64(clientCPU.Microseconds())/float64(n), float64(pct(pings, 0.5).Microseconds()))
}

// rawConn is a JSON-RPC connection that many goroutines call at once: one
// reader hands each answer line to the caller waiting for its id, unparsed.
type rawConn struct {
	in      io.Writer
	wmu     sync.Mutex
	mu      sync.Mutex
	next    int
	pending map[int]chan []byte
	err     error
}

func newRawConn(in io.Writer, out io.Reader) *rawConn {
	rc := &rawConn{in: in, pending: map[int]chan []byte{}}
	go func() {
		r := bufio.NewReaderSize(out, 1<<20)
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				rc.mu.Lock()
				rc.err = err
				for _, ch := range rc.pending {
					close(ch)
				}
				rc.pending = map[int]chan []byte{}
				rc.mu.Unlock()
				return
			}
			// {"jsonrpc":"2.0","id":N,...}: the id is near the start.
			i := bytes.Index(line, []byte(`"id":`))
			if i < 0 || i > 40 {
				continue // a notification
			}
			id := 0
			for _, c := range line[i+5:] {
				if c < '0' || c > '9' {
					break
				}
				id = id*10 + int(c-'0')
			}
			rc.mu.Lock()
			ch := rc.pending[id]
			delete(rc.pending, id)
			rc.mu.Unlock()
			if ch != nil {
				ch <- line
			}
		}
	}()
	return rc
}

func (rc *rawConn) call(method string, params any) ([]byte, error) {
	ch := make(chan []byte, 1)
	rc.mu.Lock()
	if rc.err != nil {
		rc.mu.Unlock()
		return nil, rc.err
	}
	rc.next++
	id := rc.next
	rc.pending[id] = ch
	rc.mu.Unlock()
	req, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		return nil, err
	}
	rc.wmu.Lock()
	_, err = rc.in.Write(append(req, '\n'))
	rc.wmu.Unlock()
	if err != nil {
		return nil, err
	}
	line, ok := <-ch
	if !ok {
		return nil, fmt.Errorf("connection closed: %v", rc.err)
	}
	if bytes.Contains(line, []byte(`"isError":true`)) || bytes.Contains(line[:min(len(line), 60)], []byte(`"error"`)) {
		return line, fmt.Errorf("error answer: %.300s", line)
	}
	return line, nil
}

// tool calls a tool and returns the answer's structured content, still
// encoded.
func (rc *rawConn) tool(name string, args map[string]any) (json.RawMessage, error) {
	line, err := rc.call("tools/call", map[string]any{"name": name, "arguments": args})
	if err != nil {
		return nil, err
	}
	var r struct {
		Result struct {
			StructuredContent json.RawMessage `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(line, &r); err != nil {
		return nil, err
	}
	return r.Result.StructuredContent, nil
}
