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
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/cgcat/cgcat/local/store"
)

const prefix = store.PrefixOutbox

// Row is one pending card.
type Row = store.OutboxRow

// Enqueue records that projectID's card must be (re)written, inside tx
// (`gbrain sync --full`). Record changes enqueue by themselves.
func Enqueue(tx *store.Tx, projectID string, recordRevision uint64, _ time.Time) {
	tx.EnqueueCard(projectID, recordRevision, false)
}

// Retract records that projectID's card must be taken back (its project is
// hidden from GBrain now), inside tx.
func Retract(tx *store.Tx, projectID string, recordRevision uint64) {
	tx.EnqueueCard(projectID, recordRevision, true)
}

// Pending lists up to n rows in key order (n <= 0: all).
func Pending(r store.Scanner, n int) ([]Row, error) {
	var rows []Row
	var bad error
	err := r.Scan(prefix, func(k string, v []byte) bool {
		var row Row
		if err := json.Unmarshal(v, &row); err != nil {
			bad = fmt.Errorf("outbox row %s is unreadable: %w", k, err)
			row = Row{ProjectID: strings.TrimPrefix(k, prefix)}
		}
		rows = append(rows, row)
		return n <= 0 || len(rows) < n
	})
	if err == nil {
		err = bad
	}
	return rows, err
}

// Depth counts pending rows.
func Depth(r store.Scanner) int {
	n := 0
	_ = r.Scan(prefix, func(string, []byte) bool { n++; return true })
	return n
}

// Done removes projectID's row if it is still the one that was projected
// (same Seq, RecordRevision and Enqueued time); a row replaced by a newer
// change stays.
func Done(tx *store.Tx, projected Row) error {
	v, ok, err := tx.Get(prefix + projected.ProjectID)
	if err != nil || !ok {
		return err
	}
	var cur Row
	if json.Unmarshal(v, &cur) == nil && !same(cur, projected) {
		return nil
	}
	tx.Delete(prefix + projected.ProjectID)
	return nil
}

// Retry records a failed attempt on the row (if it is still the same one).
func Retry(tx *store.Tx, projected Row, cause error) error {
	v, ok, err := tx.Get(prefix + projected.ProjectID)
	if err != nil || !ok {
		return err
	}
	var cur Row
	if err := json.Unmarshal(v, &cur); err != nil || !same(cur, projected) {
		return nil
	}
	cur.Attempts++
	cur.LastErr = cause.Error()
	nv, _ := json.Marshal(cur)
	tx.Put(prefix+projected.ProjectID, nv)
	return nil
}

// same reports whether r is still the row o that was read earlier. Seq alone
// is not unique: a re-enqueue in a batch that changes no record takes the
// same next revision as the next real change.
func same(r, o Row) bool {
	return r.Seq == o.Seq && r.RecordRevision == o.RecordRevision && r.Enqueued.Equal(o.Enqueued) && r.Retract == o.Retract
}
