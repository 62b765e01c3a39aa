package scan

import (
	"context"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/pathid"
	"github.com/cgcat/cgcat/local/store"
)

// A round: slices walked one after another within the round's budget, each
// committed while the next one walks, or carried to the next commit when
// nothing a reader waits for would be seen sooner.

// RunRound runs slices until the pass finishes or a round budget is spent.
// A new pass starts when none is running.
func (s *Scanner) RunRound(ctx context.Context) (r Round, err error) {
	r = Round{Started: s.now()}
	deadline := r.Started.Add(s.opt.RoundTime)
	s.setLastCommit(time.Now())
	// One commit may be in flight while the next slices walk: the walk
	// needs only the in-memory stack, and commits stay in order. A slice
	// walked meanwhile waits for it only when it is to be committed itself:
	// a slice that is carried does not (a commit opens the store, writes,
	// fsyncs and publishes: 35-130 ms against 10-20 ms for a slice's
	// walk, so waiting after every slice held a first pass's walk up for
	// a quarter of its time).
	var inflight chan error
	wait := func() error {
		if inflight == nil {
			return nil
		}
		err := <-inflight
		inflight = nil
		return err
	}
	defer func() {
		if err != nil {
			// The store is the truth again (the in-memory stack may be
			// ahead of it, by the carried work too); reload next time.
			s.stack, s.carried = nil, nil
		}
	}()
	for {
		budget := min(s.opt.SliceDirs, s.opt.RoundDirs-r.Dirs)
		sliceEnd := s.now().Add(s.opt.SliceTime)
		if sliceEnd.After(deadline) {
			sliceEnd = deadline
		}
		pl, err := s.plan(ctx, budget, sliceEnd)
		if err != nil {
			wait()
			return r, err
		}
		if s.opt.Stale != nil && s.opt.Stale() {
			if err := wait(); err != nil {
				return r, err
			}
			// The settings changed while this slice walked: it is dropped
			// (the queue in the store is the truth again, and so are the
			// carried slices), and the next round starts under the
			// settings in force.
			s.stack, s.carried = nil, nil
			r.Truncated = "settings changed"
			r.Elapsed = local.Millis(s.now().Sub(r.Started))
			return r, s.endRound(ctx, r)
		}
		r.Dirs += pl.w.dirs
		r.Projects += len(pl.w.found)
		r.Finished = len(pl.w.pending) == 0
		var stop bool
		switch {
		case r.Finished:
			stop = true
		case ctx.Err() != nil:
			r.Truncated, stop = "cancelled", true
		case r.Dirs >= s.opt.RoundDirs:
			r.Truncated, stop = "maxDirectoriesPerRound", true
		case !s.now().Before(deadline):
			r.Truncated, stop = "maxRoundMs", true
		}
		if !stop && s.canCarry(pl) {
			s.carried = s.withCarried(pl)
			continue
		}
		if err := wait(); err != nil {
			return r, err
		}
		pl = s.withCarried(pl)
		if stop {
			r.Elapsed = local.Millis(s.now().Sub(r.Started))
			next, err := s.commit(ctx, pl, &r)
			if err != nil {
				return r, err
			}
			if !next.PassRunning {
				s.saveCache(true)
			}
			return r, nil
		}
		inflight = make(chan error, 1)
		go func(pl *slicePlan, done chan error) {
			_, err := s.commit(ctx, pl, nil)
			done <- err
		}(pl, inflight)
	}
}

// canCarry reports whether a walked slice may wait for the next commit. One
// that changed nothing a reader could see (every project it met is
// settled, so its commit would only move the walk's own bookkeeping) waits
// until SliceTime after the last commit; one that found new or changed
// projects waits VisibleCarry, and no more than maxCarriedSlices slices'
// worth of directories go into one commit (a smaller SliceDirs still means
// more frequent commits). A round's last slice is always committed at
// once. A scanner killed meanwhile loses at most SliceTime of walking,
// which its successor (resuming from the last committed stack) walks again.
func (s *Scanner) canCarry(pl *slicePlan) bool {
	s.mu.Lock()
	since := time.Since(s.lastCommit) // a commit in flight sets it
	s.mu.Unlock()
	if since >= s.opt.SliceTime {
		return false
	}
	carried := pl.w.dirs
	if s.carried != nil {
		carried += s.carried.w.dirs
	}
	if since < s.opt.VisibleCarry && carried <= maxCarriedSlices*s.opt.SliceDirs {
		return true
	}
	for i := range pl.w.found {
		f := &pl.w.found[i]
		if k := s.lookup(pathid.Key(f.root)); k == nil || !k.settled(f) {
			return false
		}
	}
	return true
}

