package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/store"
	"github.com/spf13/cobra"
)

func newStoreCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{Use: "store", Short: "Maintain the catalog store"}
	asJSON := false
	recoverCmd := &cobra.Command{
		Use:   "recover",
		Short: "Rebuild a damaged catalog store from what is readable",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runStoreRecover(cmd.Context(), g, asJSON, cmd.OutOrStdout())
		},
	}
	recoverCmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	cmd.AddCommand(recoverCmd)
	return cmd
}

func runStoreRecover(ctx context.Context, g *globalOptions, asJSON bool, out io.Writer) error {
	cfg, err := g.loadConfig()
	if err != nil {
		return err
	}
	rep, err := store.Recover(ctx, cfg.DataDir)
	if err != nil {
		return err
	}
	if asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	if rep.Healthy {
		fmt.Fprintf(out, "the catalog store in %s is healthy (%d records), nothing to do\n", local.Printable(cfg.DataDir), rep.Records)
		if rep.Republished != "" {
			fmt.Fprintf(out, "the published catalog was published again: %s\n", local.Printable(rep.Republished))
		}
		return nil
	}
	fmt.Fprintf(out, "recovered %s: %d records kept with their ids (%d from the database, %d from the published catalog), %d dropped\n",
		local.Printable(cfg.DataDir), rep.Records, rep.FromDatabase, rep.FromViews, rep.Dropped)
	if rep.TablesUnreadable > 0 || rep.JournalsUnreadable > 0 {
		fmt.Fprintf(out, "damaged files read in part: %d of %d tables, %d of %d journals\n", rep.TablesUnreadable, rep.Tables, rep.JournalsUnreadable, rep.Journals)
	}
	fmt.Fprintf(out, "the damaged store is kept at %s; run `cgcat scan` to refill anything lost\n", local.Printable(rep.Aside))
	return nil
}
