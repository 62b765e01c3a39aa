//go:build unix

package main

// Step 8 of the acceptance (seed 13.2: "Codex GUI/IDE ... must be tested on
// its own"): the same hand-off through `codex app-server`, the JSON-RPC
// protocol over stdio that editors (the VS Code extension, the Codex app)
// drive, in the home `cgcat install codex` wrote, with a model turn against
// the scripted model. Messages are JSON lines: initialize, initialized,
// thread/start, turn/start, then notifications until turn/completed.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/cgcat/cgcat/cmd/cgcat/hostlaunch"
	"github.com/cgcat/cgcat/cmd/cgcat/internal/scriptedmodel"
)

// appServer is one `codex app-server` process and its JSON-RPC stream.
type appServer struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     io.WriteCloser
	lines  chan map[string]any
	stderr *hostlaunch.TailBuffer
	nextID int
	// requests lists the server's requests to the client (approvals,
	// elicitations), each answered.
	requests []string
}

func startAppServer(t *testing.T, bin string, r *agentRun) *appServer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "app-server")
	cmd.Env, cmd.Dir = r.baseEnv(), r.workspace
	s := &appServer{t: t, cmd: cmd, lines: make(chan map[string]any, 256), stderr: &hostlaunch.TailBuffer{Max: 64 << 10}}
	cmd.Stderr = s.stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s.in = in
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.pid.Store(int64(cmd.Process.Pid))
	t.Cleanup(func() {
		r.pid.Store(0)
		in.Close() // an editor closing: stdin first
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cancel()
			<-done
		}
		cancel()
	})
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				s.lines <- m
			}
		}
		close(s.lines)
	}()
	return s
}

func (s *appServer) send(m map[string]any) {
	s.t.Helper()
	b, _ := json.Marshal(m)
	if _, err := s.in.Write(append(b, '\n')); err != nil {
		s.t.Fatalf("codex app-server stdin: %v\nstderr:\n%s", err, s.stderr.String())
	}
}

// call sends a request and waits for its response, handling what comes
// before it; notifications seen on the way go to onNote.
func (s *appServer) call(method string, params any, onNote func(map[string]any)) map[string]any {
	s.t.Helper()
	s.nextID++
	id := s.nextID
	s.send(map[string]any{"id": id, "method": method, "params": params})
	return s.until(func(m map[string]any) bool {
		if v, ok := m["id"].(float64); ok && int(v) == id && m["method"] == nil {
			if e, ok := m["error"]; ok {
				s.t.Fatalf("codex app-server %s: error %v\nstderr:\n%s", method, e, s.stderr.String())
			}
			return true
		}
		if onNote != nil {
			onNote(m)
		}
		return false
	})
}

// until reads messages until done says so, answering the server's own
// requests on the way; it returns the last message.
func (s *appServer) until(done func(map[string]any) bool) map[string]any {
	s.t.Helper()
	deadline := time.After(180 * time.Second)
	for {
		select {
		case m, ok := <-s.lines:
			if !ok {
				s.t.Fatalf("codex app-server closed its stdout\nstderr:\n%s", s.stderr.String())
			}
			if method, _ := m["method"].(string); method != "" && m["id"] != nil {
				s.answer(method, m)
				continue
			}
			if done(m) {
				return m
			}
		case <-deadline:
			s.t.Fatalf("codex app-server: no answer in 180 s\nstderr:\n%s", s.stderr.String())
		}
	}
}

// answer replies to a request of the server: an approval is granted (and
// recorded: cgcat's tools should need none), anything else refused.
func (s *appServer) answer(method string, m map[string]any) {
	s.requests = append(s.requests, method)
	var result any
	switch {
	case strings.Contains(method, "requestApproval") || method == "execCommandApproval" || method == "applyPatchApproval":
		result = map[string]any{"decision": "accept"}
	case method == "mcpServer/elicitation/request":
		result = map[string]any{"action": "accept", "content": map[string]any{}}
	default:
		s.send(map[string]any{"id": m["id"], "error": map[string]any{"code": -32601, "message": "the test client does not handle " + method}})
		return
	}
	s.send(map[string]any{"id": m["id"], "result": result})
}

