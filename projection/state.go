package projection

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"github.com/cgcat/cgcat/local/lease"
	"github.com/cgcat/cgcat/local/store"
	"github.com/cgcat/cgcat/outbox"
)

// This package's doors into the store: the rows it owns, with their types
// (the store builds the keys).
var (
	states       = store.ProjectionStates[State]()                            // per project id
	lastSyncRow  = store.ProjectionMeta[SyncRecord](store.MetaLastSync)       // the last drain that did something
	reconcileRow = store.ProjectionMeta[ReconcileReport](store.MetaReconcile) // the last reconcile
)

const (
	fenceName    = "projector"       // store fencing name of the lease
	leaseFile    = "projector.lease" // in the data dir
	maxListed    = 50                // conflicts, orphans… kept in summaries
	unsharedNote = "not shared by this process's sharing view"
)

// LeasePath is the projector lease file of a data dir.
func LeasePath(dataDir string) string { return filepath.Join(dataDir, leaseFile) }

// State is what the projector knows about one project's card. PageHash is
// xxh3 of the content GBrain returned right after our last write (GBrain
// re-serialises pages; that form is a fixed point): a later read with
// another hash means someone else changed the page.
type State struct {
	Slug     string `json:"slug"`
	CardHash uint64 `json:"cardHash"` // xxh3 of what we encoded and wrote
	PageHash uint64 `json:"pageHash"` // xxh3 of the read-back content
	// PageUpdatedAt is GBrain's updated_at of the read-back page; list_pages
	// showing another value means the page changed since (reconcile).
	PageUpdatedAt string `json:"pageUpdatedAt,omitempty"`
	// Earlier are the page hashes of cgcat's earlier writes of this card,
	// newest first (at most maxEarlier). GBrain may apply a write after
	// cgcat gave up waiting for it (a slow server finishing a call whose
	// client timed out): the late write puts one of these back. Such a page
	// is cgcat's own words, not a person's edit.
	Earlier []uint64 `json:"earlier,omitempty"`
	// Unconfirmed is set when a put_page was sent and its outcome is not
	// known (no answer, or the read-back failed): the card may be in GBrain
	// although PageHash says nothing was written. Cleared by the next write
	// or retraction.
	Unconfirmed    bool      `json:"unconfirmed,omitempty"`
	RecordRevision uint64    `json:"recordRevision"`
	WrittenAt      time.Time `json:"writtenAt"`
	// Conflict is set while the page holds content we did not write. It is
	// cleared by the next successful projection of this card.
	Conflict *ConflictNote `json:"conflict,omitempty"`
	// Failed is set when the card cannot be written as it is (GBrain refused
	// its content, or it does not encode); cleared by a later success.
	Failed string `json:"failed,omitempty"`
	// Unshared is set when the live policy refused the project; cleared by a
	// later success.
	Unshared bool `json:"unshared,omitempty"`
	// Retracted is set once the card of a hidden project was deleted from
	// GBrain (PageHash is then 0); a later success clears it.
	Retracted bool `json:"retracted,omitempty"`
}

// maxEarlier bounds State.Earlier.
const maxEarlier = 4

// ours reports whether a page with content hash h is one cgcat wrote for
// this state's card: the last write, or an earlier one landing late.
func (s *State) ours(h uint64) bool {
	return s != nil && s.PageHash != 0 && (h == s.PageHash || slices.Contains(s.Earlier, h))
}

// ConflictNote describes a card someone else changed.
type ConflictNote struct {
	Why      string    `json:"why"`
	At       time.Time `json:"at"`
	PageHash uint64    `json:"pageHash"` // hash of the foreign content seen
}

func readState(r store.Source, projectID string) (*State, error) {
	s, ok, err := states.Get(r, projectID)
	switch {
	case errors.Is(err, store.ErrUnreadable):
		return nil, nil // unreadable state is no state: the next read decides
	case err != nil || !ok:
		return nil, err
	}
	return &s, nil
}

func putState(tx *store.Tx, projectID string, s *State) { _ = states.Put(tx, projectID, *s) }

func deleteState(tx *store.Tx, projectID string) { states.Delete(tx, projectID) }

// SyncRecord summarises the last drain that did something.
type SyncRecord struct {
	At       time.Time `json:"at"`
	PID      int       `json:"pid"`
	Report   Report    `json:"report"`
	Duration string    `json:"duration"`
}

// ConflictInfo is one conflicted or failed card, for status and doctor.
type ConflictInfo struct {
	ProjectID string    `json:"projectId"`
	Slug      string    `json:"slug"`
	Why       string    `json:"why"`
	At        time.Time `json:"at,omitzero"`
}

// Status is the projection as the store knows it (no network).
type Status struct {
	OutboxDepth int `json:"outboxDepth"`
	// Cards is how many projects have a recorded card.
	Cards         int              `json:"cards"`
	LastSync      *SyncRecord      `json:"lastSync,omitempty"`
	LastReconcile *ReconcileReport `json:"lastReconcile,omitempty"`
	Conflicts     []ConflictInfo   `json:"conflicts"`
	Failed        []ConflictInfo   `json:"failed"`
	// OldestPending is the enqueue time of the oldest outbox row.
	OldestPending time.Time `json:"oldestPending,omitzero"`
	// PendingErrors are the last errors of rows that failed to project.
	PendingErrors []string `json:"pendingErrors,omitempty"`
	LeaseHeld     bool     `json:"leaseHeld"`
	LeasePID      int      `json:"leasePid,omitempty"`
}

// ReadStatus reads the projection's state from the store in one View.
func ReadStatus(ctx context.Context, st *store.Store) (*Status, error) {
	s := &Status{Conflicts: []ConflictInfo{}, Failed: []ConflictInfo{}}
	err := st.View(ctx, func(r *store.Reader) error {
		rows, err := outbox.Pending(r, 0)
		if err != nil {
			return err
		}
		s.OutboxDepth = len(rows)
		for _, row := range rows {
			if s.OldestPending.IsZero() || row.Enqueued.Before(s.OldestPending) {
				s.OldestPending = row.Enqueued
			}
			if row.LastErr != "" && len(s.PendingErrors) < 5 {
				s.PendingErrors = append(s.PendingErrors, fmt.Sprintf("%s (%d attempts): %s", row.ProjectID, row.Attempts, row.LastErr))
			}
		}
		if err := states.Each(r, func(id string, ps State, err error) bool {
			if err != nil {
				return true
			}
			if ps.PageHash != 0 {
				s.Cards++
			}
			if ps.Conflict != nil {
				s.Conflicts = append(s.Conflicts, ConflictInfo{ProjectID: id, Slug: ps.Slug, Why: ps.Conflict.Why, At: ps.Conflict.At})
			}
			if ps.Failed != "" {
				s.Failed = append(s.Failed, ConflictInfo{ProjectID: id, Slug: ps.Slug, Why: ps.Failed})
			}
			return true
		}); err != nil {
			return err
		}
		if sr, ok, _ := lastSyncRow.Get(r); ok {
			s.LastSync = &sr
		}
		if rr, ok, _ := reconcileRow.Get(r); ok {
			s.LastReconcile = &rr
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(s.Conflicts, func(i, j int) bool { return s.Conflicts[i].Slug < s.Conflicts[j].Slug })
	sort.Slice(s.Failed, func(i, j int) bool { return s.Failed[i].Slug < s.Failed[j].Slug })
	s.LeaseHeld, s.LeasePID = lease.Holder(LeasePath(st.DataDir()))
	return s, nil
}
