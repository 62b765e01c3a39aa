package scriptedmodel

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// Server is the scripted model on an httptest server (127.0.0.1 only).
type Server struct {
	URL string // http://127.0.0.1:PORT, no trailing slash

	hs    *httptest.Server
	mu    sync.Mutex
	turns []Turn
	calls int
	// Unhandled lists requests to paths no wire answers (for diagnostics).
	unhandled []string
	// DumpDir, when set, receives every request body (for debugging a
	// host's wire format).
	DumpDir     string
	beforeReply func(*Turn)
}

// BeforeReply sets fn to see each request with its reply decided, before
// the reply goes out: a test acts there at a chosen point of a session
// (checks a process, kills one). nil removes it.
func (s *Server) BeforeReply(fn func(*Turn)) {
	s.mu.Lock()
	s.beforeReply = fn
	s.mu.Unlock()
}

// Start starts a scripted model server; Close stops it.
func Start() *Server {
	s := &Server{}
	s.hs = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.hs.URL
	return s
}

// Close stops the server.
func (s *Server) Close() { s.hs.Close() }

// Turns returns every request answered so far.
func (s *Server) Turns() []Turn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.turns)
}

// Unhandled returns the requests no wire protocol answered.
func (s *Server) Unhandled() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.unhandled)
}

// Reset forgets the recorded turns.
func (s *Server) Reset() {
	s.mu.Lock()
	s.turns, s.unhandled = nil, nil
	s.mu.Unlock()
}

func (s *Server) record(t Turn) {
	t.At = time.Now()
	s.mu.Lock()
	fn := s.beforeReply
	s.mu.Unlock()
	if fn != nil {
		fn(&t)
	}
	s.mu.Lock()
	s.turns = append(s.turns, t)
	s.mu.Unlock()
}

func (s *Server) nextID(prefix string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	return fmt.Sprintf("%s_%d", prefix, s.calls)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	p := r.URL.Path
	if s.DumpDir != "" {
		name := filepath.Join(s.DumpDir, s.nextID("req")+strings.NewReplacer("/", "_", ":", "_").Replace(p)+".json")
		_ = os.WriteFile(name, body, 0o644)
	}
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(p, "/responses"):
		s.responses(w, body)
	case r.Method == http.MethodPost && strings.HasSuffix(p, "/chat/completions"):
		s.chat(w, body)
	case r.Method == http.MethodPost && strings.HasSuffix(p, "/messages/count_tokens"):
		writeJSON(w, map[string]any{"input_tokens": 100})
	case r.Method == http.MethodPost && strings.HasSuffix(p, "/messages"):
		s.messages(w, body)
	case r.Method == http.MethodPost && strings.Contains(p, ":streamGenerateContent"):
		s.gemini(w, body, p, true)
	case r.Method == http.MethodPost && strings.Contains(p, ":generateContent"):
		s.gemini(w, body, p, false)
	case r.Method == http.MethodPost && strings.Contains(p, ":countTokens"):
		writeJSON(w, map[string]any{"totalTokens": 100})
	case r.Method == http.MethodGet && strings.HasSuffix(p, "/models"):
		writeJSON(w, map[string]any{"object": "list", "data": []any{}, "models": []any{}})
	default:
		s.mu.Lock()
		s.unhandled = append(s.unhandled, r.Method+" "+r.URL.String())
		s.mu.Unlock()
		http.Error(w, "the scripted model does not serve "+p, http.StatusNotFound)
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// sse writes server-sent events; event may be "" (data only).
type sse struct {
	w http.ResponseWriter
}

func newSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return &sse{w: w}
}

func (e *sse) send(event string, data any) {
	var b []byte
	if s, ok := data.(string); ok {
		b = []byte(s)
	} else {
		b, _ = json.Marshal(data)
	}
	if event != "" {
		fmt.Fprintf(e.w, "event: %s\n", event)
	}
	fmt.Fprintf(e.w, "data: %s\n\n", b)
	if f, ok := e.w.(http.Flusher); ok {
		f.Flush()
	}
}

func argsJSON(a map[string]any) string {
	b, _ := json.Marshal(a)
	return string(b)
}

// text returns the text parts of a content value: a string, or a list of
// parts with "text" members (any wire's shape).
func text(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []any:
		var parts []string
		for _, p := range x {
			if t := text(p); t != "" {
				parts = append(parts, t)
			}
		}
		return strings.Join(parts, "\n")
	case map[string]any:
		if t, ok := x["text"].(string); ok {
			return t
		}
		if c, ok := x["content"]; ok {
			return text(c)
		}
	}
	return ""
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

func raw(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}
