package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"path/filepath"
	"runtime"
	"sync"
	"time"

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
	// short rounds; answers come from the card mirror it keeps. The service
	// follows the config in force (turned on, off or pointed elsewhere while
	// the host runs). A fresh store's first discovery waits (bounded) for
	// the mirror, so this machine's cards give their ids back.
	gbf := &gbrainFollower{live: live, log: logger, recall: &lateRecall{}, cards: &lateCards{}}
	gb := frontendGBrain{recall: gbf.recall, cards: gbf.cards}
	if cfg != nil && cfg.GBrain.Enabled {
		gbf.firstReady = make(chan struct{})
		gb.mirrorReady, gb.mirrorBudget = gbf.firstReady, mirrorPrimeBudget
	}
	f := newFrontend(live, o.workspace, logger, gb, o.codegraphServer)
	var bg sync.WaitGroup
	if cfg != nil && cfg.HasRoots() {
		bg.Add(1)
		go func() {
			defer bg.Done()
			if err := f.Ready(ctx); err != nil {
				if ctx.Err() == nil {
					logger.Error("catalog unavailable; tools will answer with an error until this is fixed", "err", err)
				}
				if gbf.firstReady != nil {
					close(gbf.firstReady)
				}
				return
			}
			// GBrain never blocks discovery beyond the prime budget, nor
			// any answer (R32).
			p := f.parts()
			gbf.st = p.st
			bg.Add(1)
			go func() { defer bg.Done(); gbf.run(ctx) }()
			p.ref.Run(ctx)
		}()
	}

	s := protocol.New(f.Frontend, version)
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

// mirrorPrimeBudget is the safety net of a fresh store's first discovery,
// which waits while this machine's GBrain cards are read (so its projects
// keep their ids). The wait ends much sooner: once they were read, or as
// soon as GBrain fails (the ids are then pending, and said so).
const mirrorPrimeBudget = 15 * time.Minute
