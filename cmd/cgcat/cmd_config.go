package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/cgcat/cgcat/local/config"
	"github.com/spf13/cobra"
)

type configInitOptions struct {
	force bool
}

func newConfigCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{Use: "config", Short: "Create or check the config file"}
	o := &configInitOptions{}
	initCmd := &cobra.Command{
		Use:   "init --root DIR [--root DIR...] [--data-dir DIR]",
		Short: "Write a starter config file with these roots",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runConfigInit(cmd.Context(), g, o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	initCmd.Flags().BoolVar(&o.force, "force", false, "overwrite an existing config file")
	check := &cobra.Command{
		Use:   "check",
		Short: "Validate the config file and print what it means",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runConfigCheck(cmd.Context(), g, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.AddCommand(initCmd, check)
	return cmd
}

func runConfigInit(_ context.Context, g *globalOptions, o *configInitOptions, out, errOut io.Writer) error {
	if len(g.roots) == 0 {
		return &exitError{code: 2, err: errors.New("name at least one --root DIR: the folders that hold your code (cgcat never scans your whole home directory by default)")}
	}
	path := g.configPath
	if path == "" {
		path = config.DefaultPath()
	}
	if path == "" {
		return errors.New("cannot tell where to write the config: pass --config FILE")
	}
	path, _ = filepath.Abs(path)
	if _, err := os.Stat(path); err == nil && !o.force {
		return &exitError{code: 2, err: fmt.Errorf("%s already exists; pass --force to overwrite it, or edit it by hand", path)}
	}
	dd := g.dataDir
	if dd == "" {
		dd = config.DefaultDataDir()
	}
	cfg, err := config.AdHoc(g.roots, dd)
	if err != nil {
		return err
	}
	warn(errOut, cfg)
	b, err := config.Marshal(cfg)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(out, "wrote %s\nroots: %v\ndata dir: %s\nnext: `cgcat scan` to discover projects now, then `cgcat install codex` or `cgcat install opencode`\n", path, cfg.Discovery.Roots, cfg.DataDir)
	return nil
}

func runConfigCheck(_ context.Context, g *globalOptions, out, errOut io.Writer) error {
	cfg, err := g.loadConfig()
	if err != nil {
		return err
	}
	warn(errOut, cfg)
	where := cfg.Path
	if where == "" {
		where = "(no file; defaults)"
	}
	fmt.Fprintf(out, "config: %s — valid\n", where)
	fmt.Fprintf(out, "data dir: %s\n", cfg.DataDir)
	if !cfg.HasRoots() {
		fmt.Fprintln(out, "discovery roots: none — every tool answers setup_required until you add some")
	}
	for _, r := range cfg.Discovery.Roots {
		fmt.Fprintf(out, "discovery root: %s\n", r)
	}
	for _, r := range cfg.Sharing.Roots {
		fmt.Fprintf(out, "sharing root: %s\n", r)
	}
	for _, r := range cfg.Sharing.DenyRoots {
		fmt.Fprintf(out, "deny root: %s\n", r)
	}
	fmt.Fprintf(out, "absolute paths exposed: %v\n", cfg.Sharing.ExposeAbsolutePaths)
	fmt.Fprintf(out, "gbrain: enabled=%v\n", cfg.GBrain.Enabled)
	return nil
}
