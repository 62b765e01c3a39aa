package server

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"time"
)

// Cursors (R20) are opaque, signed with the data dir's secret, and point at
// a materialised snapshot of one listing's ordered ids kept in this
// process's memory. A cursor from another process, another query or view,
// a forged one, or one whose snapshot expired is refused: pages of one
// listing never mix snapshots.

var errCursor = errors.New("cursor expired")

type cursorBody struct {
	S string `json:"s"` // snapshot id
	O int    `json:"o"` // offset of the next page
	B uint64 `json:"b"` // binding: query, workspace, limit, view
}

type snapshot struct {
	id       string
	binding  uint64
	list     *listing
	revision uint64
	created  time.Time
}

type cursors struct {
	secret []byte
	ttl    time.Duration
	max    int

	mu    sync.Mutex
	snaps map[string]*snapshot
	order []string
}

func newCursors(secret []byte, ttl time.Duration, max int) *cursors {
	if len(secret) == 0 {
		secret = make([]byte, 32)
		_, _ = rand.Read(secret)
	}
	return &cursors{secret: secret, ttl: ttl, max: max, snaps: map[string]*snapshot{}}
}

func (c *cursors) keep(s *snapshot) {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	s.id = base64.RawURLEncoding.EncodeToString(b)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expire(s.created)
	for len(c.order) >= c.max {
		delete(c.snaps, c.order[0])
		c.order = c.order[1:]
	}
	c.snaps[s.id] = s
	c.order = append(c.order, s.id)
}

func (c *cursors) expire(now time.Time) {
	for len(c.order) > 0 {
		s := c.snaps[c.order[0]]
		if s != nil && now.Sub(s.created) < c.ttl {
			return
		}
		delete(c.snaps, c.order[0])
		c.order = c.order[1:]
	}
}

func (c *cursors) sign(body []byte) string {
	m := hmac.New(sha256.New, c.secret)
	m.Write(body)
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:18])
}

func (c *cursors) encode(s *snapshot, offset int) string {
	body, _ := json.Marshal(cursorBody{S: s.id, O: offset, B: s.binding})
	return base64.RawURLEncoding.EncodeToString(body) + "." + c.sign(body)
}

// open verifies a cursor and returns its snapshot and offset.
func (c *cursors) open(cur string, binding uint64, now time.Time) (*snapshot, int, error) {
	enc, sig, ok := strings.Cut(cur, ".")
	if !ok {
		return nil, 0, errCursor
	}
	body, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil || !hmac.Equal([]byte(sig), []byte(c.sign(body))) {
		return nil, 0, errCursor
	}
	var b cursorBody
	if err := json.Unmarshal(body, &b); err != nil || b.B != binding {
		return nil, 0, errCursor
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expire(now)
	s := c.snaps[b.S]
	if s == nil || s.binding != binding || b.O <= 0 || b.O >= len(s.list.ids) {
		return nil, 0, errCursor
	}
	return s, b.O, nil
}
