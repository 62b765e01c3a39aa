package main

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/catalog"
	"github.com/cgcat/cgcat/local/config"
	"github.com/cgcat/cgcat/local/refresh"
	"github.com/cgcat/cgcat/local/scan"
	"github.com/cgcat/cgcat/local/store"
	"github.com/cgcat/cgcat/projection"
	"github.com/cgcat/cgcat/server"
)

// This file is cgcat's composition root: the one place that opens a data
// dir's store (the authority), loads the catalog (the read model over what
// the store publishes), makes the refresher (discovery) and hands each
// part only what it needs. The read model never hands the store on, and
// the answering layer (package server) gets discovery as interfaces, so it
// links no LevelDB. `cgcat serve` wires once for its life (and starts the
// projection service over the same store: startProjection, followed by
// cmd_serve_gbrain.go); each CLI command wires once per run, and the commands
// that need the store alone open it here too (openStore).

// openStore opens a data dir's store for a command that reads or writes it
// without the catalog (forget, gbrain sync, retire and status, config).
func openStore(ctx context.Context, cfg *config.Config) (*store.Store, error) {
	return store.Open(ctx, cfg.DataDir)
}

// gbrainCommand is what `cgcat gbrain sync` and `retire` work with: the
// store and a projector over a connection to GBrain.
type gbrainCommand struct {
	st   *store.Store
	conn *projection.Conn
	p    *projection.Projector
	log  *slog.Logger
}

// openGBrainCommand loads the config, opens the store and dials GBrain for
// a CLI command; unreachable words the error when GBrain cannot be reached
// (what was kept, what to do). The caller closes the connection.
func openGBrainCommand(ctx context.Context, g *globalOptions, errOut io.Writer, unreachable func(error, *store.Store) error) (*gbrainCommand, error) {
	cfg, err := g.loadConfig()
	if err != nil {
		return nil, err
	}
	warn(errOut, cfg)
	if !cfg.GBrain.Enabled {
		return nil, gbrainDisabled(cfg)
	}
	logger := newLogger(errOut)
	st, err := openStore(ctx, cfg)
	if err != nil {
		return nil, err
	}
	conn, err := dialForCLI(ctx, cfg, logger, errOut)
	if err != nil {
		return nil, unreachable(err, st)
	}
	p := projection.NewProjector(st, catalog.PolicyFrom(cfg), projection.SettingsFrom(cfg, st), conn, logger)
	return &gbrainCommand{st: st, conn: conn, p: p, log: logger}, nil
}

// startProjection starts GBrain's projection service over st (serve's
// gbrainFollower, for the GBrain settings in force). Its projector asks the
// policy in force, followed live, per record.
func startProjection(ctx context.Context, cfg *config.Config, st *store.Store, live *config.Live, log *slog.Logger, opt projection.ServiceOptions) *projection.Service {
	return projection.StartWith(ctx, cfg, st, catalog.Live(live), log, opt)
}

// parts is what one process wires for a data dir.
type parts struct {
	st  *store.Store       // the authority: discovery and GBrain write it
	cat *catalog.Catalog   // the read model every answer comes from
	ref *refresh.Refresher // discovery, with its walk settings followed live
}

// openParts opens the store of cfg's data dir and loads its catalog, with
// the refresher whose walk settings follow live.
func openParts(ctx context.Context, cfg *config.Config, live *config.Live, log *slog.Logger) (*parts, error) {
	st, err := store.Open(ctx, cfg.DataDir)
	if err != nil {
		return nil, err
	}
	cat, err := catalog.Load(ctx, st)
	if err != nil {
		return nil, err
	}
	opts := func() scan.Options {
		if c, _ := live.Current(); c != nil {
			return scan.OptionsFrom(c)
		}
		return scan.OptionsFrom(cfg)
	}
	ref := refresh.New(st, cat, opts, time.Duration(cfg.Discovery.RefreshIntervalSeconds)*time.Second, log)
	return &parts{st: st, cat: cat, ref: ref}, nil
}

