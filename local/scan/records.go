package scan

import (
	"encoding/json"
	"os"
	"slices"
	"time"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/ids"
	"github.com/cgcat/cgcat/local/marker"
	"github.com/cgcat/cgcat/local/meta"
	"github.com/cgcat/cgcat/local/pathid"
	"github.com/cgcat/cgcat/local/store"
	"github.com/zeebo/xxh3"
)

// found is a project seen in a slice, with what was read of it outside the
// store.
type found struct {
	root    string
	meta    *local.Metadata // nil: its stamp says its files did not change
	stamp   uint64
	dbID    string
	lineage []string
}

// upsert binds a seen project root to its record: the same root keeps its id
// for ever (a re-index is the same project); a new root gets a new id, and
// if its database is one a missing record had, that record moved here.
func (s *Scanner) upsert(tx *store.Tx, f found) error {
	now := s.now()
	p, err := tx.ProjectByRoot(f.root)
	if err != nil {
		return err
	}
	if f.meta == nil && (p == nil || p.MetaStamp != f.stamp) {
		m := meta.Read(f.root, s.opt.Meta) // forgotten meanwhile: read after all
		f.meta = &m
	}
	isNew := p == nil
	if isNew {
		id, rev := s.idFor(tx, f.root)
		p = &local.Project{ID: id, Root: f.root, RecordRevision: max(1, rev), FirstSeen: now}
	}
	before := *p
	if f.meta != nil {
		if h := MetaHash(*f.meta); isNew || h != p.MetaHash {
			if !isNew {
				p.RecordRevision++
			}
			p.MetaHash = h
		}
		p.Meta = *f.meta
	}
	p.MetaStamp, p.DBID, p.Lineage = f.stamp, f.dbID, f.lineage
	p.Availability, p.IndexState, p.Why = local.Present, local.MarkerPresent, ""
	p.MissingSince, p.MovedTo = time.Time{}, ""
	s.mu.Lock()
	noSeen := s.noSeen
	s.mu.Unlock()
	if !noSeen {
		store.ScanSeen.Add(tx, p.ID)
	}
	if !isNew && sameRecord(&before, p) {
		return nil // nothing to write: seen, unchanged
	}
	p.LastSeen, p.ValidatedAt = now, now
	if err := tx.PutProject(p); err != nil {
		return err
	}
	if isNew {
		return s.linkMove(tx, p)
	}
	return nil
}

// idFor is the id of a root seen for the first time: the id this machine's
// GBrain card gave it before the catalog was lost, when there is one and
// it is free, else a new one. An id forgotten here (`cgcat forget`,
// `cgcat prune`) is never free: the cards were read when this scanner
// started, and a record forgotten since then must not come back under its
// old id when its root is found again.
//
// A taken-back id keeps the card's record revision, so a record's revision
// never goes back after a lost catalog (it goes on from there at the next
// metadata change).
func (s *Scanner) idFor(tx *store.Tx, root string) (string, uint64) {
	if s.cardIDs == nil && s.patching {
		s.cardIDs = cardIDsOf(&tx.Reader, s.st.MachineID())
	}
	if c := s.cardIDs[s.st.Identity().RootKey(pathid.Key(root))]; c.id != "" {
		p, err := tx.Project(c.id)
		gone, gerr := tx.Forgotten(c.id)
		if err == nil && gerr == nil && p == nil && !gone {
			return c.id, c.rev
		}
	}
	return ids.NewProjectID(), 1
}

// cardClaim is what this machine's card says of a root: its id and record
// revision.
type cardClaim struct {
	id  string
	rev uint64
}

// sameRecord reports whether a re-seen record is unchanged in everything
// but its timestamps.
func sameRecord(a, b *local.Project) bool {
	return a.MetaHash == b.MetaHash && a.MetaStamp == b.MetaStamp && a.DBID == b.DBID &&
		slices.Equal(a.Lineage, b.Lineage) && a.Availability == b.Availability &&
		a.IndexState == b.IndexState && a.Why == b.Why && a.MovedTo == b.MovedTo &&
		a.MissingSince.Equal(b.MissingSince) && slices.Equal(a.Meta.Problems, b.Meta.Problems)
}

// linkMove: a new record whose database another record had means that
// index moved here, if the other record's root no longer holds it.
func (s *Scanner) linkMove(tx *store.Tx, p *local.Project) error {
	ids, err := tx.ProjectsWithDB(p.DBID)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if id == p.ID {
			continue
		}
		old, err := tx.Project(id)
		if err != nil || old == nil {
			return err
		}
		if v := marker.Probe(old.Root); v.Project && dbIDOf(old.Root) == old.DBID {
			continue // still there too: a copy, not a move
		}
		s.markMissing(old, "its index moved to another folder", p.ID)
		if err := tx.PutProject(old); err != nil {
			return err
		}
	}
	return nil
}

func (s *Scanner) markMissing(p *local.Project, why, movedTo string) {
	if p.Availability != local.Missing || p.MissingSince.IsZero() {
		p.MissingSince = s.now()
	}
	p.Availability, p.IndexState, p.Why = local.Missing, local.MarkerMissing, why
	if movedTo != "" {
		p.MovedTo = movedTo
	}
	p.ValidatedAt = s.now()
}

