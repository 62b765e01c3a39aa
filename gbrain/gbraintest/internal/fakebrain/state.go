// Package fakebrain is the page store and tool semantics of the fake GBrain
// server (../../fakegbrain), kept apart from its MCP wiring so that test
// helpers can act on the same state directly — the way a person editing a
// page in another GBrain client would. It follows what was measured on
// GBrain 0.46.28.0; the tests in package gbraintest hold it to that.
//
// State lives in a [Store]: one JSON file guarded by an flock on
// "<file>.lock", so several fake processes (and a test) share it and a
// restarted fake sees what the previous one wrote; or memory, for the
// in-process fake.
//
// It speaks no protocol and listens on nothing (package fakeserver does);
// being internal to gbraintest, only the fake and gbraintest's test helpers
// can import it, never cgcat itself.
package fakebrain

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// KV is one frontmatter entry, in order.
type KV struct {
	K string `json:"k"`
	V any    `json:"v"` // JSON scalar or []any, numbers as float64 (as in JavaScript)
}

// Page is one stored page.
type Page struct {
	ID          int      `json:"id"`
	Source      string   `json:"source"`
	Slug        string   `json:"slug"`
	Type        string   `json:"type"`
	Title       string   `json:"title"`
	Body        string   `json:"body"`        // compiled_truth, trimmed
	Frontmatter []KV     `json:"frontmatter"` // as written (order kept), minus type, title, tags, slug
	Tags        []string `json:"tags"`        // stored tags: only grow through put_page, sorted
	ContentHash string   `json:"content_hash"`
	CreatedAt   string   `json:"created_at"`
	UpdatedAt   string   `json:"updated_at"`
	DeletedAt   string   `json:"deleted_at,omitempty"`
	CreatedSeq  int64    `json:"created_seq"`
	UpdatedSeq  int64    `json:"updated_seq"`
	// UpdatedMicro is updated_at in Unix µs (Postgres keeps µs; GBrain's
	// answers show ms): list_pages' updated_after compares it.
	UpdatedMicro int64 `json:"updated_micro,omitempty"`
	Versions     int   `json:"versions"` // snapshots: one per real overwrite
}

// Start records one fake process start, so tests can check what the client
// passed to its child.
type Start struct {
	PID       int      `json:"pid"`
	Source    string   `json:"source"`     // the source the server resolved
	EnvSource string   `json:"env_source"` // GBRAIN_SOURCE as received
	EnvBrain  string   `json:"env_brain"`  // GBRAIN_BRAIN_ID as received
	SkipHooks string   `json:"skip_hooks"` // GBRAIN_SKIP_STARTUP_HOOKS as received
	Cwd       string   `json:"cwd"`
	Args      []string `json:"args"`
}

// State is the whole fake brain.
type State struct {
	NextID  int            `json:"next_id"`
	Seq     int64          `json:"seq"`
	Pages   []*Page        `json:"pages"`
	Sources []string       `json:"sources,omitempty"` // added with sources_add
	Calls   map[string]int `json:"calls"`
	Starts  []Start        `json:"starts,omitempty"`

	// HTTP side (`serve --http`): OAuth clients, their access tokens,
	// static tokens, and counts.
	Clients []*OAuthClient `json:"clients,omitempty"`
	Tokens  []*AccessToken `json:"tokens,omitempty"`
	Legacy  []*LegacyToken `json:"legacy,omitempty"`
	HTTP    HTTPStats      `json:"http"`
	// LastMicro is the last updated_at handed out (Unix µs): every write
	// gets a later one, as Postgres' now() in separate transactions does.
	LastMicro int64 `json:"last_micro,omitempty"`

	index    map[string]*Page   // source \x00 slug → page
	listings map[string][]*Page // sorted listings by source, tag and sort, until the next change
}

// Find returns the page of (source, slug), deleted or not.
func (s *State) Find(source, slug string) *Page {
	if len(s.index) != len(s.Pages) {
		s.Reindex()
	}
	return s.index[source+"\x00"+slug]
}