// appServerTurn runs tasks as one editor turn and returns the final agent
// message, the MCP tool calls made (server, tool, status), the time to a
// ready thread and the turn's time.
func (a *acceptance) appServerTurn(tasks ...scriptedmodel.Task) (string, []string, time.Duration, time.Duration) {
	t := a.t
	a.r.model.Reset()
	start := time.Now()
	s := startAppServer(t, a.bin, a.r)
	s.call("initialize", map[string]any{"clientInfo": map[string]any{"name": "cgcat-acceptance", "title": "cgcat acceptance test", "version": "1"}}, nil)
	s.send(map[string]any{"method": "initialized"})
	th := s.call("thread/start", map[string]any{"cwd": a.r.workspace}, nil)
	threadID := ""
	if res, ok := th["result"].(map[string]any); ok {
		if thread, ok := res["thread"].(map[string]any); ok {
			threadID, _ = thread["id"].(string)
		}
	}
	if threadID == "" {
		t.Fatalf("thread/start gave no thread id: %v", th)
	}
	ready := time.Since(start)
	var (
		calls []string
		final string
	)
	note := func(m map[string]any) {
		if m["method"] != "item/completed" {
			return
		}
		p, _ := m["params"].(map[string]any)
		item, _ := p["item"].(map[string]any)
		switch item["type"] {
		case "mcpToolCall":
			calls = append(calls, fmt.Sprintf("%v.%v %v", item["server"], item["tool"], item["status"]))
		case "agentMessage":
			if txt, _ := item["text"].(string); txt != "" {
				final = txt
			}
		}
	}
	turnStart := time.Now()
	s.call("turn/start", map[string]any{"threadId": threadID, "input": []any{map[string]any{"type": "text", "text": scriptedmodel.Prompts(tasks...)}}}, note)
	s.until(func(m map[string]any) bool {
		note(m)
		return m["method"] == "turn/completed"
	})
	if len(s.requests) > 0 {
		t.Logf("codex app-server asked the client: %v", s.requests)
	}
	a.record("codex app-server: B then C", len(tasks), a.r.model.Turns(), start, time.Now())
	return final, calls, ready, time.Since(turnStart)
}

// appServerStep is step 8: the hand-off for B then C through codex
// app-server, from the editor's thread in the workspace.
func (a *acceptance) appServerStep() {
	p := a.p
	a.step("8 IDE path: codex app-server", func(t *testing.T) {
		final, calls, ready, turn := a.appServerTurn(
			scriptedmodel.Task{Kind: scriptedmodel.TaskFind, Project: "@fruit/banana-sdk", Code: sharedSymbol},
			scriptedmodel.Task{Kind: scriptedmodel.TaskFind, Project: "@fruit/cherry-ledger", Code: sharedSymbol})
		turns := a.r.model.Turns()
		want := []string{"codegraph-catalog.local_codegraph_projects completed", "codegraph.codegraph_explore completed",
			"codegraph-catalog.local_codegraph_projects completed", "codegraph.codegraph_explore completed"}
		if strings.Join(calls, "\n") != strings.Join(want, "\n") {
			t.Fatalf("MCP tool calls through codex app-server:\n%s\nwant:\n%s\nturns:\n%s", strings.Join(calls, "\n"), strings.Join(want, "\n"), describeTurns(turns))
		}
		sections := answerSections(final)
		if len(sections) != 2 {
			t.Fatalf("the agent message has %d task sections, want 2:\n%s", len(sections), final)
		}
		checkSection(t, sections[0], p.b, []string{"src/orders.ts", "banana receipt"}, []string{"cherry receipt"})
		checkSection(t, sections[1], p.c, []string{"src/ledger.ts", "cherry receipt"}, []string{"banana receipt"})
		t.Logf("codex app-server: thread ready in %s, the turn in %s", ready.Round(time.Millisecond), turn.Round(time.Millisecond))
	})
}
