package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// MaxMessageBytes bounds one JSON-RPC message (one line) read from the
// host. Our requests are a few hundred bytes; a host never needs more.
const MaxMessageBytes = 4 << 20

// idScanBytes is how much of an oversized message is searched for its id.
const idScanBytes = 64 << 10

// BoundStdio wraps the stdio pair given to the MCP stdio server so that a
// message longer than max bytes is never held whole: mcp-go reads a whole
// line into memory (a 300 MB line grew the process to 1.6 GB). A line over
// the bound is discarded as it streams in, and the host gets a JSON-RPC
// error (-32600, "message too large") for it, with the request's id when
// the first 64 KiB of the line name one (null otherwise, as JSON-RPC asks
// when the id cannot be read). The answer is written on the returned
// writer, which serialises whole writes with mcp-go's own (mcp-go writes
// every message with one Write).
//
// Two more things mcp-go does not do are done here:
//   - A line encoding/json cannot read but whose top-level object names an
//     id (arguments nested past its 10,000 levels, a syntax error inside
//     the params) is answered here with an error carrying that id, so the
//     client can match it to its call; mcp-go would answer a parse error
//     with a null id. A line whose id cannot be read goes on to mcp-go,
//     whose parse error has id null, as JSON-RPC asks.
//   - End of input is held back until every request handed out has been
//     answered (at most DrainLimit): mcp-go cancels the calls still queued
//     or running when its input ends, so a host that writes 50 requests
//     and closes stdin got 3 to 10 answers.
//
// Other lines pass through unchanged.
func BoundStdio(in io.Reader, out io.Writer, max int) (io.Reader, io.Writer) {
	book := newAnswerBook()
	w := &lineWriter{w: out, book: book}
	return &boundedReader{src: bufio.NewReaderSize(in, 64<<10), out: w, max: max, book: book}, w
}

// DrainLimit bounds how long the end of input waits for the answers to
// requests already received (a call's own budgets end it long before).
// Tests may change it.
var DrainLimit = 30 * time.Second

// lineWriter makes each Write one uninterrupted write on w, and tells the
// book which requests were answered.
type lineWriter struct {
	mu   sync.Mutex
	w    io.Writer
	book *answerBook
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	n, err := l.w.Write(p)
	l.mu.Unlock()
	l.book.saw(p)
	return n, err
}

// boundedReader hands out whole lines of at most max bytes (newline
// excluded) and drops longer ones.
type boundedReader struct {
	src     *bufio.Reader
	out     *lineWriter
	book    *answerBook
	drained bool // the end of input waited for the answers once
	max     int
	line    []byte // the line being read, then handed out from pending
	pending []byte // what Read still has to return of the current line
	err     error  // returned once pending is empty
}

func (r *boundedReader) Read(p []byte) (int, error) {
	for len(r.pending) == 0 {
		if r.err != nil {
			if !r.drained {
				r.drained = true
				r.book.wait(DrainLimit)
			}
			return 0, r.err
		}
		r.next()
		r.admit()
	}
	n := copy(p, r.pending)
	r.pending = r.pending[n:]
	return n, nil
}

// next reads the next line into pending, or discards it and answers for
// it when it is too long.
func (r *boundedReader) next() {
	if cap(r.line) > 1<<20 {
		r.line = nil // do not keep a large buffer after a large message
	}
	r.line = r.line[:0]
	for {
		chunk, err := r.src.ReadSlice('\n')
		size := len(r.line) + len(chunk)
		if err == nil {
			size-- // the newline
		}
		if size > r.max {
			r.reject(chunk, err)
			return
		}
		r.line = append(r.line, chunk...)
		switch {
		case err == nil:
			r.pending = r.line
			return
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			// End of input (or a read error) after a last line without a
			// newline: hand it out as it is, then the error.
			r.pending, r.err = r.line, err
			return
		}
	}
}

// reject answers for an oversized line and reads the rest of it away
// without keeping it. chunk and err are the last ReadSlice's.
func (r *boundedReader) reject(chunk []byte, err error) {
	size := int64(len(r.line) + len(chunk))
	head := r.line
	if len(head) < idScanBytes {
		head = append(head, chunk[:min(len(chunk), idScanBytes-len(head))]...)
	}
	id := requestID(head[:min(len(head), idScanBytes)])
	r.line = head[:0]
	// Answer now: the host need not wait for the rest of a huge line.
	if err == nil {
		r.answer(id, fmt.Sprintf("%d bytes", size-1))
	} else {
		r.answer(id, fmt.Sprintf("over %d bytes", r.max))
	}
	for errors.Is(err, bufio.ErrBufferFull) {
		_, err = r.src.ReadSlice('\n')
	}
	if err != nil {
		r.err = err
	}
}

