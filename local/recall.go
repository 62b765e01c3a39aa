package local

import (
	"context"
	"errors"
)

// ErrRecallNotReady means recall was not asked because its own GBrain
// connection is still being made: not a GBrain failure (gbrainState keeps
// the shared truth); its hits join the next searches.
var ErrRecallNotReady = errors.New("GBrain recall is still connecting")

// Recall is optional GBrain recall: project ids of cards that match a query.
// The answering side keeps only hits whose ids are bound on this machine and
// visible in its own view; GBrain's side implements it. It lives here, below
// both, so neither imports the other.
type Recall interface {
	Recall(ctx context.Context, query string, limit int) ([]RecallHit, error)
}

// RecallHit is one GBrain card that matched.
type RecallHit struct {
	ProjectID string
	MachineID string
}
