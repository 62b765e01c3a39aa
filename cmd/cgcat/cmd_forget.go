package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/cgcat/cgcat/gbrain"
	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/ids"
	"github.com/cgcat/cgcat/local/store"
	"github.com/spf13/cobra"
)

type forgetOptions struct {
	dryRun     bool
	json       bool
	missingFor string // prune only
}

// forgotten is one record forget or prune removed (or would remove).
type forgotten struct {
	ProjectID    string `json:"projectId"`
	Name         string `json:"name"`
	Root         string `json:"root"`
	Availability string `json:"availability"`
	MissingSince string `json:"missingSince,omitempty"`
}

type forgetReport struct {
	DryRun    bool        `json:"dryRun"`
	Forgotten []forgotten `json:"forgotten"`
	Unknown   []string    `json:"unknown,omitempty"`
	// gbrain: GBrain is on, so the removed records' cards are taken back.
	gbrain bool
}

func newForgetCommand(g *globalOptions) *cobra.Command {
	o := &forgetOptions{}
	cmd := &cobra.Command{
		Use:   "forget ID...",
		Short: "Remove records from the catalog (with GBrain on, their cards are taken back on the next sync)",
		Long: "Remove the records with these project ids. A forgotten id then resolves as unknown_project. " +
			"A project that is still on disk is found again by the next scan, under a new id.",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runForget(cmd.Context(), g, o, args, cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVar(&o.dryRun, "dry-run", false, "show what would be removed; change nothing")
	cmd.Flags().BoolVar(&o.json, "json", false, "print the result as JSON")
	return cmd
}

func newPruneCommand(g *globalOptions) *cobra.Command {
	o := &forgetOptions{}
	cmd := &cobra.Command{
		Use:   "prune",
		Short: "Remove records that have been missing for a while",
		Long: "Remove every record confirmed missing for longer than --missing-for (days like the config's " +
			"discovery.retainMissingDays, 3d, or a Go duration such as 72h or 1d12h; 0 removes every missing record; " +
			"default: discovery.retainMissingDays). Inaccessible records (an offline volume, no permission) are never pruned.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runPrune(cmd.Context(), g, o, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&o.missingFor, "missing-for", "", "how long a record must have been missing (3d, 72h, 1d12h; 0 = all missing)")
	cmd.Flags().BoolVar(&o.dryRun, "dry-run", false, "show what would be removed; change nothing")
	cmd.Flags().BoolVar(&o.json, "json", false, "print the result as JSON")
	return cmd
}

func runForget(ctx context.Context, g *globalOptions, o *forgetOptions, projectIDs []string, out io.Writer) error {
	for _, id := range projectIDs {
		if !ids.ValidProjectID(id) {
			return &exitError{code: 2, err: fmt.Errorf("%q is not a project id (ids look like cg_ followed by 16 letters and digits; `cgcat projects` shows them)", local.Printable(id))}
		}
	}
	rep, err := removeRecords(ctx, g, o.dryRun, func(p *local.Project) bool {
		for _, id := range projectIDs {
			if p.ID == id {
				return true
			}
		}
		return false
	})
	if err != nil {
		return err
	}
	for _, id := range projectIDs {
		found := false
		for _, f := range rep.Forgotten {
			found = found || f.ProjectID == id
		}
		if !found {
			rep.Unknown = append(rep.Unknown, id)
		}
	}
	if err := printForget(out, rep, o.json); err != nil {
		return err
	}
	if len(rep.Unknown) > 0 {
		return &exitError{code: 3}
	}
	return nil
}

func runPrune(ctx context.Context, g *globalOptions, o *forgetOptions, out io.Writer) error {
	cfg, err := g.loadConfig()
	if err != nil {
		return err
	}
	age := time.Duration(cfg.Discovery.RetainMissingDays) * 24 * time.Hour
	if o.missingFor != "" {
		d, err := parseAge(o.missingFor)
		if err != nil {
			return &exitError{code: 2, err: fmt.Errorf("--missing-for %q is not a duration; write days like the config (30d), hours (72h), both (1d12h), or 0 (every missing record)", local.Printable(o.missingFor))}
		}
		age = d
	}
	now := time.Now()
	rep, err := removeRecords(ctx, g, o.dryRun, func(p *local.Project) bool {
		return p.Availability == local.Missing && !p.MissingSince.IsZero() && now.Sub(p.MissingSince) >= age
	})
	if err != nil {
		return err
	}
	return printForget(out, rep, o.json)
}

// parseAge reads --missing-for: whole days ("3d", as the config counts
// discovery.retainMissingDays), a Go duration ("72h", "90m"), days then
// a duration ("1d12h"), or "0". Negative ages are refused.
func parseAge(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "0" {
		return 0, nil
	}
	var days time.Duration
	if i := strings.IndexByte(s, 'd'); i > 0 {
		n, err := strconv.ParseUint(s[:i], 10, 16)
		if err != nil {
			return 0, err
		}
		days, s = time.Duration(n)*24*time.Hour, s[i+1:]
		if s == "" {
			return days, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("not a duration: %q", s)
	}
	return days + d, nil
}

// removeRecords forgets every record match picks, in one batch.
func removeRecords(ctx context.Context, g *globalOptions, dryRun bool, match func(*local.Project) bool) (*forgetReport, error) {
	cfg, err := g.loadConfig()
	if err != nil {
		return nil, err
	}
	st, err := openStore(ctx, cfg)
	if err != nil {
		return nil, err
	}
	rep := &forgetReport{DryRun: dryRun, Forgotten: []forgotten{}, gbrain: cfg.GBrain.Enabled}
	err = st.Update(ctx, func(tx *store.Tx) error {
		var picked []*local.Project
		if err := tx.Reader.Projects(func(p *local.Project) error {
			if match(p) {
				picked = append(picked, p)
			}
			return nil
		}); err != nil {
			return err
		}
		for _, p := range picked {
			f := forgotten{ProjectID: p.ID, Name: p.Meta.Name, Root: p.Root, Availability: string(p.Availability)}
			if !p.MissingSince.IsZero() {
				f.MissingSince = p.MissingSince.UTC().Format(time.RFC3339)
			}
			rep.Forgotten = append(rep.Forgotten, f)
			if !dryRun {
				if err := tx.DeleteProject(p.ID); err != nil {
					return err
				}
				// Its GBrain card is being taken back (the outbox row
				// DeleteProject queued): the mirror forgets it now, so a
				// root found again gets a new id and the id resolves as
				// unknown.
				if slug, err := gbrain.CardSlug(cfg.GBrain.SlugPrefix, p.ID); err == nil {
					tx.DeleteCard(slug)
				}
			}
		}
		return nil
	})
	var be *store.BusyError
	if errors.As(err, &be) {
		return nil, fmt.Errorf("nothing was removed: %w", err)
	}
	return rep, err
}

func printForget(out io.Writer, rep *forgetReport, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	verb := "forgot"
	if rep.DryRun {
		verb = "would forget"
	}
	for _, f := range rep.Forgotten {
		fmt.Fprintf(out, "%s %s %s (%s, %s)\n", verb, f.ProjectID, local.Printable(f.Name), local.Printable(f.Root), f.Availability)
	}
	for _, id := range rep.Unknown {
		fmt.Fprintf(out, "unknown id %s: no such record\n", id)
	}
	switch {
	case len(rep.Forgotten) == 0 && len(rep.Unknown) == 0:
		fmt.Fprintln(out, "nothing to forget")
	case len(rep.Forgotten) > 0 && !rep.DryRun && rep.gbrain:
		fmt.Fprintf(out, "%d record(s) removed; their GBrain cards are taken back on the next sync\n", len(rep.Forgotten))
	case len(rep.Forgotten) > 0 && !rep.DryRun:
		fmt.Fprintf(out, "%d record(s) removed\n", len(rep.Forgotten))
	}
	return nil
}
