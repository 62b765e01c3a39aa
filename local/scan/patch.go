package scan

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/lease"
	"github.com/cgcat/cgcat/local/marker"
	"github.com/cgcat/cgcat/local/pathid"
	"github.com/cgcat/cgcat/local/store"
)

// A patch is what file events asked discovery to look at again (package
// watch): directories whose own entries changed are read again (not what
// lies below them: every directory below is watched itself), directories
// that appeared are walked whole, and the records at or below directories
// that went away are re-checked directly. It commits in one batch, beside
// the pass (its queue and seen set are not touched): a pass running
// meanwhile still ends as it would have. What a patch finds is the same as
// what a pass would find there: the same walk, the same project rule, the
// same direct re-check before a record is called missing.

// Patch is the work of one batch of file events.
type Patch struct {
	Shallow []string // read again, not below
	Deep    []string // walk whole
	Gone    []string // re-check the records at or below
}

// Empty reports a patch with nothing to do.
func (p Patch) Empty() bool { return len(p.Shallow)+len(p.Deep)+len(p.Gone) == 0 }

// PatchResult says what a patch did.
type PatchResult struct {
	Dirs     int // directories read
	Projects int // projects seen
	Written  int // records written
	// Finished is false when the budget ran out before the walk ended:
	// nothing was committed, and a whole pass must look instead.
	Finished bool
}

// StartPatch takes the scan lease without waiting (lease.ErrHeld while
// another process scans) for one patch. Nothing is read until the patch
// needs it; the fencing epoch moves on in the patch's own commit.
func StartPatch(st *store.Store, opt Options) (*Scanner, error) {
	l, err := lease.TryAcquire(LeasePath(st.DataDir()))
	if err != nil {
		return nil, err
	}
	if opt.Workers <= 0 {
		opt.Workers = 4
	}
	// Held only while the patch makes progress, as a scan's (package lease).
	l.RequireProgress()
	return &Scanner{st: st, opt: opt, lease: l, now: time.Now, patching: true}, nil
}

// RunPatch applies p within the round budget (maxDirectoriesPerRound, and
// until).
func (s *Scanner) RunPatch(ctx context.Context, p Patch, until time.Time) (PatchResult, error) {
	exclude := s.excludes()
	var stack []item
	add := func(dir string, shallow bool) {
		dir = filepath.Clean(dir)
		root := s.rootOf(dir)
		if root == "" {
			return
		}
		depth := depthBelow(root, dir)
		if depth > s.opt.MaxDepth || depth > 0 && exclude[filepath.Base(dir)] {
			return
		}
		stack = append(stack, item{Path: dir, Depth: depth, shallow: shallow})
	}
	for _, d := range p.Shallow {
		add(d, true)
	}
	for _, d := range p.Deep {
		add(d, false)
	}
	started := s.now()
	w := s.walk(ctx, stack, max(s.opt.RoundDirs, len(stack)), until)
	res := PatchResult{Dirs: w.dirs, Projects: len(w.found), Finished: len(w.pending) == 0 && ctx.Err() == nil}
	if !res.Finished {
		return res, nil
	}
	s.lease.Progress()
	err := s.st.Update(ctx, func(tx *store.Tx) error {
		n, err := s.commitPatch(tx, p, &w, started)
		res.Written = n
		return err
	})
	return res, err
}

// depthBelow is how many names p lies below root.
func depthBelow(root, p string) int {
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == "." {
		return 0
	}
	return strings.Count(rel, string(filepath.Separator)) + 1
}

// commitPatch writes what the patch's walk found and what the direct
// re-checks showed; it writes nothing when nothing changed.
func (s *Scanner) commitPatch(tx *store.Tx, p Patch, w *walkResult, started time.Time) (int, error) {
	st, err := tx.ScanState()
	if err != nil {
		return 0, err
	}
	s.mu.Lock()
	s.state, s.noSeen = st, !st.PassRunning
	s.state.PassStarted = started // a move is matched by repository only among records first seen now
	s.mu.Unlock()
	seen := map[string]bool{}
	var present []*known
	for i := range w.found {
		f := &w.found[i]
		if err := s.upsert(tx, *f); err != nil {
			return 0, err
		}
		seen[pathid.Key(f.root)] = true
		if rec, err := tx.ProjectByRoot(f.root); err == nil && rec != nil {
			present = append(present, knownOf(rec))
		}
	}
	ids := map[string]bool{}
	for _, g := range p.Gone {
		if err := tx.ProjectsUnder(g, func(id string) bool { ids[id] = true; return true }); err != nil {
			return 0, err
		}
	}
	for _, d := range p.Shallow {
		if rec, err := tx.ProjectByRoot(d); err == nil && rec != nil {
			ids[rec.ID] = true
		}
	}
	var gone []*local.Project
	for _, id := range slices.Sorted(mapsKeys(ids)) {
		rec, err := tx.Project(id)
		if err != nil || rec == nil || seen[pathid.Key(rec.Root)] || !s.underRoots(rec.Root) {
			continue
		}
		changed, missing := s.recheckRecord(rec)
		if !changed {
			continue
		}
		if missing {
			gone = append(gone, rec)
		}
		if err := tx.PutProject(rec); err != nil {
			return 0, err
		}
	}
	if err := s.linkGone(tx, gone, present); err != nil {
		return 0, err
	}
	stateChanged := patchGaps(&st, w, p.Gone)
	if stateChanged {
		if err := tx.PutScanState(st); err != nil {
			return 0, err
		}
	}
	n := len(tx.Written())
	if n > 0 || stateChanged {
		tx.BumpFence(fenceName) // we hold the lease: a frozen older holder can no longer write
	}
	return n, nil
}

