package projection

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/cgcat/cgcat/gbrain"
	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/catalog"
	"github.com/cgcat/cgcat/local/config"
	"github.com/cgcat/cgcat/local/lease"
	"github.com/cgcat/cgcat/local/store"
	"github.com/cgcat/cgcat/local/view"
	"github.com/cgcat/cgcat/outbox"
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
	// PrimeBudget bounds the first mirror refresh of a fresh store, which
	// discovery waits for so that ids come back (20 s); MirrorBudget the
	// reads of every other refresh (30 s; the rest is read next round).
	PrimeBudget, MirrorBudget time.Duration
	// HandshakeTimeout and CallTimeout go to gbrain.Options.
	HandshakeTimeout, CallTimeout time.Duration
	// Connection, when set, replaces the one the config names (tests).
	Connection *gbrain.Connection
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
	if opt.Connection != nil {
		conn, err = *opt.Connection, nil
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
	def(&opt.PrimeBudget, 20*time.Second)
	def(&opt.MirrorBudget, 30*time.Second)
	s.opt = opt
	s.enabled = true
	s.conn = NewConnWith(conn, gbrain.Options{
		ExpectedSource:   cfg.GBrain.ExpectedSource,
		ExpectedBrain:    cfg.GBrain.ExpectedBrain,
		HandshakeTimeout: opt.HandshakeTimeout,
		CallTimeout:      opt.CallTimeout,
		Logger:           log,
	})
	set := SettingsFrom(cfg, st)
	s.proj = NewProjector(st, pol, set, s.conn, log)
	s.recall = &Recaller{Conn: s.conn, Store: st, Settings: set}
	if s.conn.HTTP() {
		// Over HTTP a connection is cheap and holds no brain: semantic
		// recall may dial one.
		s.recall.Dial = s.conn.Client
	}
	go s.run(ctx)
	return s
}

// Recall is the frontend's GBrain recall: only GBrain's semantic query, and
// only with gbrain.semanticSearch (keyword matches come from the mirror,
// locally). nil otherwise.
func (s *Service) Recall() local.Recall {
	if s == nil || !s.enabled || !s.cfg.GBrain.SemanticSearch {
		return nil
	}
	return s.recall
}

