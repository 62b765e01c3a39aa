package refresh

import (
	"context"
	"sync"
	"time"
)

// gate holds discovery back until something else is ready: GBrain's card
// mirror of a fresh store, so that the first scan gives this machine's
// projects their old ids back instead of minting new ones.
type gate struct {
	mu    sync.Mutex
	ready <-chan struct{}
	until time.Time
}

// HoldFirstRound makes discovery (rounds and the slices of tool calls) wait
// until ready is closed, for at most budget from now. Call it before Run.
func (r *Refresher) HoldFirstRound(ready <-chan struct{}, budget time.Duration) {
	r.gate.mu.Lock()
	r.gate.ready, r.gate.until = ready, time.Now().Add(budget)
	r.gate.mu.Unlock()
}

// waitGate waits for the gate, or until the earlier of its budget and
// deadline (zero: no deadline of the caller's own), or ctx.
func (r *Refresher) waitGate(ctx context.Context, deadline time.Time) {
	r.gate.mu.Lock()
	ready, until := r.gate.ready, r.gate.until
	r.gate.mu.Unlock()
	if ready == nil {
		return
	}
	if !deadline.IsZero() && deadline.Before(until) {
		until = deadline
	}
	t := time.NewTimer(time.Until(until))
	defer t.Stop()
	select {
	case <-ready:
		r.gate.mu.Lock()
		r.gate.ready = nil // open for good
		r.gate.mu.Unlock()
	case <-t.C:
	case <-ctx.Done():
	}
}