// finishPass ends a pass. Records under the roots that this pass did not see
// get a direct re-check (only that may call a project missing); records it
// saw have their metadata stamps checked again when they were taken long
// enough ago (or by another scanner, before a crash the pass resumed from),
// so an edit made after the walk passed them is not kept stale; the gaps
// become each root's coverage; the seen set is cleared. It reads only the
// records that change: what it needs of the others is known (known.go).
//
// A record that one of these steps means to write but cannot find any more
// stops the pass's end where it is, with nothing more of it done (the seen
// set kept, the pass still running): the next commit with nothing queued
// ends the pass again.
func (s *Scanner) finishPass(tx *store.Tx, st *State) error {
	seen := map[string]bool{}
	if err := store.ScanSeen.IDs(tx, func(id string) bool {
		seen[id] = true
		return true
	}); err != nil {
		return err
	}
	recheck, restamp, present := s.sortForPassEnd(tx, seen)
	if stop, err := s.restampSeen(tx, restamp); stop || err != nil {
		return err
	}
	gone, stop, err := s.recheckUnseen(tx, recheck)
	if stop || err != nil {
		return err
	}
	if err := s.linkGone(tx, gone, present); err != nil {
		return err
	}
	if err := store.ScanSeen.Clear(tx); err != nil {
		return err
	}
	s.closePass(st)
	return nil
}

// sortForPassEnd sorts the records under the roots for the pass's end:
// those the pass did not see (recheck), those it saw (present), and of
// these the ones whose metadata stamp is to be taken again (restamp).
func (s *Scanner) sortForPassEnd(tx *store.Tx, seen map[string]bool) (recheck, restamp, present []*known) {
	s.mu.Lock()
	stampedAt := s.stampedAt
	s.stampedAt = map[string]time.Time{}
	s.mu.Unlock()
	now := time.Now()
	for _, k := range s.records(tx) {
		if !s.underRoots(k.root) {
			continue
		}
		if !seen[k.id] {
			recheck = append(recheck, k)
			continue
		}
		present = append(present, k)
		if at, ok := stampedAt[pathid.Key(k.root)]; !ok || now.Sub(at) > restampAfter {
			restamp = append(restamp, k)
		}
	}
	return recheck, restamp, present
}

// restampSeen takes the metadata stamps of records the pass saw again and
// reads the metadata of those whose stamp changed. stop: a record to read
// is gone (see finishPass).
func (s *Scanner) restampSeen(tx *store.Tx, restamp []*known) (stop bool, err error) {
	for _, sl := range restamp {
		s.lease.Progress()
		// 0: no stamp to trust (a file changed within the clock tick):
		// read again, and keep no stamp, so the next pass reads too.
		stamp := s.stampNow(sl.root)
		if stamp != 0 && stamp == sl.stamp {
			continue
		}
		p, err := tx.Project(sl.id)
		if err != nil || p == nil {
			return true, err
		}
		m := meta.Read(p.Root, s.opt.Meta)
		h := MetaHash(m)
		if h == p.MetaHash && slices.Equal(m.Problems, p.Meta.Problems) && stamp == p.MetaStamp {
			continue // read again for nothing (a racy stamp): no write
		}
		if h != p.MetaHash {
			p.RecordRevision++
			p.MetaHash = h
		}
		p.Meta, p.MetaStamp = m, stamp
		if err := tx.PutProject(p); err != nil {
			return true, err
		}
	}
	return false, nil
}

// recheckUnseen probes the records under the roots that the pass did not
// see and writes those whose availability changed; gone are those that
// just went missing. stop: a record to write is gone (see finishPass).
func (s *Scanner) recheckUnseen(tx *store.Tx, recheck []*known) (gone []*local.Project, stop bool, err error) {
	for _, sl := range recheck {
		s.lease.Progress()
		avail, state, why, changed := s.probeUnseen(sl)
		if !changed {
			continue
		}
		p, err := tx.Project(sl.id)
		if err != nil || p == nil {
			return nil, true, err
		}
		if avail == local.Missing {
			s.markMissing(p, why, "")
			p.IndexState = state
			gone = append(gone, p)
		} else {
			p.Availability, p.IndexState, p.Why = avail, state, why
			p.ValidatedAt = s.now()
			if avail == local.Present {
				p.MissingSince = time.Time{}
			}
		}
		if err := tx.PutProject(p); err != nil {
			return nil, true, err
		}
	}
	return gone, false, nil
}

