package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
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
// every message with one Write). Shorter lines and end-of-input pass
// through unchanged, so closing stdin still ends the server at once.
func BoundStdio(in io.Reader, out io.Writer, max int) (io.Reader, io.Writer) {
	w := &lineWriter{w: out}
	return &boundedReader{src: bufio.NewReaderSize(in, 64<<10), out: w, max: max}, w
}

// lineWriter makes each Write one uninterrupted write on w.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// boundedReader hands out whole lines of at most max bytes (newline
// excluded) and drops longer ones.
type boundedReader struct {
	src     *bufio.Reader
	out     *lineWriter
	max     int
	line    []byte // the line being read, then handed out from pending
	pending []byte // what Read still has to return of the current line
	err     error  // returned once pending is empty
}

func (r *boundedReader) Read(p []byte) (int, error) {
	for len(r.pending) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		r.next()
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
	if id == nil {
		id = json.RawMessage("null")
	}
	msg := fmt.Sprintf("message too large (%s): cgcat reads JSON-RPC messages of at most %d bytes; this one was discarded unread", size, r.max)
	line, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   rpcError        `json:"error"`
	}{"2.0", id, rpcError{Code: -32600, Message: msg}})
	_, _ = r.out.Write(append(line, '\n'))
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