func (r *boundedReader) answer(id json.RawMessage, size string) {
	r.answerError(id, -32600, fmt.Sprintf("message too large (%s): cgcat reads JSON-RPC messages of at most %d bytes; this one was discarded unread", size, r.max))
}

// answerError writes a JSON-RPC error answer for id (null when nil).
func (r *boundedReader) answerError(id json.RawMessage, code int, msg string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	line, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   rpcError        `json:"error"`
	}{"2.0", id, rpcError{Code: code, Message: msg}})
	_, _ = r.out.Write(append(line, '\n'))
}

// admit looks at the line about to be handed out: a request is booked
// (its answer is waited for at end of input), and a line encoding/json
// cannot read whose id can be recovered is answered here and dropped.
func (r *boundedReader) admit() {
	line := bytes.TrimRight(r.pending, "\r\n")
	if len(bytes.TrimSpace(line)) == 0 {
		return
	}
	if json.Valid(line) {
		t := scanTop(line)
		switch {
		case t.method && t.id != nil:
			r.book.asked(idKey(t.id))
		case t.method && bytes.Contains(line, []byte(`"notifications/cancelled"`)):
			// The client gave the request up: it waits for no answer.
			var n struct {
				Method string `json:"method"`
				Params struct {
					RequestID json.RawMessage `json:"requestId"`
				} `json:"params"`
			}
			if json.Unmarshal(line, &n) == nil && n.Method == "notifications/cancelled" && len(n.Params.RequestID) > 0 {
				r.book.answered(idKey(n.Params.RequestID))
			}
		}
		return
	}
	t := scanTop(line)
	if !t.complete || t.id == nil {
		return // mcp-go answers a parse error with id null
	}
	var v json.RawMessage
	err := json.Unmarshal(line, &v)
	var se *json.SyntaxError
	at := int64(-1)
	if errors.As(err, &se) {
		at = se.Offset
	}
	if err != nil && strings.Contains(err.Error(), "exceeded max depth") {
		r.answerError(t.id, -32600, fmt.Sprintf("invalid request: JSON nested deeper than %d levels (at byte %d); cgcat reads requests nested at most that deep, and this one was not run", maxJSONDepth, at))
	} else {
		r.answerError(t.id, -32700, fmt.Sprintf("parse error at byte %d: %v; this request was not run", at, err))
	}
	r.pending = nil
}

// maxJSONDepth is encoding/json's nesting limit (mcp-go parses with it).
const maxJSONDepth = 10000

// answerBook counts the requests handed to mcp-go and not answered yet.
type answerBook struct {
	mu   sync.Mutex
	open map[string]int // by idKey
	n    int
	idle chan struct{} // closed while n == 0
}

func newAnswerBook() *answerBook {
	b := &answerBook{open: map[string]int{}, idle: make(chan struct{})}
	close(b.idle)
	return b
}

func (b *answerBook) asked(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.n == 0 {
		b.idle = make(chan struct{})
	}
	b.open[key]++
	b.n++
}

// saw books the answer a written message is (a response: an id, a result
// or an error, and no method).
func (b *answerBook) saw(p []byte) {
	b.mu.Lock()
	none := b.n == 0
	b.mu.Unlock()
	if none {
		return
	}
	t := scanTop(bytes.TrimRight(p, "\r\n"))
	if t.method || !t.response || t.id == nil {
		return
	}
	b.answered(idKey(t.id))
}

// answered books one answer (or a cancellation) for key.
func (b *answerBook) answered(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.open[key] == 0 {
		return
	}
	if b.open[key]--; b.open[key] == 0 {
		delete(b.open, key)
	}
	if b.n--; b.n == 0 {
		close(b.idle)
	}
}

// wait waits until every request booked was answered, at most d.
func (b *answerBook) wait(d time.Duration) {
	b.mu.Lock()
	idle := b.idle
	b.mu.Unlock()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-idle:
	case <-t.C:
	}
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// requestID returns the top-level "id" of the JSON object that head begins,
// if it is a string or a number that appears within head; nil otherwise.
func requestID(head []byte) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(head))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil // a value cut off by the end of head: the id is not in reach
		}
		if k != "id" {
			continue
		}
		switch {
		case len(v) > 0 && v[0] == '"', len(v) > 0 && (v[0] == '-' || v[0] >= '0' && v[0] <= '9'):
			return v
		}
		return nil
	}
	return nil
}
