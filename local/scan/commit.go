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

// A slice's commit: what one walk planned, written to the store in one
// batch with the scanner's fencing number.

// slicePlan is one walked slice waiting to be committed.
type slicePlan struct {
	w       walkResult
	newPass bool
	roots   []string // the pass's roots after this slice
	fresh   []item   // unread items first queued by this slice (not queued: read meanwhile)
	seq     uint64   // next queue sequence number after this slice's items
	// unsaved indexes fresh by seq while slices are carried (join).
	unsaved map[uint64]int
}

// plan walks one slice from the in-memory stack and gives the unread new
// items their queue places, so the next slice can walk before this one is
// committed. A root added to the config since the pass began joins it.
func (s *Scanner) plan(ctx context.Context, n int, until time.Time) (*slicePlan, error) {
	if s.stack == nil {
		if err := s.load(ctx); err != nil {
			return nil, err
		}
	}
	s.mu.Lock()
	pl := &slicePlan{newPass: !s.state.PassRunning || s.state.ConfigKey != s.opt.key() || s.opt.Fresh && !s.freshStarted}
	s.freshStarted = true
	stack := s.stack
	if pl.newPass {
		// The pass has begun as far as the next plan is concerned.
		s.state.PassRunning, s.state.ConfigKey, s.state.PassRoots = true, s.opt.key(), nil
		stack = nil
	}
	var added []string
	for _, r := range s.opt.Roots {
		if !slices.ContainsFunc(s.state.PassRoots, func(p string) bool { return pathid.Same(p, r) }) {
			added = append(added, r)
		}
	}
	pl.roots = slices.DeleteFunc(slices.Clone(s.state.PassRoots), func(p string) bool { return !s.underRoots(p) })
	pl.roots = append(pl.roots, added...)
	s.state.PassRoots = pl.roots
	switch {
	case pl.newPass:
		s.passNo = s.state.Pass + 1
	case s.passNo == 0:
		s.passNo = s.state.Pass
	}
	pass := s.passNo
	s.mu.Unlock()
	if s.cache != nil {
		s.cache.startPass(pass)
	}
	// New roots go on top: the next slices start on them.
	for i := len(added) - 1; i >= 0; i-- {
		stack = append(stack, item{Path: added[i]})
	}
	t0 := time.Now()
	pl.w = s.walk(ctx, stack, n, until)
	if traceScan {
		fmt.Fprintf(os.Stderr, "walk %d dirs %v\n", pl.w.dirs, time.Since(t0))
	}
	// Unread items keep their places; new ones get higher sequence numbers
	// in stack order, so a reload rebuilds the same stack.
	for i := range pl.w.pending {
		if !pl.w.pending[i].queued {
			pl.w.pending[i].seq, pl.w.pending[i].queued = s.seq, true
			pl.fresh = append(pl.fresh, pl.w.pending[i])
			s.seq++
		}
	}
	pl.seq = s.seq
	s.stack = pl.w.pending
	if s.stack == nil {
		s.stack = []item{}
	}
	return pl, nil
}

