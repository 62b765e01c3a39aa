package store

import "time"

// The outbox's rows: outbox/<projectId> → OutboxRow. The store writes a row
// in the same batch as the record change that needs it (PutProject,
// DeleteProject, through EnqueueCard), so a card is never lost between the
// two; package outbox reads and drops rows through the Outbox door.

// OutboxRow is one pending GBrain card.
type OutboxRow struct {
	ProjectID      string    `json:"projectId"`
	RecordRevision uint64    `json:"recordRevision"`
	Enqueued       time.Time `json:"enqueued"`
	// Seq is the catalogRevision of the change; the projector deletes a row
	// only if it is still the one it projected (a newer change wins).
	Seq uint64 `json:"seq"`
	// Retract asks for the card to be taken back: its project was
	// forgotten, or is hidden from GBrain now.
	Retract  bool   `json:"retract,omitempty"`
	Attempts int    `json:"attempts,omitempty"`
	LastErr  string `json:"lastErr,omitempty"`
}

// Outbox is the door to the outbox's rows, keyed by project id.
var Outbox = Table[OutboxRow]{prefix: prefixOutbox}

// EnqueueCard queues (or replaces) projectID's pending card. PutProject and
// DeleteProject call it; `gbrain sync --full` and retractions of hidden
// projects call it through package outbox.
func (tx *Tx) EnqueueCard(projectID string, recordRevision uint64, retract bool) {
	r := OutboxRow{ProjectID: projectID, RecordRevision: recordRevision, Enqueued: time.Now().UTC(), Seq: tx.NextRevision(), Retract: retract}
	_ = Outbox.Put(tx, projectID, r) // a plain struct always encodes
}