// wired is a frontend with the parts it opened in the background: the
// commands that write (a first scan, serve's discovery and GBrain) take
// the store and refresher from here, never from the catalog.
type wired struct {
	*server.Frontend
	mu sync.Mutex
	p  *parts
}

// parts are the parts the frontend opened (nil before Ready, or when the
// open failed).
func (w *wired) parts() *parts {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.p
}

// frontendGBrain is what GBrain adds to a frontend: semantic recall (nil
// unless gbrain.semanticSearch), the card lookup of resolve, and the mirror
// a fresh store's first discovery waits for.
type frontendGBrain struct {
	recall local.Recall
	cards  local.CardLookup
	// mirrorReady, when set, holds discovery back until it is closed (at
	// most mirrorBudget): GBrain's cards give a fresh store's ids back.
	mirrorReady  <-chan struct{}
	mirrorBudget time.Duration
}

// cliGBrain is the GBrain side of a CLI twin (`cgcat projects`, `cgcat
// resolve`): the mirror the lease holder keeps, and resolve's card lookup
// — the same path as the tools.
func cliGBrain(cfg *config.Config, log *slog.Logger) frontendGBrain {
	var gb frontendGBrain
	if cl, err := projection.NewCardLookup(cfg, log); err == nil && cl != nil {
		gb.cards = cl
	}
	return gb
}

// newFrontend builds the frontend that the tools and the CLI twins share.
// codegraphServer names the host's CodeGraph server in handoffs ("" for
// the default); gb is what GBrain adds (nothing when it is off).
func newFrontend(live *config.Live, workspace string, log *slog.Logger, gb frontendGBrain, codegraphServer string) *wired {
	return newFrontendFor(server.FaceAgent, live, workspace, log, gb, codegraphServer)
}

// newCLIFrontend is the frontend of the CLI twins (`cgcat projects`,
// `cgcat resolve`, completion): the same answers, GBrain's mirror and card
// lookup included, with messages that name cgcat's commands instead of the
// tools.
func newCLIFrontend(live *config.Live, errOut io.Writer) *wired {
	log := newLogger(errOut)
	cfg, _ := live.Current()
	var gb frontendGBrain
	if cfg != nil {
		gb = cliGBrain(cfg, log)
	}
	return newFrontendFor(server.FaceCLI, live, "", log, gb, "")
}

func newFrontendFor(face server.Face, live *config.Live, workspace string, log *slog.Logger, gb frontendGBrain, codegraphServer string) *wired {
	w := &wired{}
	cfg, _ := live.Current()
	opt := server.Options{
		Face:            face,
		Config:          live,
		Workspace:       workspace,
		Log:             log,
		Recall:          gb.recall,
		Cards:           gb.cards,
		CodeGraphServer: codegraphServer,
		Processes:       refresh.Processes{},
		Open: func(ctx context.Context, cfg *config.Config) (*catalog.Catalog, server.Discovery, error) {
			p, err := openParts(ctx, cfg, live, log)
			if err != nil {
				return nil, nil, explain(err) // a tool answer says what to do
			}
			if gb.mirrorReady != nil {
				p.ref.HoldFirstRound(gb.mirrorReady, gb.mirrorBudget)
			}
			w.mu.Lock()
			w.p = p
			w.mu.Unlock()
			return p.cat, explainedDiscovery{p.ref}, nil
		},
	}
	if cfg != nil {
		opt.SliceBudget = time.Duration(cfg.Discovery.MaxSliceMs) * time.Millisecond
		opt.RecallBudget = time.Duration(cfg.GBrain.RecallBudgetMs) * time.Millisecond
	}
	w.Frontend = server.NewFrontend(opt)
	return w
}

// explainedDiscovery is the refresher as the answers see it: its last
// failure says what to do about it (errors_for_people.go).
type explainedDiscovery struct{ *refresh.Refresher }

func (d explainedDiscovery) LastError() error { return explain(d.Refresher.LastError()) }
