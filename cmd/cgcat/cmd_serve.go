package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/catalog"
	"github.com/cgcat/cgcat/projection"
	"github.com/cgcat/cgcat/server"
	"github.com/cgcat/cgcat/server/protocol"
	mcpserver "github.com/mark3labs/mcp-go/server"
	"github.com/spf13/cobra"
)

type serveOptions struct {
	workspace string
	// codegraphServer is the name the host gave CodeGraph's MCP server.
	codegraphServer string
}

func newServeCommand(g *globalOptions) *cobra.Command {
	o := &serveOptions{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the MCP stdio server (for Codex, OpenCode and other MCP hosts)",
		Long:  "Serve the two catalog tools over MCP on stdin/stdout. stdout carries MCP messages only; logs go to stderr. Discovery runs in the background; closing stdin ends the server.",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServe(cmd.Context(), g, o, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVar(&o.workspace, "workspace", "", "absolute path of the primary workspace (a ranking hint only)")
	cmd.Flags().StringVar(&o.codegraphServer, "codegraph-server", "codegraph", "the name this host gave CodeGraph's own MCP server (named in every handoff as mcpServerHint)")
	return cmd
}

func runServe(ctx context.Context, g *globalOptions, o *serveOptions, in io.Reader, out, errOut io.Writer) error {
	logger := newLogger(errOut)
	if path := os.Getenv("CGCAT_CPUPROFILE"); path != "" {
		// For benchmarks (bench/load.sh): where a busy server spends its time.
		if f, err := os.Create(strings.ReplaceAll(path, "%d", strconv.Itoa(os.Getpid()))); err == nil {
			_ = pprof.StartCPUProfile(f)
			defer func() { pprof.StopCPUProfile(); f.Close() }()
		}
	}
	live := g.liveConfig()
	// An invalid config does not stop the server: a host would only show a
	// dead server. Every answer says what is wrong, and a corrected file is
	// picked up by itself.
	cfg, cfgErr := live.Current()
	if cfgErr != nil {
		logger.Error("the configuration cannot be used; every tool answers setup_required until it is fixed", "err", cfgErr)
	}
	if cfg != nil {
		for _, w := range cfg.Warnings {
			logger.Warn(w)
		}
	}
	if o.workspace != "" && !filepath.IsAbs(o.workspace) {
		return &exitError{code: 2, err: fmt.Errorf("--workspace %q must be an absolute path", o.workspace)}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	// GBrain: only the process holding the projector lease connects, for
	// short rounds; answers come from the card mirror it keeps. A fresh
	// store's first discovery waits (bounded) for that mirror, so this
	// machine's cards give their ids back.
	var gb frontendGBrain
	var recall *lateRecall
	var cards *projection.CardLookup
	var mirrorReady chan struct{}
	if cfg != nil && cfg.GBrain.Enabled {
		if cfg.GBrain.SemanticSearch {
			recall = &lateRecall{}
			gb.recall = recall
		}
		if cl, err := projection.NewCardLookup(cfg, logger); err == nil && cl != nil {
			cards = cl
			gb.cards = cl
		}
		mirrorReady = make(chan struct{})
		gb.mirrorReady, gb.mirrorBudget = mirrorReady, mirrorPrimeBudget
	}
	f := newFrontend(live, o.workspace, logger, gb, o.codegraphServer)
	var bg sync.WaitGroup
	var svc *projection.Service
	if cfg != nil && cfg.HasRoots() {
		bg.Add(1)
		go func() {
			defer bg.Done()
			if err := f.Ready(ctx); err != nil {
				if ctx.Err() == nil {
					logger.Error("catalog unavailable; tools will answer with an error until this is fixed", "err", err)
				}
				return
			}
			if mirrorReady != nil {
				// GBrain never blocks discovery beyond the prime budget,
				// nor any answer (R32). The projector asks the policy in
				// force (the live config) per record.
				svc = projection.StartWith(ctx, cfg, f.Catalog().Store(), catalog.Live(live), logger,
					projection.ServiceOptions{MirrorReady: mirrorReady, PrimeBudget: mirrorPrimeBudget})
				if recall != nil {
					recall.set(svc.Recall())
				}
				if cards != nil {
					cards.UseLive(svc.Live())
				}
			}
			f.Refresher().Run(ctx)
			if svc != nil {
				<-svc.Done()
			}
		}()
	}

	s := protocol.New(f, version)
	stdio := mcpserver.NewStdioServer(s)
	stdio.SetErrorLogger(log.New(errOut, "cgcat mcp: ", log.LstdFlags))
	// Calls answer from memory in about a millisecond; a burst (a host
	// fanning out searches) must queue, not fall back to answering one at
	// a time on the read loop.
	mcpserver.WithWorkerPoolSize(min(16, 4*runtime.GOMAXPROCS(0)))(stdio)
	mcpserver.WithQueueSize(4096)(stdio)
	in, out = server.BoundStdio(in, out, server.MaxMessageBytes)
	err := stdio.Listen(ctx, in, out)
	stopped := ctx.Err() != nil // a signal, not a failure of Listen itself
	// stdin closed (or a signal): stop our own work only, quickly.
	cancel()
	done := make(chan struct{})
	go func() { bg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		logger.Warn("background discovery did not stop in time; exiting anyway (the scan queue resumes next time)")
	}
	if err != nil && !stopped {
		return err
	}
	return nil
}

// lateRecall is the frontend's GBrain recall before the catalog (and so the
// projection service) is ready: until then it says GBrain is not connected.
// mirrorPrimeBudget bounds how long a fresh store's first discovery waits
// for GBrain's card mirror.
const mirrorPrimeBudget = 20 * time.Second

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
		return nil, errors.New("GBrain is not connected yet")
	}
	return r.Recall(ctx, query, limit)
}