// probeUnseen looks at an unseen record's root directly and says what its
// record should say; changed is false when that is what it says already.
func (s *Scanner) probeUnseen(sl *known) (avail local.Availability, state local.IndexState, why string, changed bool) {
	v := marker.Probe(sl.root)
	avail, state, why = v.Availability, v.IndexState, v.Why
	if r := s.rootOf(sl.root); r != "" && avail == local.Missing {
		if w, off := marker.Offline(r); off {
			// The whole root is gone or empty: an offline volume is
			// not a deleted project.
			avail, state, why = local.Inaccessible, local.MarkerUnknown, w
		}
	}
	if v.Project {
		// Present but unseen: it lies in a part the walk did not reach
		// (depth, exclusion, a gap). Its record stays as it is.
		if sl.avail == local.Present {
			return avail, state, why, false
		}
		why = ""
	} else if avail == local.Present {
		avail = local.Missing // the root is there, the index is not
	}
	return avail, state, why, sl.avail != avail || sl.state != state || sl.why != why
}

// closePass turns the finished pass's state into what the last pass
// found: each root's coverage, the refused index files, and no pass
// running.
func (s *Scanner) closePass(st *State) {
	s.coverRoots(st)
	st.Rejected, st.RejectedCount = st.PassRejected, st.PassRejectedCount
	st.PassRejected, st.PassRejectedCount = nil, 0
	st.PassRunning = false
	st.LastCompleted = s.now()
	st.Queued = 0
}

// restampAfter: at the end of a pass, a project's metadata stamp taken by
// this scanner within this long is not taken again.
const restampAfter = time.Second

// linkGone finds where records that just went missing moved: a present
// record with the same database identity, or failing that (a copy rather
// than a move, a file system that renumbers files) exactly one present
// record first seen in this pass with the same git remote and package name.
func (s *Scanner) linkGone(tx *store.Tx, gone []*local.Project, present []*known) error {
	if len(gone) == 0 {
		return nil
	}
	byDB := map[string]string{}
	byRepo := map[string][]string{}
	for _, p := range present {
		if p.dbID != "" {
			byDB[p.dbID] = p.id
		}
		if p.repo != "" && !p.firstSeen.Before(s.stateStarted()) {
			byRepo[p.repo] = append(byRepo[p.repo], p.id)
		}
	}
	for _, p := range gone {
		to := byDB[p.DBID]
		if k := repoKey(p); to == "" && k != "" && len(byRepo[k]) == 1 {
			to = byRepo[k][0]
		}
		if to == "" || to == p.ID {
			continue
		}
		p.MovedTo, p.Why = to, "its index moved to another folder"
		if err := tx.PutProject(p); err != nil {
			return err
		}
	}
	return nil
}

func (s *Scanner) stateStarted() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state.PassStarted
}

func repoKey(p *local.Project) string {
	if p.Meta.Git.Remote == "" || len(p.Meta.Packages) == 0 {
		return ""
	}
	return p.Meta.Git.Remote + "\x00" + p.Meta.Packages[0]
}

// coverRoots records, for each root of the finished pass, that it was
// walked to the end, with the gaps found under it.
func (s *Scanner) coverRoots(st *State) {
	roots := map[string]local.RootCoverage{}
	for _, r := range st.PassRoots {
		if !s.underRoots(r) {
			continue
		}
		rc := local.RootCoverage{Root: r, Completed: s.now(), Walk: st.ConfigKey}
		for _, g := range st.PassGaps {
			if pathid.Within(r, g.Path) {
				rc.GapCount++
				if len(rc.Gaps) < local.MaxGaps {
					rc.Gaps = append(rc.Gaps, g)
				}
			}
		}
		if st.PassGapCount > len(st.PassGaps) {
			// Gaps beyond the kept sample are not attributed to a root:
			// every root counts them, so none claims to be complete.
			rc.GapCount += st.PassGapCount - len(st.PassGaps)
		}
		roots[pathid.Key(r)] = rc
	}
	st.Roots = roots
}

// MetaHash fingerprints the stable metadata: a change bumps recordRevision
// (and so re-projects a GBrain card). Diagnostics are not part of it.
func MetaHash(m local.Metadata) uint64 {
	m.Problems = nil
	b, _ := json.Marshal(m)
	return xxh3.Hash(b)
}

// dbIDOf is the file identity of a root's codegraph.db ("" if unknown).
func dbIDOf(root string) string {
	id, err := pathid.FileID(root + string(os.PathSeparator) + marker.Dir + string(os.PathSeparator) + marker.File)
	if err != nil || id.IsZero() {
		return ""
	}
	return id.String()
}

// cardIDsOfErr maps the root keys of this machine's mirrored GBrain cards
// to their project ids.
func cardIDsOfErr(r *store.Reader, me string) (map[string]cardClaim, error) {
	cardIDs := map[string]cardClaim{}
	err := r.Cards(func(c *local.Card) error {
		if c.MachineID == me && c.RootKey != "" && ids.ValidProjectID(c.ProjectID) && !c.Edited {
			cardIDs[c.RootKey] = cardClaim{c.ProjectID, c.RecordRevision}
		}
		return nil
	})
	return cardIDs, err
}

// cardIDsOf is cardIDsOfErr for a patch, where a failure to read the
// cards leaves new roots with new ids (as before the mirror existed).
func cardIDsOf(r *store.Reader, me string) map[string]cardClaim {
	m, err := cardIDsOfErr(r, me)
	if err != nil {
		return map[string]cardClaim{}
	}
	return m
}
