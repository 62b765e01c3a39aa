package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/cgcat/cgcat/local/store"
	"github.com/cgcat/cgcat/projection"
	"github.com/spf13/cobra"
)

type gbrainRetireOptions struct {
	dryRun, undo, json bool
}

func newGBrainRetireCommand(g *globalOptions) *cobra.Command {
	o := &gbrainRetireOptions{}
	cmd := &cobra.Command{
		Use:   "retire MACHINE",
		Short: "Take a machine that is gone out of every cgcat search (its cards)",
		Long: "Retire a machine that is gone (a lost disk, a data dir deleted where the identity was not kept, a laptop given away): its machine page " +
			"in GBrain says so, every cgcat on this brain leaves its cards out of search at its next refresh, and its cards that are exactly as " +
			"cgcat wrote them are deleted from GBrain (a soft delete GBrain can undo for 72 h). A card a person edited is left alone and listed. " +
			"MACHINE is the machine id a card or a historical candidate names (m_…); never this machine's own. --undo lets it write cards again.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runGBrainRetire(cmd.Context(), g, o, args[0], cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().BoolVar(&o.dryRun, "dry-run", false, "say what would be deleted and written, change nothing (GBrain is read, not changed)")
	cmd.Flags().BoolVar(&o.undo, "undo", false, "undo a retirement: the machine writes its cards again (its deleted cards come back at its next `cgcat gbrain sync --full`)")
	cmd.Flags().BoolVar(&o.json, "json", false, "print the result as JSON")
	return cmd
}

func runGBrainRetire(ctx context.Context, g *globalOptions, o *gbrainRetireOptions, machine string, out, errOut io.Writer) error {
	c, err := openGBrainCommand(ctx, g, errOut, func(err error, _ *store.Store) error {
		return &exitError{code: 1, err: fmt.Errorf("cannot reach GBrain (%v); nothing was retired", err)}
	})
	if err != nil {
		return err
	}
	defer c.conn.Close()
	rep, err := c.p.Retire(ctx, machine, o.undo, o.dryRun)
	if err != nil {
		return &exitError{code: 1, err: fmt.Errorf("retire %s: %w", machine, err)}
	}
	if o.json {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	printRetire(out, rep)
	return nil
}

func printRetire(out io.Writer, rep *projection.RetireReport) {
	would := map[bool]string{true: "would be ", false: ""}[rep.DryRun]
	switch {
	case rep.Undo && rep.Already:
		fmt.Fprintf(out, "%s is not retired: nothing to undo\n", rep.Machine)
		return
	case rep.Undo:
		fmt.Fprintf(out, "%s %sretired no more: it writes its cards again (run `cgcat gbrain sync --full` on it to write back the cards deleted at its retirement)\n", rep.Machine, would)
		return
	case rep.Already:
		fmt.Fprintf(out, "%s was retired already\n", rep.Machine)
	default:
		fmt.Fprintf(out, "%s %sretired: every cgcat on this brain leaves its cards out of search at its next refresh\n", rep.Machine, would)
	}
	fmt.Fprintf(out, "cards: %d found, %d %sdeleted from GBrain, %d edited by people (left alone)\n", rep.Cards, rep.Deleted, would, len(rep.Edited))
	for _, e := range rep.Edited {
		fmt.Fprintf(out, "  left alone: %s: %s\n", e.Slug, e.Why)
	}
	if !rep.DryRun && !rep.MirrorUpdated {
		fmt.Fprintln(out, "this machine's mirror follows at the next round of the process holding the projector lease")
	}
}
