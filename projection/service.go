package projection

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/cgcat/cgcat/gbrain"
	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/catalog"
	"github.com/cgcat/cgcat/local/config"
	"github.com/cgcat/cgcat/local/store"
)

// ServiceOptions tune a Service; zero fields take the defaults.
type ServiceOptions struct {
	// RoundEvery is how often the lease holder runs a full round: sweep,
	// drain, mirror refresh, and the GBrain contact every host reads
	// (60 s: with server's 3-minute freshness, gbrainState stays ok
	// while GBrain answers).
	RoundEvery time.Duration
	// LeaseEvery is how often a process without the projector lease tries
	// to take it (10 s).
	LeaseEvery time.Duration
	// Poll is how often the store's revision file is looked at: a change
	// with rows in the outbox starts a drain at once (1 s).
	Poll time.Duration
	// KeepAlive is how long a stdio connection stays open after a round (5
	// s; gbrain.keepAliveSeconds); then it is closed, so a PGLite brain is
	// free between rounds. An HTTP connection stays open.
	KeepAlive time.Duration
	// RetryMin and RetryMax bound the backoff after a failed round (5 s,
	// 2 min).
	RetryMin, RetryMax time.Duration
	// SlowDial is how long a dial may stay silent before it is reported
	// (5 s): a brain held by another gbrain command delays GBrain's answer
	// by up to 30 s without a word.
	SlowDial time.Duration
	// MirrorBudget bounds the reads of a mirror refresh (30 s; the rest is
	// read next round). Taking a lost catalog's ids back has no budget: it
	// ends when this machine's cards were read, or GBrain failed.
	MirrorBudget time.Duration
	// HandshakeTimeout and CallTimeout go to gbrain.Options.
	HandshakeTimeout, CallTimeout time.Duration
	// Connection, when set, replaces the one the config names (tests).
	Connection *gbrain.Connection
	// Dial, when set, replaces both (tests: an in-process fake); DialKeepOpen
	// treats its connection as HTTP's (kept between rounds).
	Dial         Dialer
	DialKeepOpen bool
	// MirrorReady, when set, is closed once discovery need not wait for the
	// mirror any more (see Service.MirrorReady).
	MirrorReady chan struct{}
}

// ServiceStatus is a snapshot of the background service.
type ServiceStatus struct {
	Enabled    bool
	Connected  bool
	Projecting bool // holds the projector lease
	LastErr    string
	LastDrain  *Report
	LastMirror *MirrorReport
	Rounds     int // networked rounds run
	Dials      int
}

// Service is GBrain inside `cgcat serve`. Only the process holding the
// projector lease talks to GBrain at all: it connects for a round — a
// drain when the outbox has rows, and every RoundEvery a sweep, a drain and
// a mirror refresh — and over stdio disconnects KeepAlive after it, so a
// PGLite brain is free between rounds. Every networked round records the
// GBrain contact that every host and CLI twin reads as gbrainState. A
// failed round (GBrain down, its brain held by another process) is retried
// with backoff and reported, never waited on in silence. Other processes
// answer from the mirror their holder keeps, and never connect. The service
// stops when the ctx given to Start ends; that closes only its own GBrain
// child (stdin first).
type Service struct {
	enabled bool
	cfg     *config.Config
	st      *store.Store
	log     *slog.Logger
	opt     ServiceOptions
	conn    *Conn
	proj    *Projector
	recall  *Recaller
	done    chan struct{}
	ready   chan struct{}
	readyMu sync.Once

	mu         sync.Mutex
	lastErr    error
	lastDrain  *Report
	lastMirror *MirrorReport
	holding    bool
	rounds     int
	kick       chan struct{}
	lastUse    time.Time
	// lastContact is what this process last recorded of GBrain.
	lastContact local.GBrainContact
	retiredSaid bool
	// later counts the contacts recall records in the background; the
	// service is Done only once they ended.
	later       sync.WaitGroup
	laterClosed bool // under mu: no more background contact
}

// Start runs the service for cfg; with GBrain off it returns a Service that
// does nothing and whose Recall is nil. It never blocks on GBrain.
func Start(ctx context.Context, cfg *config.Config, st *store.Store, pol catalog.Source, log *slog.Logger) *Service {
	return StartWith(ctx, cfg, st, pol, log, ServiceOptions{})
}

