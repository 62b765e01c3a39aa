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
	lat := make([]time.Duration, 0, n)
	bytesIn := 0
	for i := range n {
		st := time.Now()
		line, err := ask(qs[i%len(qs)].Query)
		if err != nil {
			log.Fatal(err)
		}
		lat = append(lat, time.Since(st))
		bytesIn += len(line)
	}
	fmt.Printf("| %s | %d | %.0f | %.0f | %.1f |\n", label, limit, float64(pct(lat, 0.5).Microseconds()), float64(pct(lat, 0.99).Microseconds()), float64(bytesIn)/float64(n)/1024)
}