// commit writes one planned slice in one batch: consumed queue entries
// removed, new unread ones queued, projects upserted, the pass finished
// when nothing is left, and the round (if given) recorded.
func (s *Scanner) commit(ctx context.Context, pl *slicePlan, round *Round) (State, error) {
	w := pl.w
	var (
		next    State
		written []*local.Project
		rev     uint64
	)
	if s.beforeCommit != nil {
		s.beforeCommit()
	}
	t0 := time.Now()
	s.setLastCommit(t0)
	defer func() {
		if traceScan {
			fmt.Fprintf(os.Stderr, "commit %d dirs %d fresh %v (%d directories listed by this scanner so far)\n", w.dirs, len(pl.fresh), time.Since(t0), s.listings.Load())
		}
	}()
	s.lease.Progress()
	defer s.lease.Progress()
	err := s.st.Update(ctx, func(tx *store.Tx) error {
		if err := tx.CheckFence(fenceName, s.epoch); err != nil {
			return err
		}
		if err := s.ensureKnown(tx); err != nil {
			return err
		}
		cur, err := tx.ScanState()
		if err != nil {
			return err
		}
		if pl.newPass {
			if err := s.beginPass(tx, &cur); err != nil {
				return err
			}
		}
		cur.PassRoots = pl.roots
		cur.Scanner = os.Getpid()
		if err := saveQueue(tx, w.consumed, pl); err != nil {
			return err
		}
		for i := range w.found {
			f := &w.found[i]
			if k := s.lookup(pathid.Key(f.root)); k != nil && k.settled(f) {
				store.ScanSeen.Add(tx, k.id) // seen, and its record stays as it is
				continue
			}
			if err := s.upsert(tx, *f); err != nil {
				return err
			}
		}
		tally(&cur, &w)
		if len(w.pending) == 0 {
			if err := s.finishPass(tx, &cur); err != nil {
				return err
			}
		}
		if round != nil {
			cur.Rounds++
			cur.LastRound = *round
		}
		next = cur
		written, rev = tx.Written(), tx.CommitRevision()
		return tx.PutScanState(cur)
	})
	if err != nil {
		// The caller drops its in-memory stack (the store is the truth
		// again): this may run beside the next slice's plan, which owns it.
		return State{}, err
	}
	// The next slice's walk reads what is known while this commit finishes.
	s.noteWritten(written, rev)
	s.mu.Lock()
	s.state = next
	if !next.PassRunning {
		s.stampedAt = map[string]time.Time{}
	}
	s.mu.Unlock()
	if s.Progress != nil {
		s.Progress(next)
	}
	return next, nil
}

// saveQueue writes a slice's walk to the store's queue: the consumed
// items' entries go, the unread new ones are queued, and the next
// sequence number is moved past them.
func saveQueue(tx *store.Tx, consumed []item, pl *slicePlan) error {
	for _, it := range consumed {
		if it.queued {
			store.ScanQueue.Delete(tx, it.seq)
		}
	}
	for _, it := range pl.fresh {
		if !it.queued {
			continue
		}
		if err := store.ScanQueue.Put(tx, it.seq, store.ScanItem{Path: it.Path, Depth: it.Depth}); err != nil {
			return err
		}
	}
	// A failure to read it reads as 0: the next number is written again.
	if next, _ := store.ScanQueue.Next(tx); pl.seq > next {
		store.ScanQueue.SetNext(tx, pl.seq)
	}
	return nil
}

// beginPass clears the last pass's queue and seen set and starts the pass
// state of a new one.
func (s *Scanner) beginPass(tx *store.Tx, cur *State) error {
	if err := store.ScanQueue.Clear(tx); err != nil {
		return err
	}
	if err := store.ScanSeen.Clear(tx); err != nil {
		return err
	}
	if cur.ConfigKey != s.opt.key() {
		// Other walk settings: what earlier passes covered says
		// nothing any more (going back to settings used long ago
		// must not bring an old pass's claim back).
		cur.Roots = nil
	}
	cur.Pass++
	cur.PassRunning = true
	cur.PassStarted = s.now()
	cur.PassDirs, cur.PassProjects, cur.PassGaps, cur.PassGapCount = 0, 0, nil, 0
	cur.PassRejected, cur.PassRejectedCount = nil, 0
	cur.ConfigKey = s.opt.key()
	return nil
}

// tally adds a walked slice's counts, gaps and refused index files to the
// pass state (at most local.MaxGaps of each listed, all counted).
func tally(cur *State, w *walkResult) {
	cur.PassDirs += w.dirs
	cur.PassProjects += len(w.found)
	for _, g := range w.gaps {
		cur.PassGapCount++
		if len(cur.PassGaps) < local.MaxGaps {
			cur.PassGaps = append(cur.PassGaps, g)
		}
	}
	for _, g := range w.rejected {
		cur.PassRejectedCount++
		if len(cur.PassRejected) < local.MaxGaps {
			cur.PassRejected = append(cur.PassRejected, g)
		}
	}
	cur.Queued = len(w.pending)
}
