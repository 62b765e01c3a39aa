// Package outbox is the consuming side of the durable queue of GBrain cards
// waiting to be written (or taken back): Pending and Depth read it, Done
// drops a row the projector finished, Retry keeps one with its error, and
// Enqueue and Retract queue a row by hand (`gbrain sync --full`, a project
// hidden after its card was written).
//
// The rows themselves are written by the store, in the same batch as the
// record change that needs them (store.Tx.PutProject, DeleteProject), so a
// card is never lost between the two; rows are keyed by project id, so a
// newer change replaces an older pending one (coalescing), and Done drops
// a row only if no newer change replaced it meanwhile.
//
// The outbox never calls the network and never builds a card: the
// projector (package projection) drains it.
package outbox

import (
	"cmp"
	"errors"

	"github.com/cgcat/cgcat/local/store"
)

// Row is one pending card.
type Row = store.OutboxRow

// Enqueue records that projectID's card must be (re)written, inside tx
// (`gbrain sync --full`). Record changes enqueue by themselves.
func Enqueue(tx *store.Tx, projectID string, recordRevision uint64) {
	tx.EnqueueCard(projectID, recordRevision, false)
}

// Retract records that projectID's card must be taken back (its project is
// hidden from GBrain now), inside tx.
func Retract(tx *store.Tx, projectID string, recordRevision uint64) {
	tx.EnqueueCard(projectID, recordRevision, true)
}

// Pending lists up to n rows in project id order (n <= 0: all). An
// unreadable row is listed by its id alone, and the first such error is
// returned with the rows.
func Pending(r store.Source, n int) ([]Row, error) {
	var rows []Row
	var bad error
	err := store.Outbox.Each(r, func(id string, row Row, err error) bool {
		if err != nil {
			bad = cmp.Or(bad, err)
			row = Row{ProjectID: id}
		}
		rows = append(rows, row)
		return n <= 0 || len(rows) < n
	})
	return rows, cmp.Or(err, bad)
}

// Depth counts pending rows.
func Depth(r store.Source) int { return store.Outbox.Len(r) }

// Done removes projectID's row if it is still the one that was projected
// (same Seq, RecordRevision and Enqueued time); a row replaced by a newer
// change stays.
func Done(tx *store.Tx, projected Row) error {
	cur, ok, err := store.Outbox.Get(tx, projected.ProjectID)
	switch {
	case errors.Is(err, store.ErrUnreadable):
		// dropped too: it can never be projected
	case err != nil || !ok:
		return err
	case !same(cur, projected):
		return nil
	}
	store.Outbox.Delete(tx, projected.ProjectID)
	return nil
}

// Retry records a failed attempt on the row (if it is still the same one).
func Retry(tx *store.Tx, projected Row, cause error) error {
	cur, ok, err := store.Outbox.Get(tx, projected.ProjectID)
	if err != nil || !ok || !same(cur, projected) {
		return nil
	}
	cur.Attempts++
	cur.LastErr = cause.Error()
	return store.Outbox.Put(tx, projected.ProjectID, cur)
}

// same reports whether r is still the row o that was read earlier. Seq alone
// is not unique: a re-enqueue in a batch that changes no record takes the
// same next revision as the next real change.
func same(r, o Row) bool {
	return r.Seq == o.Seq && r.RecordRevision == o.RecordRevision && r.Enqueued.Equal(o.Enqueued) && r.Retract == o.Retract
}
