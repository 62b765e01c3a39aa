package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/catalog"
	"github.com/cgcat/cgcat/local/config"
	"github.com/cgcat/cgcat/local/refresh"
	"github.com/cgcat/cgcat/local/scan"
	"github.com/cgcat/cgcat/local/store"
	"github.com/cgcat/cgcat/projection"
	"github.com/cgcat/cgcat/server"
	"github.com/spf13/cobra"
)

// globalOptions are the flags every command takes.
type globalOptions struct {
	configPath string
	roots      []string
	dataDir    string
}

func newRootCommand(in io.Reader, out, errOut io.Writer) *cobra.Command {
	g := &globalOptions{}
	root := &cobra.Command{
		Use:           "cgcat",
		Short:         "Find local CodeGraph-indexed projects and hand their paths to coding agents",
		Long:          "cgcat discovers the projects on this machine that CodeGraph has indexed (a directory whose own .codegraph/ holds codegraph.db), keeps a catalog of them, and serves it to Codex, OpenCode and other MCP hosts with two tools: local_codegraph_projects and local_codegraph_resolve.",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       fmt.Sprintf("%s (commit %s, built %s)", version, commit, date),
	}
	root.SetIn(in)
	root.SetOut(out)
	root.SetErr(errOut)
	pf := root.PersistentFlags()
	pf.StringVar(&g.configPath, "config", "", "config file (default $CGCAT_CONFIG, else $XDG_CONFIG_HOME/cgcat/config.json)")
	pf.StringArrayVar(&g.roots, "root", nil, "scan and share this directory instead of the config's roots (repeatable)")
	pf.StringVar(&g.dataDir, "data-dir", "", "catalog directory for --root use (default $XDG_DATA_HOME/cgcat)")
	root.AddCommand(
		newServeCommand(g),
		newScanCommand(g),
		newProjectsCommand(g),
		newResolveCommand(g),
		newConfigCommand(g),
		newStoreCommand(g),
		newForgetCommand(g),
		newPruneCommand(g),
		newGBrainCommand(g),
		newInstallCommand(g),
		newUninstallCommand(g),
		newInstructionsCommand(g),
		newDoctorCommand(g),
		newVersionCommand(),
	)
	return root
}

// loadConfig finds the config: --root flags make an ad-hoc one; else
// --config, $CGCAT_CONFIG, $XDG_CONFIG_HOME/cgcat/config.json. No file at
// the default place is not an error: the result has no roots and every tool
// answers setup_required (R3).
func (g *globalOptions) loadConfig() (*config.Config, error) {
	if g.dataDir != "" {
		// A flag is relative to where the user stands; a config file's
		// paths must be absolute (R1).
		abs, err := filepath.Abs(g.dataDir)
		if err != nil {
			return nil, err
		}
		g.dataDir = abs
	}
	if len(g.roots) > 0 {
		dd := g.dataDir
		if dd == "" {
			dd = config.DefaultDataDir()
		}
		return config.AdHoc(g.roots, dd)
	}
	path := g.configPath
	explicit := path != "" || os.Getenv("CGCAT_CONFIG") != ""
	if path == "" {
		path = config.DefaultPath()
	}
	if !explicit {
		if _, err := os.Stat(path); os.IsNotExist(err) {
			cfg := config.Default()
			cfg.DataDir = config.DefaultDataDir()
			if g.dataDir != "" {
				cfg.DataDir = g.dataDir
			}
			cfg.Warnings = append(cfg.Warnings, fmt.Sprintf("no config file at %s; run `cgcat config init --root DIR` to create one", path))
			return &cfg, nil
		}
	}
	cfg, err := config.Load(path)
	if err != nil {
		return nil, err
	}
	if g.dataDir != "" {
		cfg.DataDir = g.dataDir
	}
	return cfg, nil
}

// liveConfig is the config a long-running process follows: the file (or
// the default place, where `cgcat config init` may create one later), or a
// fixed ad-hoc config for --root. An invalid file is no error here: the
// server still starts and says what is wrong in every answer.
func (g *globalOptions) liveConfig() *config.Live {
	cfg, err := g.loadConfig()
	if len(g.roots) > 0 {
		return config.NewLive("", cfg, err, nil)
	}
	path := g.configPath
	if path == "" {
		path = config.DefaultPath()
	}
	dataDir := g.dataDir
	return config.NewLive(path, cfg, err, func(c *config.Config) {
		if dataDir != "" {
			c.DataDir = dataDir
		}
	})
}

// openCatalog opens the store and loads the catalog with its refresher,
// whose walk settings follow live.
func openCatalog(ctx context.Context, cfg *config.Config, live *config.Live, log *slog.Logger) (*catalog.Catalog, *refresh.Refresher, error) {
	st, err := store.Open(ctx, cfg.DataDir)
	if err != nil {
		return nil, nil, err
	}
	cat, err := catalog.Load(ctx, st)
	if err != nil {
		return nil, nil, err
	}
	opts := func() scan.Options {
		if c, _ := live.Current(); c != nil {
			return scan.OptionsFrom(c)
		}
		return scan.OptionsFrom(cfg)
	}
	ref := refresh.New(cat, opts, time.Duration(cfg.Discovery.RefreshIntervalSeconds)*time.Second, log)
	return cat, ref, nil
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
// the default).
func newFrontend(live *config.Live, workspace string, log *slog.Logger, gb frontendGBrain, codegraphServer string) *server.Frontend {
	cfg, _ := live.Current()
	opt := server.Options{
		Config:          live,
		Workspace:       workspace,
		Log:             log,
		Recall:          gb.recall,
		Cards:           gb.cards,
		CodeGraphServer: codegraphServer,
		Open: func(ctx context.Context, cfg *config.Config) (*catalog.Catalog, *refresh.Refresher, error) {
			cat, ref, err := openCatalog(ctx, cfg, live, log)
			if err == nil && gb.mirrorReady != nil {
				ref.HoldFirstRound(gb.mirrorReady, gb.mirrorBudget)
			}
			return cat, ref, err
		},
	}
	if cfg != nil {
		opt.SliceBudget = time.Duration(cfg.Discovery.MaxSliceMs) * time.Millisecond
		opt.RecallBudget = time.Duration(cfg.GBrain.RecallBudgetMs) * time.Millisecond
	}
	return server.NewFrontend(opt)
}

func newLogger(w io.Writer) *slog.Logger {
	level := slog.LevelInfo
	switch strings.ToLower(os.Getenv("CGCAT_LOG")) {
	case "debug":
		level = slog.LevelDebug
	case "warn":
		level = slog.LevelWarn
	case "error":
		level = slog.LevelError
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}

func warn(w io.Writer, cfg *config.Config) {
	for _, m := range cfg.Warnings {
		fmt.Fprintln(w, "cgcat: warning:", m)
	}
}

// isTerminal reports whether w is a character device (progress lines go
// only to terminals).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
