package projection

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/cgcat/cgcat/gbrain"
	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/catalog"
	"github.com/cgcat/cgcat/local/config"
	"github.com/cgcat/cgcat/local/lease"
	"github.com/cgcat/cgcat/local/store"
)

// CardLookup asks GBrain for the card of one project id that the mirror
// does not hold (resolve of an id from another machine's fresh card). It
// implements local.CardLookup: a short connection for the one read —
// bounded by the caller's context — or the live connection of this
// process's service when it has one. The card is decoded as the mirror
// decodes it (never a path) and is not stored.
type CardLookup struct {
	dial    func(ctx context.Context, handshake time.Duration) (gbrain.Brain, error)
	set     Settings
	dataDir string

	mu   sync.Mutex
	live interface{ Current() gbrain.Brain }
}

// UseLive makes the lookup try a live connection first (the service's,
// while it has one) before dialing its own.
func (l *CardLookup) UseLive(live interface{ Current() gbrain.Brain }) {
	l.mu.Lock()
	l.live = live
	l.mu.Unlock()
}

var _ local.CardLookup = (*CardLookup)(nil)

// NewCardLookup prepares the lookup for cfg (nil, nil when GBrain is off).
func NewCardLookup(cfg *config.Config, log *slog.Logger) (*CardLookup, error) {
	if cfg == nil || !cfg.GBrain.Enabled {
		return nil, nil
	}
	conn, err := Connection(cfg)
	if err != nil {
		return nil, err
	}
	opts := gbrain.Options{ExpectedSource: cfg.GBrain.ExpectedSource, ExpectedBrain: cfg.GBrain.ExpectedBrain, Logger: log}
	dial := func(ctx context.Context, handshake time.Duration) (gbrain.Brain, error) {
		o := opts
		o.HandshakeTimeout = handshake
		return DialerFor(conn, o)(ctx)
	}
	return &CardLookup{dial: dial, set: Settings{SlugPrefix: cfg.GBrain.SlugPrefix}, dataDir: cfg.DataDir}, nil
}

// NewCardLookupDialer is NewCardLookup over a dialer of one's own (tests:
// an in-process fake).
func NewCardLookupDialer(cfg *config.Config, dial Dialer) *CardLookup {
	return &CardLookup{dial: func(ctx context.Context, _ time.Duration) (gbrain.Brain, error) { return dial(ctx) },
		set: Settings{SlugPrefix: cfg.GBrain.SlugPrefix}, dataDir: cfg.DataDir}
}

// LookupCard returns the card at slugPrefix/<projectID>, nil when GBrain
// has none (or only a page that names no project and machine).
func (l *CardLookup) LookupCard(ctx context.Context, projectID string) (*local.Card, error) {
	slug, err := gbrain.CardSlug(l.set.SlugPrefix, projectID)
	if err != nil {
		return nil, nil // no card can have this id
	}
	var c gbrain.Brain
	l.mu.Lock()
	live := l.live
	l.mu.Unlock()
	if live != nil {
		c = live.Current()
	}
	if c == nil {
		var handshake time.Duration
		if dl, ok := ctx.Deadline(); ok {
			handshake = max(time.Until(dl), time.Millisecond)
		}
		c, err = l.dial(ctx, handshake)
		if err != nil {
			return nil, fmt.Errorf("look up the GBrain card of %s: %w", projectID, err)
		}
		defer c.Close()
	}
	page, err := c.GetPage(ctx, slug, true)
	if errors.Is(err, gbrain.ErrPageNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("look up the GBrain card of %s: %w", projectID, err)
	}
	lc, ok := judgeCard(l.set, slug, page, nil)
	if !ok || lc.ProjectID != projectID {
		return nil, nil
	}
	// This machine's own cards are known from the mirror the lease holder
	// keeps; one only GBrain still has is being taken back (its project was
	// forgotten here) or not mirrored yet: it says nothing resolve may use.
	if id, err := store.ReadIdentity(l.dataDir); err == nil && lc.MachineID == id.MachineID {
		return nil, nil
	}
	return lc, nil
}

// PrimeMirror refreshes the mirror of a fresh store (no record yet: a first
// run, or a catalog that was lost) before discovery mints ids, so that this
// machine's cards give their ids back. It is bounded by budget; it does
// nothing when the store has records, GBrain is off, or another process
// holds the projector lease (that process refreshes the mirror itself). A
// nil report with a nil error means it had nothing to do.
func PrimeMirror(ctx context.Context, cfg *config.Config, st *store.Store, log *slog.Logger, budget time.Duration) (*MirrorReport, error) {
	if cfg == nil || !cfg.GBrain.Enabled {
		return nil, nil
	}
	fresh := false
	if err := st.View(ctx, func(r *store.Reader) error {
		fresh = true
		return r.Projects(func(*local.Project) error { fresh = false; return errStop })
	}); err != nil && !errors.Is(err, errStop) {
		return nil, err
	}
	if !fresh {
		return nil, nil
	}
	conn, err := NewConn(cfg, log)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	p := NewProjector(st, catalog.PolicyFrom(cfg), SettingsFrom(cfg, st), conn, log)
	if err := p.TryAcquire(ctx); err != nil {
		if errors.Is(err, lease.ErrHeld) {
			return nil, nil
		}
		return nil, err
	}
	defer p.Release()
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	if _, err := conn.Client(ctx); err != nil {
		return nil, err
	}
	rep, err := p.RefreshMirror(ctx, MirrorOptions{Budget: budget / 2})
	return &rep, err
}
