package main

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/config"
	"github.com/cgcat/cgcat/local/store"
	"github.com/cgcat/cgcat/projection"
)

// gbrainFollower runs GBrain's background service for the config in force.
// A serve lives as long as its host; a user who turns GBrain on or off, or
// points cgcat at another brain, must not have to restart every host — and
// a serve must never keep writing cards after GBrain was turned off.
type gbrainFollower struct {
	live   *config.Live
	st     *store.Store
	log    *slog.Logger
	recall *lateRecall
	cards  *lateCards
	// firstReady is handed to the first service only: a fresh store's first
	// discovery waits (bounded) for its mirror.
	firstReady chan struct{}
	every      time.Duration

	key    string // the GBrain settings the running service was started with
	svc    *projection.Service
	cancel context.CancelFunc
}

// gbrainSettingsKey is what a running service depends on: the gbrain
// section, the connection it names, and the data dir. Any change restarts it.
func gbrainSettingsKey(cfg *config.Config) string {
	if cfg == nil || !cfg.GBrain.Enabled {
		return ""
	}
	b, _ := json.Marshal(struct {
		GBrain  config.GBrain
		Conn    config.Connection
		DataDir string
	}{cfg.GBrain, cfg.Connections[cfg.GBrain.ConnectionRef], cfg.DataDir})
	return string(b)
}

// run follows the live config until ctx ends, then stops the service.
func (g *gbrainFollower) run(ctx context.Context) {
	every := g.every
	if every <= 0 {
		every = time.Second
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		// An invalid edit keeps the service of the last valid config, as
		// every answer keeps that config.
		if cfg, err := g.live.Current(); err == nil {
			g.apply(ctx, cfg)
		}
		select {
		case <-ctx.Done():
			g.stop()
			return
		case <-t.C:
		}
	}
}

func (g *gbrainFollower) apply(ctx context.Context, cfg *config.Config) {
	key := gbrainSettingsKey(cfg)
	if key == g.key {
		return
	}
	if g.svc != nil {
		g.log.Info("GBrain settings changed; restarting the GBrain service", "enabled", cfg.GBrain.Enabled)
	}
	g.stop()
	g.key = key
	if key == "" {
		if g.firstReady != nil { // turned off before it started: nothing to wait for
			close(g.firstReady)
			g.firstReady = nil
		}
		return
	}
	opt := projection.ServiceOptions{}
	if g.firstReady != nil {
		opt.MirrorReady, g.firstReady = g.firstReady, nil
	}
	sctx, cancel := context.WithCancel(ctx)
	// The projector asks the policy in force (the live config) per record.
	svc := startProjection(sctx, cfg, g.st, g.live, g.log, opt)
	g.svc, g.cancel = svc, cancel
	g.recall.set(svc.Recall())
	cl, err := projection.NewCardLookup(cfg, g.log)
	if err != nil || cl == nil {
		g.cards.set(nil)
		return
	}
	cl.UsePool(svc.Lookups())
	g.cards.set(cl)
}

// stop ends the running service: its GBrain child is closed and the
// projector lease released, so another serve (with the new settings) takes
// over. Bounded: a GBrain that hangs is not waited for long.
func (g *gbrainFollower) stop() {
	g.recall.set(nil)
	g.cards.set(nil)
	if g.svc == nil {
		return
	}
	g.cancel()
	select {
	case <-g.svc.Done():
	case <-time.After(5 * time.Second):
		g.log.Warn("the GBrain service did not stop within 5 s; going on without it")
	}
	g.svc, g.cancel = nil, nil
}

// lateRecall is the frontend's GBrain recall: the running service's, or
// none while GBrain is off, semantic search is off or the catalog (and so
// the service) is not ready yet.
type lateRecall struct {
	mu sync.Mutex
	r  local.Recall
}

func (l *lateRecall) set(r local.Recall) {
	l.mu.Lock()
	l.r = r
	l.mu.Unlock()
}

func (l *lateRecall) Recall(ctx context.Context, query string, limit int) ([]local.RecallHit, error) {
	l.mu.Lock()
	r := l.r
	l.mu.Unlock()
	if r == nil {
		return nil, errNoRecall
	}
	return r.Recall(ctx, query, limit)
}

var errNoRecall = errors.New("GBrain is not connected yet")

// Ready reports whether recall can ask GBrain right now (false while its
// connection is being made: not a GBrain failure).
func (l *lateRecall) Ready() bool {
	l.mu.Lock()
	r := l.r
	l.mu.Unlock()
	rr, ok := r.(interface{ Ready() bool })
	return ok && rr.Ready()
}

// lateCards is resolve's card lookup for the running service (none while
// GBrain is off: no card is asked for).
type lateCards struct {
	mu sync.Mutex
	l  *projection.CardLookup
}

func (c *lateCards) set(l *projection.CardLookup) {
	c.mu.Lock()
	c.l = l
	c.mu.Unlock()
}

func (c *lateCards) LookupCard(ctx context.Context, projectID string) (*local.Card, error) {
	c.mu.Lock()
	l := c.l
	c.mu.Unlock()
	if l == nil {
		return nil, nil
	}
	return l.LookupCard(ctx, projectID)
}
