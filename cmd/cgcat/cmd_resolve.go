package main

import (
	"context"
	"encoding/json"
	"io"

	"github.com/cgcat/cgcat/local/config"
	"github.com/cgcat/cgcat/server"
	"github.com/spf13/cobra"
)

type resolveOptions struct {
	expect int
	json   bool
}

func newResolveCommand(g *globalOptions) *cobra.Command {
	o := &resolveOptions{}
	cmd := &cobra.Command{
		Use:   "resolve ID",
		Short: "Current path and state of a project id, exactly as local_codegraph_resolve answers",
		Long: "Show the current path and state of a project id (cg_ followed by 16 letters and digits) from an earlier answer, " +
			"an old session or a GBrain card. `cgcat projects` shows the ids. The exit status is 0 when the project is " +
			"there, 3 when the id is unknown, its project is missing or moved, not shared with this configuration, " +
			"changed since --expect-revision, or on another machine (known here only from its GBrain card), and 1 when " +
			"cgcat is not set up.",
		Args: resolveArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runResolve(cmd.Context(), g, o, args[0], cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().IntVar(&o.expect, "expect-revision", 0, "answer record_changed unless the record is at this revision")
	cmd.Flags().BoolVar(&o.json, "json", false, "print the exact envelope the tool returns")
	return cmd
}

// resolveArgs: exactly one id.
func resolveArgs(_ *cobra.Command, args []string) error {
	switch {
	case len(args) == 0:
		return usagef("ID is missing: name the project id to resolve, like `cgcat resolve cg_…` (`cgcat projects` shows the ids)")
	case len(args) > 1:
		return usagef("resolve takes one ID, got %d arguments; resolve one id at a time", len(args))
	}
	return nil
}

func runResolve(ctx context.Context, g *globalOptions, o *resolveOptions, id string, out, errOut io.Writer) error {
	if o.expect < 0 {
		return usagef("--expect-revision must be at least 1, got %d", o.expect)
	}
	a := server.ResolveArgs{ProjectID: id, ExpectedRecordRevision: uint64(o.expect)}
	if err := a.Validate(); err != nil {
		return flagError(err)
	}
	cfg, err := g.loadConfig()
	if err != nil {
		return err
	}
	warn(errOut, cfg)
	f := newCLIFrontend(config.Fixed(cfg), errOut)
	e, err := f.Resolve(ctx, a)
	if err != nil {
		return err
	}
	if o.json {
		enc := json.NewEncoder(out)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		err = enc.Encode(e)
	} else {
		_, err = io.WriteString(out, renderResolve(e))
	}
	if err != nil {
		return err
	}
	if code := resolveExit(e); code != exitOK {
		return &exitError{code: code}
	}
	return nil
}

// resolveExit is the exit status of a resolve answer (the README's table):
// 0 only when the project is here; 3 when the id is unknown, the project
// missing or moved, not shared, changed, or another machine's (a
// historical card: no path here); 1 when cgcat is not set up.
func resolveExit(e *server.Envelope) int {
	switch e.Status {
	case server.StatusOK:
		for _, p := range e.Projects {
			if p.Availability == server.AvailabilityHistorical {
				return exitNotFound
			}
		}
		return exitOK
	case server.StatusSetupRequired:
		return exitFailure
	}
	return exitNotFound
}
