package projection

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cgcat/cgcat/gbrain/gbraintest"
	"github.com/cgcat/cgcat/local/lease"
)

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func fastService() ServiceOptions {
	return ServiceOptions{DrainEvery: 200 * time.Millisecond, LeaseEvery: 50 * time.Millisecond, Poll: 20 * time.Millisecond,
		RedialMin: 20 * time.Millisecond, RedialMax: 100 * time.Millisecond, HandshakeTimeout: 10 * time.Second, CallTimeout: 5 * time.Second}
}

func waitFor(t *testing.T, what string, d time.Duration, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestServiceProjectsRecallsAndStops(t *testing.T) {
	e := newEnv(t, 3)
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	start := time.Now()
	s := StartWith(ctx, e.cfg, e.st, e.pol, nil, fastService())
	if time.Since(start) > 100*time.Millisecond {
		t.Fatalf("Start blocked for %s", time.Since(start))
	}
	r := s.Recall()
	if r == nil {
		t.Fatal("an enabled service must offer recall")
	}
	waitFor(t, "the first drain", 15*time.Second, func() bool { return e.depth() == 0 && len(e.listed()) == 3 })
	hits, err := r.Recall(e.ctx, "kw0002", 5)
	if err != nil || len(hits) != 1 || hits[0].ProjectID != e.record("pkg-0002").ID {
		t.Fatalf("recall: %+v %v", hits, err)
	}
	if st := s.Status(); !st.Connected || !st.Projecting {
		t.Fatalf("status: %+v", st)
	}
	// A change noticed through the store's revision file.
	target := e.record("pkg-0001")
	writePkg(t, target.Root, "pkg-0001", "a brand new purpose")
	e.rescan()
	waitFor(t, "the changed card", 10*time.Second, func() bool {
		return strings.Contains(e.fake.Content(t, testSource, e.slug(target.ID)), "a brand new purpose")
	})
	// Another process cannot project meanwhile.
	if held, _ := lease.Holder(LeasePath(e.cfg.DataDir)); !held {
		t.Fatal("the service should hold the projector lease")
	}
	cancel()
	select {
	case <-s.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the service did not stop")
	}
	if held, _ := lease.Holder(LeasePath(e.cfg.DataDir)); held {
		t.Fatal("the lease must be released on stop")
	}
	if _, err := r.Recall(e.ctx, "kw0002", 5); err == nil {
		t.Fatal("recall after stop must fail (degraded)")
	}
}

func TestServiceBrainLockedIsLoggedOnceAndDegrades(t *testing.T) {
	e := newEnv(t, 1)
	e.fake.SetControl(t, gbraintest.Control{ExitAtStart: "pglite"})
	var logs syncBuf
	log := slog.New(slog.NewTextHandler(&logs, nil))
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	s := StartWith(ctx, e.cfg, e.st, e.pol, log, fastService())
	waitFor(t, "several dial attempts", 10*time.Second, func() bool { return s.conn.Dials() >= 4 })
	if _, err := s.Recall().Recall(e.ctx, "widget", 5); err == nil {
		t.Fatal("recall without GBrain must fail so the frontend says degraded")
	}
	out := logs.String()
	if n := strings.Count(out, "GBrain cannot start"); n != 1 {
		t.Fatalf("the PGLite message must be logged once (got %d):\n%s", n, out)
	}
	if !strings.Contains(out, "serve --http") || !strings.Contains(s.Status().LastErr, "already open") {
		t.Fatalf("the fix must be told: %s", out)
	}
	if e.depth() != 1 {
		t.Fatal("the card must wait in the outbox")
	}
	// GBrain becomes available: the card goes out.
	e.fake.SetControl(t, gbraintest.Control{})
	waitFor(t, "the card after GBrain came back", 15*time.Second, func() bool { return e.depth() == 0 })
	cancel()
	<-s.Done()
}

func TestServiceDisabled(t *testing.T) {
	e := newEnv(t, 1)
	e.cfg.GBrain.Enabled = false
	s := Start(e.ctx, e.cfg, e.st, e.pol, nil)
	if s.Recall() != nil {
		t.Fatal("GBrain off: no recall (gbrainState disabled)")
	}
	select {
	case <-s.Done():
	default:
		t.Fatal("a disabled service does nothing")
	}
	var nilService *Service
	if nilService.Recall() != nil {
		t.Fatal("nil service: no recall")
	}
	if len(e.fake.Starts(t)) != 0 {
		t.Fatal("GBrain off: no connection")
	}
}
