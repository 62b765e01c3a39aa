package projection

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/cgcat/cgcat/gbrain"
	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/lease"
	"github.com/cgcat/cgcat/local/store"
	"github.com/cgcat/cgcat/local/view"
	"github.com/cgcat/cgcat/outbox"
)

func (s *Service) setErr(err error) {
	s.mu.Lock()
	s.lastErr = err
	s.mu.Unlock()
}

func (s *Service) run(ctx context.Context) {
	defer close(s.done)
	defer func() { // what recall learned is recorded before Done
		s.mu.Lock()
		s.laterClosed = true
		s.mu.Unlock()
		s.later.Wait()
	}()
	defer s.markReady()
	defer func() {
		s.proj.Release()
		_ = s.conn.Close()
		if s.recall.Conn != s.conn {
			_ = s.recall.Conn.Close()
		}
	}()
	if s.discoveryMayGo(ctx) {
		s.markReady()
	}
	lp := &loopPace{bo: backoff.NewExponentialBackOff()}
	lp.bo.InitialInterval, lp.bo.MaxInterval, lp.bo.MaxElapsedTime = s.opt.RetryMin, s.opt.RetryMax, 0
	tick := time.NewTicker(s.opt.Poll)
	defer tick.Stop()
	for ctx.Err() == nil {
		now := time.Now()
		if !s.proj.Holding() {
			s.keepLease(ctx, now, lp)
		}
		if !s.isReady() && s.discoveryMayGo(ctx) {
			s.markReady()
		}
		holding := s.proj.Holding()
		s.mu.Lock()
		s.holding = holding
		s.mu.Unlock()
		if holding && !now.Before(lp.retryAt) {
			if stop := s.maybeRound(ctx, now, lp); stop {
				return
			}
		}
		s.dropIdle()
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-s.kick:
			lp.nextRound, lp.retryAt = time.Time{}, time.Time{}
		}
	}
}

// loopPace is when the service loop tries what next.
type loopPace struct {
	bo                            *backoff.ExponentialBackOff
	stamp                         fileStamp // the published catalog at the last round
	nextLease, nextRound, retryAt time.Time
	lastMsg                       string // the last round's failure, said once
}

// keepLease tries to take the projector lease (at most every LeaseEvery)
// for a process that does not hold it, and lets the connection go while
// another process's rounds do the work.
func (s *Service) keepLease(ctx context.Context, now time.Time, lp *loopPace) {
	if s.proj.lease != nil { // stolen
		s.proj.Release()
	}
	if !now.Before(lp.nextLease) {
		err := s.proj.TryAcquire(ctx)
		switch {
		case err == nil:
			s.log.Debug("took the projector lease")
			lp.nextRound = now
		case errors.Is(err, lease.ErrHeld):
		default:
			s.log.Warn("cannot take the projector lease", "err", err)
		}
		lp.nextLease = now.Add(s.opt.LeaseEvery)
	}
	if !s.proj.Holding() && (s.recall.Conn != s.conn || s.recall.idle() >= max(recallKeepAlive, s.opt.KeepAlive)) {
		// Another process holds the lease: its rounds keep the mirror and
		// take a lost catalog's ids back (discovery here waits for that
		// as the holder's does). The connection stays while it serves
		// recall.
		s.conn.Drop()
	}
}

// maybeRound runs a round when one is due (a full one every RoundEvery) or
// the published catalog changed; stop when ctx ended meanwhile.
func (s *Service) maybeRound(ctx context.Context, now time.Time, lp *loopPace) (stop bool) {
	full := !now.Before(lp.nextRound)
	cur := stampOf(view.PointerFile(s.st.DataDir()))
	if !full && cur == lp.stamp {
		return false
	}
	err, networked := s.round(ctx, full)
	lp.stamp = stampOf(view.PointerFile(s.st.DataDir()))
	if ctx.Err() != nil {
		return true
	}
	if networked || err != nil {
		s.contact(ctx, err)
	}
	if full && err == nil {
		lp.nextRound = time.Now().Add(s.opt.RoundEvery)
	}
	switch {
	case err != nil:
		s.roundFailed(err, lp)
	case networked:
		if lp.lastMsg != "" {
			s.log.Info("GBrain answers again")
		}
		lp.lastMsg = ""
		lp.bo.Reset()
		s.setErr(nil)
	}
	return false
}