func mapsKeys(m map[string]bool) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// recheckRecord looks at a record's root directly, as a pass's end does
// for records it did not see: only that may call a project missing, and a
// project under an offline discovery root is inaccessible, not missing. It
// reports whether the record changed, and whether it went missing.
func (s *Scanner) recheckRecord(p *local.Project) (changed, missing bool) {
	v := marker.Probe(p.Root)
	avail, state, why := v.Availability, v.IndexState, v.Why
	if r := s.rootOf(p.Root); r != "" && avail == local.Missing {
		if w, off := marker.Offline(r); off {
			avail, state, why = local.Inaccessible, local.MarkerUnknown, w
		}
	}
	if v.Project {
		if p.Availability == local.Present {
			return false, false
		}
		why = ""
	} else if avail == local.Present {
		avail = local.Missing // the root is there, the index is not
	}
	if p.Availability == avail && p.IndexState == state && p.Why == why {
		return false, false
	}
	if avail == local.Missing {
		s.markMissing(p, why, "")
		p.IndexState = state
		return true, true
	}
	p.Availability, p.IndexState, p.Why = avail, state, why
	p.ValidatedAt = s.now()
	if avail == local.Present {
		p.MissingSince = time.Time{}
	}
	return true, false
}

// patchGaps brings the covered roots' gaps and the rejected index files up
// to what the patch read: what it read again replaces what was listed for
// those directories, and what lay below a directory that went away is
// dropped. A pass running meanwhile gathers the new ones too. It reports
// whether anything changed.
func patchGaps(st *State, w *walkResult, gone []string) bool {
	changed := false
	stale := func(g Gap) bool {
		for _, it := range w.consumed {
			if g.Path == it.Path || filepath.Dir(g.Path) == it.Path && g.Kind == local.GapName ||
				g.Kind == local.GapRejected && g.Path == filepath.Join(it.Path, marker.Dir, marker.File) {
				return true
			}
		}
		return slices.ContainsFunc(gone, func(d string) bool { return pathid.Within(d, g.Path) })
	}
	for key, rc := range st.Roots {
		if rc.Completed.IsZero() {
			continue
		}
		old := rc.Gaps
		rc.Gaps = slices.DeleteFunc(slices.Clone(old), stale)
		rc.GapCount -= len(old) - len(rc.Gaps)
		for _, g := range w.gaps {
			if pathid.Within(rc.Root, g.Path) {
				rc.GapCount++
				if len(rc.Gaps) < local.MaxGaps {
					rc.Gaps = append(rc.Gaps, g)
				}
			}
		}
		if !slices.Equal(old, rc.Gaps) {
			st.Roots[key] = rc
			changed = true
		}
	}
	old := st.Rejected
	st.Rejected = slices.DeleteFunc(slices.Clone(old), stale)
	st.RejectedCount -= len(old) - len(st.Rejected)
	for _, g := range w.rejected {
		st.RejectedCount++
		if len(st.Rejected) < local.MaxGaps {
			st.Rejected = append(st.Rejected, g)
		}
	}
	changed = changed || !slices.Equal(old, st.Rejected)
	if st.PassRunning && len(w.gaps)+len(w.rejected) > 0 {
		for _, g := range w.gaps {
			st.PassGapCount++
			if len(st.PassGaps) < local.MaxGaps {
				st.PassGaps = append(st.PassGaps, g)
			}
		}
		for _, g := range w.rejected {
			st.PassRejectedCount++
			if len(st.PassRejected) < local.MaxGaps {
				st.PassRejected = append(st.PassRejected, g)
			}
		}
	}
	return changed
}
