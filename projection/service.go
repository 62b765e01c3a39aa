package projection

import (
	"context"
	"errors"
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
	"github.com/cgcat/cgcat/server"
)

// ServiceOptions tune a Service; zero fields take the defaults.
type ServiceOptions struct {
	// DrainEvery forces a drain this often even without a store change
	// (30 s).
	DrainEvery time.Duration
	// LeaseEvery is how often a process without the projector lease tries
	// to take it (30 s).
	LeaseEvery time.Duration
	// Poll is how often the store's revision file is looked at (1 s).
	Poll time.Duration
	// RedialMin and RedialMax bound the backoff between dial attempts
	// (1 s, 2 min).
	RedialMin, RedialMax time.Duration
	// HandshakeTimeout and CallTimeout go to gbrain.Options.
	HandshakeTimeout, CallTimeout time.Duration
	// Connection, when set, replaces the one the config names (tests).
	Connection *gbrain.Connection
}

// ServiceStatus is a snapshot of the background service.
type ServiceStatus struct {
	Enabled    bool
	Connected  bool
	Projecting bool // holds the projector lease
	LastErr    string
	LastDrain  *Report
}

// Service is GBrain inside `cgcat serve`: it dials lazily in the background
// (start-up never waits for GBrain), dials again with backoff when the
// connection is lost, answers recall while connected, and projects the
// outbox while it holds the projector lease. It stops when the ctx given to
// Start ends; that closes only its own GBrain child (stdin first).
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

	mu        sync.Mutex
	lastErr   error
	lastDrain *Report
	holding   bool
	kick      chan struct{}
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
	s := &Service{cfg: cfg, st: st, log: log, done: make(chan struct{}), kick: make(chan struct{}, 1)}
	if cfg == nil || !cfg.GBrain.Enabled || st == nil {
		close(s.done)
		return s
	}
	conn, err := Connection(cfg)
	if opt.Connection != nil {
		conn, err = *opt.Connection, nil
	}
	if err != nil {
		log.Error("GBrain is enabled but its connection is not usable; recall and projection are off", "err", err)
		s.lastErr = err
		close(s.done)
		return s
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&opt.DrainEvery, 30*time.Second)
	def(&opt.LeaseEvery, 30*time.Second)
	def(&opt.Poll, time.Second)
	def(&opt.RedialMin, time.Second)
	def(&opt.RedialMax, 2*time.Minute)
	s.opt = opt
	s.enabled = true
	s.conn = NewConnWith(conn, gbrain.Options{
		ExpectedSource:   cfg.GBrain.ExpectedSource,
		HandshakeTimeout: opt.HandshakeTimeout,
		CallTimeout:      opt.CallTimeout,
		Logger:           log,
	})
	set := SettingsFrom(cfg, st)
	s.proj = NewProjector(st, pol, set, s.conn, log)
	s.recall = &Recaller{Conn: s.conn, Store: st, Settings: set}
	go s.run(ctx)
	return s
}

// Recall is the frontend's recall: nil when GBrain is off (gbrainState
// disabled); otherwise it answers while connected and fails at once while
// not (gbrainState degraded).
func (s *Service) Recall() server.Recall {
	if s == nil || !s.enabled {
		return nil
	}
	return s.recall
}

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

// Kick asks for a drain soon (when this process holds the lease).
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
	st := ServiceStatus{Enabled: s.enabled, Projecting: s.holding, LastDrain: s.lastDrain}
	if s.conn != nil {
		st.Connected = s.conn.Current() != nil
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
	defer func() {
		s.proj.Release()
		_ = s.conn.Close()
	}()
	bo := backoff.NewExponentialBackOff()
	bo.InitialInterval, bo.MaxInterval, bo.MaxElapsedTime = s.opt.RedialMin, s.opt.RedialMax, 0
	lastMsg := ""
	lockedSaid := false
	for ctx.Err() == nil {
		_, err := s.conn.Client(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			s.setErr(err)
			s.contact(ctx, err)
			switch {
			case errors.Is(err, gbrain.ErrBrainLocked):
				if !lockedSaid {
					lockedSaid = true
					s.log.Error("GBrain cannot start: its PGLite brain is already open in another process; recall and projection wait (local answers are unaffected)", "err", err)
				}
			case err.Error() != lastMsg:
				s.log.Warn("GBrain is unreachable; recall and projection wait (local answers are unaffected)", "err", err)
			}
			lastMsg = err.Error()
			if !sleep(ctx, bo.NextBackOff()) {
				return
			}
			continue
		}
		if lastMsg != "" {
			s.log.Info("GBrain connected")
		}
		lastMsg, lockedSaid = "", false
		bo.Reset()
		s.setErr(nil)
		s.contact(ctx, nil)
		s.connected(ctx)
		s.proj.Release()
		s.mu.Lock()
		s.holding = false
		s.mu.Unlock()
		if ctx.Err() == nil {
			if err := s.conn.LastError(); err != nil {
				s.setErr(err)
				s.contact(ctx, err)
				s.log.Warn("GBrain connection lost; dialing again", "err", err)
			}
			if !sleep(ctx, s.opt.RedialMin) {
				return
			}
		}
	}
}

// connected runs while the connection lives: it takes the lease when it can
// and drains when the store changed, when kicked, or every DrainEvery.
func (s *Service) connected(ctx context.Context) {
	tick := time.NewTicker(s.opt.Poll)
	defer tick.Stop()
	var stamp fileStamp
	var lastDrain, nextLease, quietUntil time.Time
	failures := 0
	force := true
	for {
		if ctx.Err() != nil || s.conn.Current() == nil {
			return
		}
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
					force = true
				case errors.Is(err, lease.ErrHeld):
				default:
					s.log.Warn("cannot take the projector lease", "err", err)
				}
				nextLease = now.Add(s.opt.LeaseEvery)
			}
		}
		holding := s.proj.Holding()
		s.mu.Lock()
		s.holding = holding
		s.mu.Unlock()
		if holding && !now.Before(quietUntil) {
			cur := stampOf(view.PointerFile(s.st.DataDir()))
			if force || cur != stamp || now.Sub(lastDrain) >= s.opt.DrainEvery {
				force = false
				rep, err := s.proj.Drain(ctx)
				stamp = stampOf(view.PointerFile(s.st.DataDir()))
				lastDrain = time.Now()
				if rep.Rows > 0 {
					s.mu.Lock()
					r := rep
					s.lastDrain = &r
					s.mu.Unlock()
					s.log.Info("projected GBrain cards", "written", rep.Written, "unchanged", rep.Unchanged, "conflicts", rep.Conflicts, "remaining", rep.Remaining)
				}
				if ctx.Err() == nil {
					s.contact(ctx, err)
				}
				if err != nil && ctx.Err() == nil {
					failures++
					wait := min(time.Duration(1<<min(failures, 6))*time.Second, 2*time.Minute)
					quietUntil = time.Now().Add(wait)
					s.setErr(err)
					s.log.Warn("GBrain projection stopped; the outbox keeps the cards", "err", err, "retry_in", wait)
					if errors.Is(err, store.ErrFenced) || errors.Is(err, ErrNoLease) {
						s.proj.Release()
					}
				} else if err == nil {
					failures = 0
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-s.kick:
			force = true
			quietUntil = time.Time{}
		}
	}
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