// roundFailed backs off, says why once, and lets the lease or the
// connection go when the failure calls for it.
func (s *Service) roundFailed(err error, lp *loopPace) {
	wait := lp.bo.NextBackOff()
	lp.retryAt = time.Now().Add(wait)
	lp.nextRound = lp.retryAt
	s.setErr(err)
	switch {
	case errors.Is(err, store.ErrFenced) || errors.Is(err, ErrNoLease):
		s.proj.Release()
	case errors.Is(err, gbrain.ErrBrainLocked):
		if lp.lastMsg != err.Error() {
			s.log.Error("GBrain cannot start: its PGLite brain is open in another process; cgcat tries again later (local answers are unaffected; point cgcat at a Postgres-backed brain or `gbrain serve --http` to share it)", "err", err, "retry_in", wait)
		}
	case lp.lastMsg != err.Error():
		s.log.Warn("GBrain round failed; the outbox keeps the cards and the mirror keeps answering", "err", err, "retry_in", wait)
	}
	lp.lastMsg = err.Error()
	s.conn.Drop()
}

// dropIdle closes a short connection (over stdio) once idle; the same
// connection serves recall, so it is kept while searches come.
func (s *Service) dropIdle() {
	if s.conn.HTTP() || s.conn.Current() == nil {
		return
	}
	s.mu.Lock()
	idle := time.Since(s.lastUse)
	s.mu.Unlock()
	if idle >= s.opt.KeepAlive && s.recall.idle() >= max(recallKeepAlive, s.opt.KeepAlive) {
		s.conn.Drop()
	}
}

// discoveryMayGo reports whether a fresh store's first discovery need not
// wait any more: the catalog binds projects already, or this machine's
// cards were read (recovery done), or could not be (ids pending: discovery
// never waits for GBrain).
func (s *Service) discoveryMayGo(ctx context.Context) bool {
	rs, err := ReadRecovery(ctx, s.st)
	if err != nil || rs.Done || (rs.Fresh && rs.Err != "") {
		return true
	}
	empty, err := storeEmpty(ctx, s.st)
	return err != nil || !empty
}

func (s *Service) isReady() bool {
	select {
	case <-s.ready:
		return true
	default:
		return false
	}
}

var errStop = errors.New("stop")

// round runs one round while holding the lease. A drain-only round (the
// store changed) needs GBrain only when the outbox has rows; a full round
// always connects: it takes a lost catalog's ids back first (until that is
// done), then sweeps, drains, keeps this machine's page and refreshes the
// mirror. networked says whether GBrain was asked.
func (s *Service) round(ctx context.Context, full bool) (err error, networked bool) {
	if !full && s.depth(ctx) == 0 {
		return nil, false
	}
	if err := s.dial(ctx); err != nil {
		_ = MarkFresh(ctx, s.st, err) // a fresh catalog's ids are pending now
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
	if full {
		if rs, err := ReadRecovery(ctx, s.st); err != nil {
			return err, true
		} else if !rs.Done {
			rs, err := s.proj.Recover(ctx, nil)
			if err != nil {
				return err, true
			}
			if rs.Done && rs.Own+rs.Old+len(rs.NotTakenBack) > 0 {
				s.log.Info("read this machine's GBrain cards", "own", rs.Own, "format1", rs.Old, "notTakenBack", len(rs.NotTakenBack))
			}
		}
		if sw, err := s.proj.Sweep(ctx); err != nil {
			return err, true
		} else if sw.Retract > 0 || sw.Reshare > 0 {
			s.log.Info("GBrain cards to take back or write again", "retract", sw.Retract, "reshare", sw.Reshare)
		}
	}
	if err := s.drain(ctx); err != nil {
		return err, true
	}
	if full {
		if err := s.proj.Heartbeat(ctx); err != nil && !errors.Is(err, ErrRetired) {
			return err, true
		}
		mrep, err := s.proj.RefreshMirror(ctx, MirrorOptions{Budget: s.opt.MirrorBudget})
		s.noteMirror(mrep)
		if err != nil {
			return err, true
		}
	}
	return nil, true
}

// drain projects the outbox, unless this machine was retired (said once in
// the log; the rows wait).
func (s *Service) drain(ctx context.Context) error {
	rep, err := s.proj.Drain(ctx)
	if errors.Is(err, ErrRetired) {
		s.mu.Lock()
		said := s.retiredSaid
		s.retiredSaid = true
		s.mu.Unlock()
		if !said {
			s.log.Error("no GBrain card is written", "err", err)
		}
		return nil
	}
	if rep.Rows > 0 {
		s.mu.Lock()
		r := rep
		s.lastDrain = &r
		s.mu.Unlock()
		s.log.Info("projected GBrain cards", "written", rep.Written, "unchanged", rep.Unchanged, "retracted", rep.Retracted, "conflicts", rep.Conflicts, "remaining", rep.Remaining, "calls", rep.Calls)
	}
	return err
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

// contactLater records what recall learned of GBrain without holding up
// the search that learned it; it ends with the service's ctx.
func (s *Service) contactLater(ctx context.Context, err error) {
	s.mu.Lock()
	closed := s.laterClosed || ctx.Err() != nil
	if !closed {
		s.later.Add(1)
	}
	s.mu.Unlock()
	if closed {
		return
	}
	go func() {
		defer s.later.Done()
		s.contact(ctx, err)
	}()
}
