package main

import (
	"context"
	"fmt"
	"io"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/store"
	"github.com/spf13/cobra"
)

func newStoreCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{Use: "store", Short: "Maintain the catalog store"}
	cmd.AddCommand(&cobra.Command{
		Use:   "recover",
		Short: "Rebuild a damaged catalog store from what is readable",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runStoreRecover(cmd.Context(), g, cmd.OutOrStdout())
		},
	})
	return cmd
}

func runStoreRecover(ctx context.Context, g *globalOptions, out io.Writer) error {
	cfg, err := g.loadConfig()
	if err != nil {
		return err
	}
	if err := store.Recover(cfg.DataDir); err != nil {
		return err
	}
	st, err := store.Open(ctx, cfg.DataDir)
	if err != nil {
		return fmt.Errorf("the store still does not open after recovery: %w", err)
	}
	n := 0
	_ = st.View(ctx, func(r *store.Reader) error {
		return r.Projects(func(_ *local.Project) error { n++; return nil })
	})
	fmt.Fprintf(out, "recovered %s: %d records readable; run `cgcat scan` to refill anything lost\n", cfg.DataDir, n)
	return nil
}