// add stores a new page.
func (s *State) add(p *Page) {
	s.Pages = append(s.Pages, p)
	if s.index != nil && len(s.index) == len(s.Pages)-1 {
		s.index[p.Source+"\x00"+p.Slug] = p
	}
	s.touch()
}

// Reindex drops what the state derived from its pages (the slug index and
// the sorted listings); call it after changing a page in place.
func (s *State) Reindex() {
	s.index = make(map[string]*Page, len(s.Pages))
	for _, p := range s.Pages {
		s.index[p.Source+"\x00"+p.Slug] = p
	}
	s.listings = nil
}

// touch drops the sorted listings after a change.
func (s *State) touch() { s.listings = nil }

// Clone is a deep copy of the page (a test may keep it).
func (p *Page) Clone() *Page {
	c := *p
	c.Tags = append([]string(nil), p.Tags...)
	c.Frontmatter = append([]KV(nil), p.Frontmatter...)
	return &c
}

// Store is where a fake brain's state lives: a file shared by several fake
// processes and the test (each access locks it, loads it and saves it), or
// memory in one process (an in-process fake, or a fake process in memory
// mode). Safe for concurrent use.
type Store struct {
	path string // file store; "" for memory only
	mu   sync.Mutex
	mem  *State // memory store
}

// FileStore is the state kept in the file at path (a missing file is an
// empty brain).
func FileStore(path string) *Store { return &Store{path: path} }

// MemoryStore is a state kept in memory only, starting empty.
func MemoryStore() *Store { return &Store{mem: &State{Calls: map[string]int{}}} }

// LoadMemoryStore loads the file at path once and then keeps the brain in
// memory, never saving it (GBRAIN_FAKE_MEMORY=1, benchmarks): a call costs
// what the tool costs and not a rewrite of the whole file. Changes made
// through the file by tests are not seen, and the process's own changes do
// not reach the file: write through the tools instead.
func LoadMemoryStore(path string) (*Store, error) {
	st, err := load(path)
	if err != nil {
		return nil, err
	}
	return &Store{mem: st}, nil
}

// MemoryMode reports whether GBRAIN_FAKE_MEMORY=1.
func MemoryMode() bool { return os.Getenv("GBRAIN_FAKE_MEMORY") == "1" }

// InMemory reports whether the state lives in memory.
func (s *Store) InMemory() bool { return s.mem != nil }

// Update lets fn change the state under an exclusive lock; a file store
// saves it atomically when fn returns nil. (A memory store keeps fn's
// changes even when it fails: tools make theirs only once they succeed.)
func (s *Store) Update(fn func(*State) error) error {
	if s.mem != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		return fn(s.mem)
	}
	unlock, err := lock(s.path)
	if err != nil {
		return err
	}
	defer unlock()
	st, err := load(s.path)
	if err != nil {
		return err
	}
	if err := fn(st); err != nil {
		return err
	}
	return save(s.path, st)
}

// View lets fn read the state under the lock, without saving. fn must not
// keep pointers into it (a memory store's state changes afterwards).
func (s *Store) View(fn func(*State) error) error {
	if s.mem != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		return fn(s.mem)
	}
	unlock, err := lock(s.path)
	if err != nil {
		return err
	}
	defer unlock()
	st, err := load(s.path)
	if err != nil {
		return err
	}
	return fn(st)
}

func load(path string) (*State, error) {
	st := &State{Calls: map[string]int{}}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) || (err == nil && len(b) == 0) {
		return st, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, st); err != nil {
		return nil, fmt.Errorf("fake gbrain state %s: %w", path, err)
	}
	if st.Calls == nil {
		st.Calls = map[string]int{}
	}
	return st, nil
}

