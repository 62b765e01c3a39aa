package server_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// rawServe runs the real `cgcat serve` with all of stdin written at once
// and closed, and returns every line it wrote on stdout once it exited by
// itself (a hang detector kills it after a minute and fails).
func rawServe(t *testing.T, config string, stdin string) []map[string]json.RawMessage {
	t.Helper()
	cmd := exec.Command(cgcatBinary(t), "serve", "--config", config)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve: %v\nstderr:\n%s", err, errOut.String())
		}
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("serve did not exit after stdin closed\nstderr:\n%s", errOut.String())
	}
	var msgs []map[string]json.RawMessage
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("stdout line is not JSON: %.200q", sc.Text())
		}
		msgs = append(msgs, m)
	}
	return msgs
}

const initLine = `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pipelined","version":"1"}}}` + "\n" +
	`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"

// byID indexes answers by their raw id.
func byID(msgs []map[string]json.RawMessage) map[string]map[string]json.RawMessage {
	out := map[string]map[string]json.RawMessage{}
	for _, m := range msgs {
		out[string(m["id"])] = m
	}
	return out
}

// Every request received before stdin's end is answered before the
// process exits (issue 23, case 8): 50 tool calls written at once, then
// EOF, get 50 answers (3 to 10 came back when mcp-go cancelled the rest).
func TestPipelinedRequestsAnsweredBeforeExit(t *testing.T) {
	base := tempDir(t)
	for i := range 3 {
		project(t, filepath.Join(base, "code", fmt.Sprintf("pipe-%d", i)), fmt.Sprintf("pipe-%d", i), "pipelined fixture")
	}
	config := cfg{DataDir: filepath.Join(base, "data"), Roots: []string{filepath.Join(base, "code")}}.write(t)
	var in strings.Builder
	in.WriteString(initLine)
	const n = 50
	for i := 1; i <= n; i++ {
		tool, args := "local_codegraph_projects", `{"query":"pipe"}`
		if i%5 == 0 {
			tool, args = "local_codegraph_resolve", `{"projectId":"cg_unknownproject0"}`
		}
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`+"\n", i, tool, args)
	}
	in.WriteString(`{"jsonrpc":"2.0","id":"last","method":"tools/list"}` + "\n")
	got := byID(rawServe(t, config, in.String()))
	var missing []int
	for i := 1; i <= n; i++ {
		m, ok := got[fmt.Sprint(i)]
		if !ok {
			missing = append(missing, i)
			continue
		}
		var res struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		if err := json.Unmarshal(m["result"], &res); err != nil || len(res.Content) == 0 {
			t.Errorf("answer %d: %s", i, m["result"])
		} else if strings.Contains(res.Content[0].Text, "cancelled") {
			t.Errorf("answer %d says the call was cancelled: %s", i, res.Content[0].Text)
		}
	}
	if len(missing) > 0 {
		t.Errorf("%d of %d pipelined calls got no answer before exit: %v", len(missing), n, missing)
	}
	if _, ok := got[`"last"`]; !ok {
		t.Error("the last request (tools/list) got no answer")
	}
}

// deep is a tools/call whose arguments nest depth arrays, with the id
// before or after them.
func deep(id string, depth int, idFirst bool) string {
	args := `{"query":` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}`
	if idFirst {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"local_codegraph_projects","arguments":` + args + `}}` + "\n"
	}
	return `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"local_codegraph_projects","arguments":` + args + `},"id":` + id + `}` + "\n"
}

// Arguments nested 10,000 deep, or any depth, get an error answer that
// carries the request's id (issue 23, case 8: an id-less parse error no
// client could match to its call). A line whose id cannot be read gets a
// parse error with id null, as JSON-RPC asks; the server goes on.
func TestDeepArgumentsAnsweredWithTheirID(t *testing.T) {
	base := tempDir(t)
	config := cfg{DataDir: filepath.Join(base, "data"), Roots: []string{base}}.write(t)
	in := initLine +
		deep("101", 10_001, true) +
		deep(`"deep-after"`, 100_000, false) +
		deep("103", 1_000_000, true) +
		deep("104", 50, true) + // within the limit: a normal argument error
		`{"jsonrpc":"2.0","id":105,"method":"tools/call","params":{"name":"local_codegraph_projects","arguments":{"query":tru}}}` + "\n" +
		`{"jsonrpc":"2.0","id":` + strings.Repeat("[", 20_000) + "\n" +
		`{"jsonrpc":"2.0","id":106,"method":"tools/list"}` + "\n"
	msgs := rawServe(t, config, in)
	got := byID(msgs)
	for _, id := range []string{"101", `"deep-after"`, "103"} {
		m, ok := got[id]
		if !ok {
			t.Errorf("no answer carries id %s; answers: %d", id, len(msgs))
			continue
		}
		var e struct {
			Code    int
			Message string
		}
		if err := json.Unmarshal(m["error"], &e); err != nil || e.Code != -32600 || !strings.Contains(e.Message, "nested deeper than 10000 levels") {
			t.Errorf("id %s: %s, want an invalid-request error naming the depth", id, m["error"])
		}
	}
	if m, ok := got["104"]; !ok || m["result"] == nil || !bytes.Contains(m["result"], []byte(`"isError":true`)) {
		t.Errorf("id 104 (50 deep): %v, want a tool error about the argument", m)
	}
	if m, ok := got["105"]; !ok || !bytes.Contains(m["error"], []byte("-32700")) {
		t.Errorf("id 105 (a syntax error in the arguments): %v, want a parse error carrying its id", m)
	}
	if m, ok := got["null"]; !ok || !bytes.Contains(m["error"], []byte("-32700")) {
		t.Errorf("a line whose id cannot be read: %v, want a parse error with id null", m)
	}
	if _, ok := got["106"]; !ok {
		t.Error("the server stopped answering after the deep requests")
	}
}