// maxCarriedSlices bounds how many slices' worth of directories one
// commit of new or changed projects may hold (canCarry).
const maxCarriedSlices = 8

// withCarried joins pl to the carried slices: one commit for all of them.
func (s *Scanner) withCarried(pl *slicePlan) *slicePlan {
	c := s.carried
	if c == nil {
		return pl
	}
	s.carried = nil
	c.join(pl)
	return c
}

// join adds the next slice's walk to p, the slices walked before it.
func (p *slicePlan) join(next *slicePlan) {
	if p.unsaved == nil {
		p.unsaved = make(map[uint64]int, len(p.fresh))
		for i, it := range p.fresh {
			p.unsaved[it.seq] = i
		}
		// Only what has a queue entry to delete is kept (w.dirs counts).
		p.w.consumed = slices.DeleteFunc(p.w.consumed, func(it item) bool { return !it.queued })
	}
	for _, it := range next.w.consumed {
		if !it.queued {
			continue
		}
		if i, ok := p.unsaved[it.seq]; ok {
			// Queued by an earlier slice and read before it was ever
			// written: neither written nor deleted.
			delete(p.unsaved, it.seq)
			p.fresh[i].queued = false
			continue
		}
		p.w.consumed = append(p.w.consumed, it) // its queue entry goes
	}
	p.w.dirs += next.w.dirs
	for _, it := range next.fresh {
		p.unsaved[it.seq] = len(p.fresh)
		p.fresh = append(p.fresh, it)
	}
	p.newPass = p.newPass || next.newPass
	p.roots, p.seq = next.roots, next.seq
	p.w.pending = next.w.pending
	p.w.found = append(p.w.found, next.w.found...)
	p.w.gaps = append(p.w.gaps, next.w.gaps...)
	p.w.rejected = append(p.w.rejected, next.w.rejected...)
}

// RunSlice runs exactly one slice (for `cgcat scan --once` and for a tool
// call on an empty catalog that must answer within its budget).
func (s *Scanner) RunSlice(ctx context.Context, dirs int, until time.Time) (State, error) {
	pl, err := s.plan(ctx, dirs, until)
	if err != nil {
		return State{}, err
	}
	st, err := s.commit(ctx, s.withCarried(pl), nil)
	if err != nil {
		s.stack = nil // the store is the truth again; reload next time
		return st, err
	}
	if !st.PassRunning {
		s.saveCache(true)
	}
	return st, nil
}

// saveCache writes the directory cache at the end of a pass and when the
// scanner closes (best effort: a cache that cannot be written costs
// listings, nothing else).
func (s *Scanner) saveCache(passEnded bool) {
	if s.cache == nil {
		return
	}
	t0 := time.Now()
	err := s.cache.save(passEnded)
	if traceScan {
		fmt.Fprintf(os.Stderr, "directory cache saved in %v (err %v)\n", time.Since(t0), err)
	}
}

// endRound records a round that ended without a commit of its own (its
// last slice was dropped).
func (s *Scanner) endRound(ctx context.Context, r Round) error {
	return s.st.Update(ctx, func(tx *store.Tx) error {
		if err := tx.CheckFence(fenceName, s.epoch); err != nil {
			return err
		}
		st, err := tx.ScanState()
		if err != nil {
			return err
		}
		st.Rounds++
		st.LastRound = r
		return tx.PutScanState(st)
	})
}

// setLastCommit notes when a commit began (canCarry reads it while the
// commit runs beside the walk).
func (s *Scanner) setLastCommit(t time.Time) {
	s.mu.Lock()
	s.lastCommit = t
	s.mu.Unlock()
}
