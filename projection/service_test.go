package projection

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cgcat/cgcat/gbrain"
	"github.com/cgcat/cgcat/gbrain/gbraintest"
	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/lease"
	"github.com/cgcat/cgcat/local/store"
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
	return ServiceOptions{RoundEvery: 300 * time.Millisecond, LeaseEvery: 50 * time.Millisecond, Poll: 20 * time.Millisecond,
		KeepAlive: 100 * time.Millisecond, RetryMin: 20 * time.Millisecond, RetryMax: 100 * time.Millisecond,
		SlowDial: 5 * time.Second, HandshakeTimeout: 10 * time.Second, CallTimeout: 5 * time.Second}
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

// The service projects and mirrors in short rounds: between them no GBrain
// process of its own is left running (a PGLite brain is free), every round
// records the contact every host reads, and a second process on the same
// data dir never connects at all.
func TestServiceRoundsAreShortAndLeaveTheBrainFree(t *testing.T) {
	t.Parallel()
	e := newProcessEnv(t, 3)
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	// Start returns while its first round still waits for GBrain: here a
	// GBrain that takes an hour to start, with an hour allowed for the
	// handshake, so a Start that waited for it would hang the test.
	held := fastService()
	held.HandshakeTimeout = time.Hour
	e.fake.SetControl(t, gbraintest.Control{StartDelayMs: int(time.Hour / time.Millisecond)})
	heldCtx, stopHeld := context.WithCancel(ctx)
	first := StartWith(heldCtx, e.cfg, e.st, e.pol, nil, held)
	waitFor(t, "the first service to dial", 15*time.Second, func() bool { return first.conn.Dials() >= 1 })
	stopHeld()
	<-first.Done()
	e.fake.SetControl(t, gbraintest.Control{})
	s := StartWith(ctx, e.cfg, e.st, e.pol, nil, fastService())
	if s.Recall() != nil {
		t.Fatal("without semanticSearch GBrain is not on the query path: no recall")
	}
	waitFor(t, "the first round", 15*time.Second, func() bool {
		return e.depth() == 0 && len(e.listed()) == 3 && len(e.mirror()) == 3
	})
	if st := s.Status(); !st.Projecting {
		t.Fatalf("status: %+v", st)
	}
	// Between rounds every fake process this service started has exited.
	waitFor(t, "several rounds, each on its own short connection", 15*time.Second, func() bool {
		return s.Status().Rounds >= 3 && len(e.fake.Starts(t)) >= 2
	})
	waitFor(t, "the brain free between rounds", 10*time.Second, func() bool {
		for _, st := range e.fake.Starts(t) {
			if alive(st.PID) {
				return false
			}
		}
		return true
	})
	var contact local.GBrainContact
	_ = e.st.View(e.ctx, func(r *store.Reader) error { contact = r.GBrainContact(); return nil })
	if !contact.OK || time.Since(contact.At) > time.Minute {
		t.Fatalf("the rounds record GBrain's contact: %+v", contact)
	}
	// A change noticed through the store's revision file goes out at once.
	target := e.record("pkg-0001")
	writePkg(t, target.Root, "pkg-0001", "a brand new purpose")
	e.rescan()
	waitFor(t, "the changed card", 10*time.Second, func() bool {
		return strings.Contains(e.fake.Content(t, testSource, e.slug(target.ID)), "a brand new purpose")
	})
	waitFor(t, "the changed card mirrored", 10*time.Second, func() bool {
		c := e.mirror()[e.slug(target.ID)]
		return c != nil && c.Description == "a brand new purpose"
	})
	// A second process on the same data dir: no lease, no connection.
	ctx2, cancel2 := context.WithCancel(e.ctx)
	s2 := StartWith(ctx2, e.cfg, e.st, e.pol, nil, e.service(fastService()))
	select {
	case <-s2.MirrorReady():
	case <-time.After(5 * time.Second):
		t.Fatal("a non-holder must not hold discovery back")
	}
	time.Sleep(time.Second)
	if st := s2.Status(); st.Projecting || st.Dials != 0 || st.Rounds != 0 {
		t.Fatalf("a process without the lease talked to GBrain: %+v", st)
	}
	cancel2()
	<-s2.Done()
	if held, _ := lease.Holder(LeasePath(e.cfg.DataDir)); !held {
		t.Fatal("the first service should still hold the projector lease")
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
}

func TestServiceBrainLockedIsRetriedAndReported(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	e.fake.SetControl(t, gbraintest.Control{ExitAtStart: "pglite"})
	var logs syncBuf
	log := slog.New(slog.NewTextHandler(&logs, nil))
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	s := StartWith(ctx, e.cfg, e.st, e.pol, log, e.service(fastService()))
	waitFor(t, "several dial attempts", 10*time.Second, func() bool { return s.conn.Dials() >= 4 })
	out := logs.String()
	if n := strings.Count(out, "GBrain cannot start"); n != 1 {
		t.Fatalf("the PGLite message must be logged once (got %d):\n%s", n, out)
	}
	if !strings.Contains(out, "serve --http") || !strings.Contains(s.Status().LastErr, "already open") {
		t.Fatalf("the fix must be told: %s", out)
	}
	var contact local.GBrainContact
	_ = e.st.View(e.ctx, func(r *store.Reader) error { contact = r.GBrainContact(); return nil })
	if contact.OK || !strings.Contains(contact.Error, "already open") {
		t.Fatalf("every host must see that GBrain is held: %+v", contact)
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

// A brain held by another gbrain command makes GBrain wait silently before
// it answers: the service says so at once, in the log and in the contact
// every answer shows, and carries on when GBrain answers.
func TestServiceSilentDialIsReported(t *testing.T) {
	t.Parallel()
	e := newProcessEnv(t, 1)
	e.fake.SetControl(t, gbraintest.Control{StartDelayMs: 2500})
	var logs syncBuf
	log := slog.New(slog.NewTextHandler(&logs, nil))
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	opt := e.service(fastService())
	opt.SlowDial = 300 * time.Millisecond
	s := StartWith(ctx, e.cfg, e.st, e.pol, log, opt)
	waitFor(t, "the silent dial reported", 2*time.Second, func() bool {
		var c local.GBrainContact
		_ = e.st.View(e.ctx, func(r *store.Reader) error { c = r.GBrainContact(); return nil })
		return !c.OK && strings.Contains(c.Error, "has not answered") && strings.Contains(logs.String(), "has not answered")
	})
	e.fake.SetControl(t, gbraintest.Control{})
	waitFor(t, "the card once GBrain answered", 15*time.Second, func() bool { return e.depth() == 0 })
	cancel()
	<-s.Done()
}

// A fresh store (a lost catalog): the service refreshes the mirror before
// discovery may mint ids; MirrorReady says when.
func TestServicePrimesTheMirrorOfAFreshStore(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 2)
	p := e.projector()
	e.drain(p)
	ids := map[string]string{}
	for _, r := range e.records() {
		ids[r.Meta.Name] = r.ID
	}
	p.Release()
	e.conn.Close()
	e.loseCatalog()
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	s := StartWith(ctx, e.cfg, e.st, e.pol, nil, e.service(fastService()))
	select {
	case <-s.MirrorReady():
	case <-time.After(15 * time.Second):
		t.Fatal("the first mirror refresh did not end")
	}
	if n := len(e.mirror()); n != 2 {
		t.Fatalf("mirror when discovery may start: %d cards", n)
	}
	e.rescan()
	for _, r := range e.records() {
		if ids[r.Meta.Name] != r.ID {
			t.Fatalf("%s came back as %s, not %s", r.Meta.Name, r.ID, ids[r.Meta.Name])
		}
	}
	waitFor(t, "the drain after the rescan", 15*time.Second, func() bool { return e.depth() == 0 })
	if got := len(e.listed()); got != 2 {
		t.Fatalf("%d cards for 2 projects", got)
	}
	cancel()
	<-s.Done()
}

func TestServiceDisabled(t *testing.T) {
	t.Parallel()
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

// Start never waits for GBrain: with a GBrain that does not answer at all
// (its dial held until the test lets it go), Start returns, and the service
// connects once GBrain answers.
func TestServiceStartNeverWaitsForGBrain(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	release := make(chan struct{})
	dial := e.dialer(e.opts)
	opt := fastService()
	opt.Dial = func(ctx context.Context) (gbrain.Brain, error) {
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return dial(ctx)
	}
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	started := make(chan *Service, 1)
	go func() { started <- StartWith(ctx, e.cfg, e.st, e.pol, nil, opt) }()
	var s *Service
	select {
	case s = <-started:
	case <-time.After(time.Minute):
		t.Fatal("Start waited for a GBrain that does not answer")
	}
	close(release)
	waitFor(t, "the card once GBrain answers", 15*time.Second, func() bool { return e.depth() == 0 })
	cancel()
	<-s.Done()
}
