// Package outbox is the durable queue of GBrain cards waiting to be written
// (R30). A row is written in the same store batch as the record change that
// causes it, so a card is never lost between the two; rows are keyed by
// project id, so a newer change replaces an older pending one (coalescing).
//
// The outbox never calls the network: the projector (package projection)
// drains it.
package outbox

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/cgcat/cgcat/local/store"
)

// prefix is the key space of pending rows: outbox/<projectId>.
const prefix = "outbox/"

// Row is one pending card.
type Row struct {
	ProjectID      string    `json:"projectId"`
	RecordRevision uint64    `json:"recordRevision"`
	Enqueued       time.Time `json:"enqueued"`
	// Seq is the catalogRevision of the change; the projector deletes a row
	// only if its Seq is still the one it projected (a newer change wins).
	Seq      uint64 `json:"seq"`
	Attempts int    `json:"attempts,omitempty"`
	LastErr  string `json:"lastErr,omitempty"`
}

// Enqueue records that projectID's card must be (re)written, inside tx.
// Call it only for stable metadata changes (a new record, a new
// recordRevision), never for validation timestamps.
func Enqueue(tx *store.Tx, projectID string, recordRevision uint64, now time.Time) {
	r := Row{ProjectID: projectID, RecordRevision: recordRevision, Enqueued: now, Seq: tx.NextRevision()}
	v, _ := json.Marshal(r)
	tx.Put(prefix+projectID, v)
}

// Pending lists up to n rows in key order (n <= 0: all).
func Pending(r interface {
	Scan(string, func(string, []byte) bool) error
}, n int) ([]Row, error) {
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
func Depth(r interface {
	Scan(string, func(string, []byte) bool) error
}) int {
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
	if json.Unmarshal(v, &cur) == nil && !cur.same(projected) {
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
	if err := json.Unmarshal(v, &cur); err != nil || !cur.same(projected) {
		return nil
	}
	cur.Attempts++
	cur.LastErr = cause.Error()
	nv, _ := json.Marshal(cur)
	tx.Put(prefix+projected.ProjectID, nv)
	return nil
}

// same reports whether r is still the row o that was read earlier. Seq alone
// is not unique: Enqueue in a batch that changes no record (a re-enqueue by
// `gbrain sync --full`) takes the same next revision as the next real change.
func (r Row) same(o Row) bool {
	return r.Seq == o.Seq && r.RecordRevision == o.RecordRevision && r.Enqueued.Equal(o.Enqueued)
}
