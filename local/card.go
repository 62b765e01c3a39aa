package local

import "context"

// Card is a GBrain project card as the local mirror keeps it: what a card
// claims about a project — this machine's, another machine's, or one a
// person edited — never a binding. Only the local store binds ids to roots;
// a card never carries a path here, even when GBrain's copy does.
type Card struct {
	Slug           string   `json:"slug"`
	ProjectID      string   `json:"projectId"`
	MachineID      string   `json:"machineId"`
	Name           string   `json:"name,omitempty"`
	Description    string   `json:"description,omitempty"`
	Tags           []string `json:"tags,omitempty"`
	Packages       []string `json:"packages,omitempty"`
	Keywords       []string `json:"keywords,omitempty"`
	RecordRevision uint64   `json:"recordRevision,omitempty"`
	// RootKey is the keyed hash of the project's canonical root on its
	// machine (store.Identity.RootKey), never the root itself.
	RootKey string `json:"rootKey,omitempty"`
	// UpdatedAt is GBrain's updated_at, to refresh the mirror incrementally.
	UpdatedAt string `json:"updatedAt,omitempty"`
	// Edited says a person changed the card after cgcat wrote it.
	Edited bool `json:"edited,omitempty"`
	// Availability is the project's state on its machine as the card says
	// ("" for present: cards of format 1 say nothing); MovedTo the id it
	// moved to there.
	Availability string `json:"availability,omitempty"`
	MovedTo      string `json:"movedTo,omitempty"`
	// StaleSince is set when the card's machine has been silent (no GBrain
	// round, no card written) for longer than gbrain.staleMachineDays: the
	// day it was last heard of. The card stays, marked stale.
	StaleSince string `json:"staleSince,omitempty"`
}

// CardLookup asks GBrain itself for the card of a project id the mirror
// does not hold yet (resolve of an id from another machine's fresh card).
// It is bounded by the caller's context; nil means the lookup is off.
type CardLookup interface {
	LookupCard(ctx context.Context, projectID string) (*Card, error)
}