// StartWith is Start with options.
func StartWith(ctx context.Context, cfg *config.Config, st *store.Store, pol catalog.Source, log *slog.Logger, opt ServiceOptions) *Service {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Service{cfg: cfg, st: st, log: log, done: make(chan struct{}), kick: make(chan struct{}, 1), ready: opt.MirrorReady}
	if s.ready == nil {
		s.ready = make(chan struct{})
	}
	if cfg == nil || !cfg.GBrain.Enabled || st == nil {
		s.markReady()
		close(s.done)
		return s
	}
	conn, err := Connection(cfg)
	if opt.Connection != nil || opt.Dial != nil {
		err = nil
		if opt.Connection != nil {
			conn = *opt.Connection
		}
	}
	if err != nil {
		log.Error("GBrain is enabled but its connection is not usable; projection and the mirror are off", "err", err)
		s.lastErr = err
		s.markReady()
		close(s.done)
		return s
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&opt.RoundEvery, time.Duration(max(cfg.GBrain.CheckSeconds, 2))*time.Second)
	def(&opt.LeaseEvery, 10*time.Second)
	def(&opt.Poll, time.Second)
	if opt.KeepAlive == 0 {
		opt.KeepAlive = time.Duration(cfg.GBrain.KeepAliveSeconds) * time.Second
	}
	def(&opt.RetryMin, 5*time.Second)
	def(&opt.RetryMax, 2*time.Minute)
	def(&opt.SlowDial, 5*time.Second)
	def(&opt.MirrorBudget, 30*time.Second)
	s.opt = opt
	s.enabled = true
	newConn := func() *Conn {
		if opt.Dial != nil {
			return NewConnDialer(opt.Dial, opt.DialKeepOpen)
		}
		return NewConnWith(conn, gbrain.Options{
			ExpectedSource:   cfg.GBrain.ExpectedSource,
			ExpectedBrain:    cfg.GBrain.ExpectedBrain,
			HandshakeTimeout: opt.HandshakeTimeout,
			CallTimeout:      opt.CallTimeout,
			Logger:           log,
		})
	}
	s.conn = newConn()
	set := SettingsFrom(cfg, st)
	s.proj = NewProjector(st, pol, set, s.conn, log)
	// Recall and card lookups have a connection of their own in every
	// process, kept open while searches come (the projector's alone is
	// open only for its rounds). Over stdio it is one connection for both:
	// a PGLite brain admits one process, so a second child would lock the
	// projector out (or be locked out).
	rc := s.conn
	if s.conn.HTTP() {
		rc = newConn()
	}
	s.recall = &Recaller{Conn: rc, Store: st, Settings: set,
		Contact: func(err error) { s.contactLater(ctx, err) }}
	if cfg.GBrain.SemanticSearch {
		s.recall.lastUse = time.Now()
		s.recall.Conn.Warm()
	}
	go s.run(ctx)
	return s
}

// recallKeepAlive is how long a stdio recall connection stays open after
// the last search: searches come in bursts, and a PGLite brain is free
// soon after.
const recallKeepAlive = 2 * time.Minute

// Recall is the frontend's GBrain recall: only GBrain's semantic query, and
// only with gbrain.semanticSearch (keyword matches come from the mirror,
// locally). nil otherwise.
func (s *Service) Recall() local.Recall {
	if s == nil || !s.enabled || !s.cfg.GBrain.SemanticSearch {
		return nil
	}
	return s.recall
}

// Lookups is the connection a CardLookup of this process uses (recall's:
// nil when GBrain is off), and where it reports what it learned.
func (s *Service) Lookups() (*Conn, func(error)) {
	if s == nil || !s.enabled {
		return nil, nil
	}
	return s.recall.Conn, s.recall.note
}

// MirrorReady is closed once discovery need not wait for the mirror: at
// once when the store already has records, GBrain is off, or another
// process holds the projector lease; after the first mirror refresh (or its
// failure) when this process primes a fresh store.
func (s *Service) MirrorReady() <-chan struct{} { return s.ready }

func (s *Service) markReady() { s.readyMu.Do(func() { close(s.ready) }) }

// Done is closed once the service has stopped (its GBrain child closed and
// the lease released).
func (s *Service) Done() <-chan struct{} {
	if s == nil {
		c := make(chan struct{})
		close(c)
		return c
	}
	return s.done
}

// Kick asks for a full round soon (when this process holds the lease).
func (s *Service) Kick() {
	if s == nil || !s.enabled {
		return
	}
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// Status is a snapshot for logs and diagnostics.
func (s *Service) Status() ServiceStatus {
	if s == nil {
		return ServiceStatus{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st := ServiceStatus{Enabled: s.enabled, Projecting: s.holding, LastDrain: s.lastDrain, LastMirror: s.lastMirror, Rounds: s.rounds}
	if s.conn != nil {
		st.Connected = s.conn.Current() != nil
		st.Dials = s.conn.Dials()
	}
	if s.lastErr != nil {
		st.LastErr = s.lastErr.Error()
	}
	return st
}