func save(path string, st *State) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".state-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Control holds the fault switches, read from the control file (path in
// GBRAIN_FAKE_CONTROL) at start-up and again at every call, so a test can
// change them while the server runs.
type Control struct {
	// DelayMs delays every call of DelayTools (all tools when empty) before
	// it is applied; a client that times out leaves the write to land later.
	DelayMs    int      `json:"delay_ms,omitempty"`
	DelayTools []string `json:"delay_tools,omitempty"`
	// DelaysMs delays each call of a tool by its own time (benchmarks: a
	// GBrain's latency per tool), as DelayMs does.
	DelaysMs map[string]int `json:"delays_ms,omitempty"`
	// HoldTools: a call of these tools waits, before it is applied, until
	// the switch no longer lists it (a test releases it when it chooses: a
	// client's timeout surely fires first, whatever the machine's load).
	HoldTools []string `json:"hold_tools,omitempty"`
	// DropBeforeApply / DropAfterApply: the process exits (code 2) on a call
	// of these tools without applying it / after applying and saving it,
	// never answering.
	DropBeforeApply []string `json:"drop_before_apply,omitempty"`
	DropAfterApply  []string `json:"drop_after_apply,omitempty"`
	// Garbage: these tools answer a text block that is not JSON (after
	// applying).
	Garbage []string `json:"garbage,omitempty"`
	// StrictParams: an unknown parameter is an invalid_params error instead
	// of a warning block (GBrain's mcp.strict_params: reject).
	StrictParams bool `json:"strict_params,omitempty"`
	// ExitAtStart: "pglite" exits with code 1 and PGLite's "already open"
	// message before answering initialize; "crash" exits with code 3.
	ExitAtStart string `json:"exit_at_start,omitempty"`
	// StartDelayMs delays serving (GBrain waiting for a brain held by another
	// gbrain command): looks like a handshake timeout.
	StartDelayMs int `json:"start_delay_ms,omitempty"`
	// TokenStatus makes the HTTP token endpoint answer this status without
	// minting a token: 429 (rate limited) or 503 (down).
	TokenStatus int `json:"token_status,omitempty"`
	// ExpireTokensBefore: the next HTTP call of one of these tools first
	// expires every access token issued so far (as if its time ran out just
	// then), so it is refused with 401 before it runs. One shot: the tool
	// is removed from the list when it fires.
	ExpireTokensBefore []string `json:"expire_tokens_before,omitempty"`
}

// Controls is where a fake reads its fault switches (and writes back a
// one-shot switch that fired).
type Controls interface {
	Read() (Control, error)
	Write(Control) error
}

// ControlFile is the fault switches in a file (GBRAIN_FAKE_CONTROL),
// re-read at every call so a test changes them while fakes run.
type ControlFile string

func (f ControlFile) Read() (Control, error) { return ReadControl(string(f)) }
func (f ControlFile) Write(c Control) error {
	if f == "" {
		return nil
	}
	return WriteControl(string(f), c)
}

// ControlMemory is the fault switches of an in-process fake.
type ControlMemory struct {
	mu sync.Mutex
	c  Control
}

func (m *ControlMemory) Read() (Control, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.c
	c.DelayTools = append([]string(nil), c.DelayTools...)
	c.HoldTools = append([]string(nil), c.HoldTools...)
	c.DropBeforeApply = append([]string(nil), c.DropBeforeApply...)
	c.DropAfterApply = append([]string(nil), c.DropAfterApply...)
	c.Garbage = append([]string(nil), c.Garbage...)
	c.ExpireTokensBefore = append([]string(nil), c.ExpireTokensBefore...)
	return c, nil
}

func (m *ControlMemory) Write(c Control) error {
	m.mu.Lock()
	m.c = c
	m.mu.Unlock()
	return nil
}

// ReadControl reads the control file; a missing or empty path or file is
// no faults.
func ReadControl(path string) (Control, error) {
	var c Control
	if path == "" {
		return c, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) || (err == nil && len(b) == 0) {
		return c, nil
	}
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("fake gbrain control %s: %w", path, err)
	}
	return c, nil
}

// WriteControl replaces the control file atomically.
func WriteControl(path string, c Control) error {
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
