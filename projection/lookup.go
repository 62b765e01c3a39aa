package projection

import (
	"cmp"
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
// implements local.CardLookup: in a serve, over the service's recall
// connection (made in the background; a lookup while it is being made
// answers local.ErrRecallNotReady at once); in a one-shot command, a short
// connection of its own, bounded by the caller's context. The card is
// decoded as the mirror decodes it (never a path) and is not stored.
type CardLookup struct {
	dial    func(ctx context.Context, handshake time.Duration) (gbrain.Brain, error)
	set     Settings
	dataDir string

	mu   sync.Mutex
	pool *Conn
	note func(error)
}

// UsePool makes the lookup use conn (a service's recall connection) and
// report every outcome to note (nil conn: dial its own).
func (l *CardLookup) UsePool(conn *Conn, note func(error)) {
	l.mu.Lock()
	l.pool, l.note = conn, note
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
	pool, note := l.pool, l.note
	l.mu.Unlock()
	if note == nil {
		note = func(error) {}
	}
	if pool != nil {
		if c = pool.Current(); c == nil {
			select {
			case <-pool.Warm():
				if c = pool.Current(); c == nil {
					err := fmt.Errorf("look up the GBrain card of %s: %w", projectID, cmp.Or(pool.LastError(), ErrNotConnected))
					note(err)
					return nil, err
				}
			case <-ctx.Done():
				return nil, fmt.Errorf("%w (%w)", local.ErrRecallNotReady, ctx.Err())
			}
		}
	} else {
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
		note(nil)
		return nil, nil
	}
	if err != nil {
		err = fmt.Errorf("look up the GBrain card of %s: %w", projectID, err)
		note(err)
		return nil, err
	}
	note(nil)
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

// PrimeMirror takes a lost catalog's ids back before the first scan of a
// store that binds no project yet (a first run, or a catalog or whole data
// dir that was lost): this machine's GBrain cards are read, however long it
// takes (progress hears of each), so the scan binds their old ids. When
// another process holds the projector lease, it waits for that process to
// do it. When GBrain cannot be reached, the state says the ids the scan
// binds are pending (no card is written until they are settled) and the
// error says why. It does nothing (nil, nil) when GBrain is off, the store
// binds projects, or the ids were taken back already.
func PrimeMirror(ctx context.Context, cfg *config.Config, st *store.Store, log *slog.Logger, progress func(done, total int)) (*Recovery, error) {
	if cfg == nil || !cfg.GBrain.Enabled {
		return nil, nil
	}
	rs, err := ReadRecovery(ctx, st)
	if err != nil || rs.Done {
		return nil, err
	}
	if empty, err := storeEmpty(ctx, st); err != nil || !empty {
		return nil, err
	}
	conn, err := NewConn(cfg, log)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	p := NewProjector(st, catalog.PolicyFrom(cfg), SettingsFrom(cfg, st), conn, log)
	return p.prime(ctx, progress)
}

// prime is PrimeMirror with this projector.
func (p *Projector) prime(ctx context.Context, progress func(done, total int)) (*Recovery, error) {
	if !p.Holding() {
		if err := p.TryAcquire(ctx); errors.Is(err, lease.ErrHeld) {
			return p.awaitRecovery(ctx)
		} else if err != nil {
			return nil, err
		}
		defer p.Release()
	}
	if _, err := p.conn.Client(ctx); err != nil {
		_ = MarkFresh(ctx, p.st, err)
		rs, _ := ReadRecovery(ctx, p.st)
		return rs, err
	}
	return p.Recover(ctx, progress)
}

// awaitRecovery waits while the process holding the projector lease takes
// the ids back, until the state says the cards were read or could not be.
func (p *Projector) awaitRecovery(ctx context.Context) (*Recovery, error) {
	for {
		rs, err := ReadRecovery(ctx, p.st)
		switch {
		case err != nil:
			return nil, err
		case rs.Done:
			return rs, nil
		case rs.Fresh && rs.Err != "":
			return rs, errors.New(rs.Err)
		}
		if !sleep(ctx, 200*time.Millisecond) {
			return rs, ctx.Err()
		}
		if err := p.TryAcquire(ctx); err == nil {
			// The holder went away before it was done: do it here.
			p.Release()
			return p.prime(ctx, nil)
		}
	}
}
