package server

import (
	"bytes"
	"encoding/json"
	"io"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// readAll reads everything BoundStdio lets through and what it answered.
func bound(t *testing.T, in io.Reader, max int) (passed string, answers []map[string]any) {
	t.Helper()
	var out bytes.Buffer
	r, _ := BoundStdio(in, &out, max)
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("answer is not JSON: %q", line)
		}
		answers = append(answers, m)
	}
	return string(b), answers
}

func TestBoundStdioPassesShortLines(t *testing.T) {
	in := "{\"a\":1}\n" + strings.Repeat("x", 99) + "\r\n\n" + "last without newline"
	for _, r := range []io.Reader{strings.NewReader(in), iotest.OneByteReader(strings.NewReader(in)), iotest.HalfReader(strings.NewReader(in))} {
		got, answers := bound(t, r, 100)
		if got != in || len(answers) != 0 {
			t.Errorf("passed %q (answers %v), want the input unchanged", got, answers)
		}
	}
}

func TestBoundStdioDropsLongLines(t *testing.T) {
	const max = 1000
	long := func(prefix string, n int) string { return prefix + strings.Repeat("a", n) + `"}}` }
	tests := []struct {
		name string
		line string
		id   any
	}{
		{"number id first", long(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"q":"`, 5000), 7.0},
		{"string id", long(`{"id":"req-1","jsonrpc":"2.0","params":{"q":"`, 5000), "req-1"},
		{"id after the big value", long(`{"jsonrpc":"2.0","params":{"q":"`, 5000) + `,"id":9}`, nil},
		{"id not a scalar", long(`{"id":{"x":1},"params":{"q":"`, 5000), nil},
		{"not an object", strings.Repeat("[", 5000), nil},
		{"just over the bound", long(`{"id":3,"p":"`, max-len(`{"id":3,"p":"`)-2), 3.0},
		{"far longer than any buffer", long(`{"id":4,"p":"`, 3<<20), 4.0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if len(tt.line) <= max {
				t.Fatalf("fixture line of %d bytes is not over the bound", len(tt.line))
			}
			in := "{\"before\":1}\n" + tt.line + "\n{\"after\":2}\n"
			got, answers := bound(t, iotest.HalfReader(strings.NewReader(in)), max)
			if got != "{\"before\":1}\n{\"after\":2}\n" {
				t.Errorf("passed %.200q", got)
			}
			if len(answers) != 1 {
				t.Fatalf("answers %v, want one", answers)
			}
			a := answers[0]
			e, _ := a["error"].(map[string]any)
			if a["jsonrpc"] != "2.0" || a["id"] != tt.id || e["code"] != -32600.0 || !strings.Contains(e["message"].(string), "message too large") {
				t.Errorf("answer %v, want error -32600 for id %v", a, tt.id)
			}
		})
	}
	// At the bound exactly: passed.
	line := `{"id":1,"p":"` + strings.Repeat("b", max-len(`{"id":1,"p":"`)-2) + `"}`
	if got, answers := bound(t, strings.NewReader(line+"\n"), max); got != line+"\n" || len(answers) != 0 {
		t.Errorf("a line of exactly max bytes was not passed: %d bytes, %v", len(got), answers)
	}
	// A long line cut off by the end of input: answered, then EOF.
	got, answers := bound(t, strings.NewReader(`{"id":5,"p":"`+strings.Repeat("c", 5000)), max)
	if got != "" || len(answers) != 1 || answers[0]["id"] != 5.0 {
		t.Errorf("truncated long line: passed %q, answers %v", got, answers)
	}
}

// TestBoundStdioDoesNotBuffer: a line far over the bound is never held:
// memory stays near the bound whatever the line's length.
func TestBoundStdioDoesNotBuffer(t *testing.T) {
	const size = 64 << 20
	src := io.MultiReader(strings.NewReader(`{"id":1,"p":"`), &repeat{b: 'z', n: size}, strings.NewReader("\"}\n{\"ok\":1}\n"))
	var out bytes.Buffer
	r, _ := BoundStdio(src, &out, 1<<20)
	var buf [4096]byte
	var got []byte
	var ms0, ms1 runtimeMem
	ms0.read()
	for {
		n, err := r.Read(buf[:])
		got = append(got, buf[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	ms1.read()
	if string(got) != "{\"ok\":1}\n" || !strings.Contains(out.String(), "message too large") {
		t.Fatalf("passed %q, answered %q", got, out.String())
	}
	if grown := ms1.totalAlloc - ms0.totalAlloc; grown > 8<<20 {
		t.Errorf("allocated %d MiB to discard a %d MiB line", grown>>20, size>>20)
	}
}

// repeat is n bytes of b.
type repeat struct {
	b byte
	n int
}

func (r *repeat) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	n := min(len(p), r.n)
	for i := range n {
		p[i] = r.b
	}
	r.n -= n
	return n, nil
}

type runtimeMem struct{ totalAlloc uint64 }

func (m *runtimeMem) read() {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m.totalAlloc = ms.TotalAlloc
}

// The end of input waits for the answers to the requests handed out, and
// not for those the client cancelled (notifications/cancelled: it waits
// for no answer); lines that are not requests are not waited for.
func TestBoundStdioEOFWaitsForAnswers(t *testing.T) {
	old := DrainLimit
	DrainLimit = 10 * time.Minute // longer than the hang detector below
	defer func() { DrainLimit = old }()
	in := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}` + "\n" +
		`{"jsonrpc":"2.0","id":"two","method":"tools/call","params":{}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"two"}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		`{"jsonrpc":"2.0","id":3,"result":{}}` + "\n"
	var out bytes.Buffer
	r, w := BoundStdio(strings.NewReader(in), &out, 1<<20)
	eof := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, r)
		close(eof)
	}()
	// Answers come after the requests were read (as with mcp-go): wait
	// until the reader has booked them all and holds back the end.
	book := r.(*boundedReader).book
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
		book.mu.Lock()
		n := book.n
		book.mu.Unlock()
		if n == 1 {
			break // request 1; "two" was cancelled
		}
		if time.Now().After(deadline) {
			t.Fatalf("the reader booked %d requests, want 1", n)
		}
	}
	// mcp-go's own notification and an answer to another id do not count.
	w.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{}}` + "\n"))
	w.Write([]byte(`{"jsonrpc":"2.0","id":7,"result":{}}` + "\n"))
	select {
	case <-eof:
		t.Fatal("end of input before request 1 was answered")
	default:
	}
	w.Write([]byte(`{"jsonrpc":"2.0","id":1.0,"result":{"content":[]}}` + "\n"))
	select {
	case <-eof:
	case <-time.After(time.Minute):
		t.Fatal("end of input still held back after every request not cancelled was answered")
	}
}