// Live is the service's connection, for a CardLookup to use while it is
// open (nil when GBrain is off).
func (s *Service) Live() interface{ Current() *gbrain.Client } {
	if s == nil || !s.enabled {
		return nil
	}
	return s.conn
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

func (s *Service) setErr(err error) {
	s.mu.Lock()
	s.lastErr = err
	s.mu.Unlock()
}

func (s *Service) run(ctx context.Context) {
	defer close(s.done)
	defer s.markReady()
	defer func() {
		s.proj.Release()
		_ = s.conn.Close()
	}()
	fresh := s.freshStore(ctx)
	if !fresh {
		s.markReady()
	}
	bo := backoff.NewExponentialBackOff()
	bo.InitialInterval, bo.MaxInterval, bo.MaxElapsedTime = s.opt.RetryMin, s.opt.RetryMax, 0
	tick := time.NewTicker(s.opt.Poll)
	defer tick.Stop()
	var stamp fileStamp
	var nextLease, nextRound, retryAt time.Time
	lastMsg := ""
	for ctx.Err() == nil {
		now := time.Now()
		if !s.proj.Holding() {
			if s.proj.lease != nil { // stolen
				s.proj.Release()
			}
			if !now.Before(nextLease) {
				err := s.proj.TryAcquire(ctx)
				switch {
				case err == nil:
					s.log.Debug("took the projector lease")
					nextRound = now
				case errors.Is(err, lease.ErrHeld):
				default:
					s.log.Warn("cannot take the projector lease", "err", err)
				}
				nextLease = now.Add(s.opt.LeaseEvery)
			}
			if !s.proj.Holding() {
				// Another process holds the lease: its rounds keep the
				// mirror; discovery here need not wait for it.
				s.markReady()
				s.conn.Drop()
			}
		}
		holding := s.proj.Holding()
		s.mu.Lock()
		s.holding = holding
		s.mu.Unlock()
		if holding && !now.Before(retryAt) {
			full := !now.Before(nextRound)
			cur := stampOf(view.PointerFile(s.st.DataDir()))
			if full || cur != stamp {
				err, networked := s.round(ctx, full, fresh)
				stamp = stampOf(view.PointerFile(s.st.DataDir()))
				if ctx.Err() != nil {
					return
				}
				if networked || err != nil {
					s.contact(ctx, err)
				}
				if full && err == nil {
					fresh = false
					nextRound = time.Now().Add(s.opt.RoundEvery)
				}
				if err != nil {
					wait := bo.NextBackOff()
					retryAt = time.Now().Add(wait)
					nextRound = retryAt
					s.setErr(err)
					switch {
					case errors.Is(err, store.ErrFenced) || errors.Is(err, ErrNoLease):
						s.proj.Release()
					case errors.Is(err, gbrain.ErrBrainLocked):
						if lastMsg != err.Error() {
							s.log.Error("GBrain cannot start: its PGLite brain is open in another process; cgcat tries again later (local answers are unaffected; point cgcat at a Postgres-backed brain or `gbrain serve --http` to share it)", "err", err, "retry_in", wait)
						}
					case lastMsg != err.Error():
						s.log.Warn("GBrain round failed; the outbox keeps the cards and the mirror keeps answering", "err", err, "retry_in", wait)
					}
					lastMsg = err.Error()
					s.conn.Drop()
				} else if networked {
					if lastMsg != "" {
						s.log.Info("GBrain answers again")
					}
					lastMsg = ""
					bo.Reset()
					s.setErr(nil)
				}
			}
		}
		// A short connection: closed once idle (over stdio).
		if !s.conn.HTTP() && s.conn.Current() != nil {
			s.mu.Lock()
			idle := time.Since(s.lastUse)
			s.mu.Unlock()
			if idle >= s.opt.KeepAlive {
				s.conn.Drop()
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-s.kick:
			nextRound, retryAt = time.Time{}, time.Time{}
		}
	}
}

// freshStore reports whether the store holds no record yet (a first run,
// or a catalog that was lost): the mirror is then refreshed before
// discovery mints ids, so that this machine's cards give theirs back.
func (s *Service) freshStore(ctx context.Context) bool {
	fresh := false
	_ = s.st.View(ctx, func(r *store.Reader) error {
		fresh = true
		return r.Projects(func(*local.Project) error { fresh = false; return errStop })
	})
	return fresh
}

var errStop = errors.New("stop")

// round runs one round while holding the lease. A drain-only round (the
// store changed) needs GBrain only when the outbox has rows; a full round
// always connects. networked says whether GBrain was asked.
func (s *Service) round(ctx context.Context, full, fresh bool) (err error, networked bool) {
	if !full && s.depth(ctx) == 0 {
		return nil, false
	}
	if err := s.dial(ctx); err != nil {
		if fresh {
			s.markReady()
		}
		return err, true
	}
	// GBrain answered: every host may say so now, not only after the round.
	s.contact(ctx, nil)
	defer func() {
		s.mu.Lock()
		s.lastUse = time.Now()
		s.rounds++
		s.mu.Unlock()
	}()
	if full && fresh {
		// Before the first scan of a fresh store: this machine's cards
		// give their ids back only if discovery sees them.
		mrep, merr := s.proj.RefreshMirror(ctx, MirrorOptions{Budget: s.opt.PrimeBudget})
		s.markReady()
		s.noteMirror(mrep)
		if merr != nil {
			return merr, true
		}
	}
	if full {
		if sw, err := s.proj.Sweep(ctx); err != nil {
			return err, true
		} else if sw.Retract > 0 || sw.Reshare > 0 {
			s.log.Info("GBrain cards to take back or write again", "retract", sw.Retract, "reshare", sw.Reshare)
		}
	}
	rep, err := s.proj.Drain(ctx)
	if rep.Rows > 0 {
		s.mu.Lock()
		r := rep
		s.lastDrain = &r
		s.mu.Unlock()
		s.log.Info("projected GBrain cards", "written", rep.Written, "unchanged", rep.Unchanged, "retracted", rep.Retracted, "conflicts", rep.Conflicts, "remaining", rep.Remaining)
	}
	if err != nil {
		return err, true
	}
	if full && !fresh {
		mrep, err := s.proj.RefreshMirror(ctx, MirrorOptions{Budget: s.opt.MirrorBudget})
		s.noteMirror(mrep)
		if err != nil {
			return err, true
		}
	}
	return nil, true
}

func (s *Service) noteMirror(m MirrorReport) {
	s.mu.Lock()
	s.lastMirror = &m
	s.mu.Unlock()
	if m.Written > 0 || m.Deleted > 0 {
		s.log.Info("GBrain card mirror refreshed", "listed", m.Listed, "read", m.Read, "written", m.Written, "deleted", m.Deleted, "edited", m.Edited)
	}
}

// dial connects (or keeps the live connection), and reports a dial that
// stays silent longer than SlowDial at once, in the log and in the GBrain
// contact every answer shows, instead of waiting in silence.
func (s *Service) dial(ctx context.Context) error {
	if s.conn.Current() != nil {
		return nil
	}
	slow := time.AfterFunc(s.opt.SlowDial, func() {
		msg := fmt.Errorf("GBrain has not answered for %s: its brain may be held by another gbrain command (init, sync, embed), which delays GBrain's start by up to 30 s; cgcat keeps waiting in the background", s.opt.SlowDial)
		s.log.Warn(msg.Error())
		s.contact(ctx, msg)
	})
	_, err := s.conn.Client(ctx)
	slow.Stop()
	return err
}

func (s *Service) depth(ctx context.Context) int {
	n := 0
	_ = s.st.View(ctx, func(r *store.Reader) error { n = outbox.Depth(r); return nil })
	return n
}

// contact records in the store what this process just learned of GBrain,
// so every host and CLI twin tells the same gbrainState. It writes when the
// news differs from what it last wrote, or to keep an "ok" fresh.
func (s *Service) contact(ctx context.Context, err error) {
	ok := err == nil || errors.Is(err, store.ErrFenced) || errors.Is(err, ErrNoLease)
	s.mu.Lock()
	same := s.lastContact.OK == ok && (!ok || time.Since(s.lastContact.At) < time.Minute) && !s.lastContact.At.IsZero()
	s.mu.Unlock()
	if same {
		return
	}
	c := local.GBrainContact{OK: ok, At: time.Now().UTC()}
	if err != nil && !ok {
		c.Error = err.Error()
	}
	wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if werr := s.st.Update(wctx, func(tx *store.Tx) error { tx.PutGBrainContact(c); return nil }); werr == nil {
		s.mu.Lock()
		s.lastContact = c
		s.mu.Unlock()
	}
}

type fileStamp struct {
	mod  time.Time
	size int64
	ok   bool
}

func stampOf(path string) fileStamp {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}
	}
	return fileStamp{mod: fi.ModTime(), size: fi.Size(), ok: true}
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
