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
	rep, err := store.Recover(ctx, cfg.DataDir)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "recovered %s: %d records kept with their ids (%d from the database, %d from the published catalog), %d dropped\n",
		local.Printable(cfg.DataDir), rep.Records, rep.FromDatabase, rep.FromViews, rep.Dropped)
	if rep.TablesUnreadable > 0 || rep.JournalsUnreadable > 0 {
		fmt.Fprintf(out, "damaged files read in part: %d of %d tables, %d of %d journals\n", rep.TablesUnreadable, rep.Tables, rep.JournalsUnreadable, rep.Journals)
	}
	fmt.Fprintf(out, "the damaged store is kept at %s; run `cgcat scan` to refill anything lost\n", local.Printable(rep.Aside))
	return nil
}
