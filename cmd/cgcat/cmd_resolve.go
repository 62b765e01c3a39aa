package main

import (
	"context"
	"io"
	"path/filepath"
	"strings"

	"github.com/cgcat/cgcat/local/config"
	"github.com/cgcat/cgcat/local/ids"
	"github.com/cgcat/cgcat/server"
	"github.com/spf13/cobra"
)

type resolveOptions struct {
	expect int
	json   jsonFlag
}

func newResolveCommand(g *globalOptions) *cobra.Command {
	o := &resolveOptions{}
	cmd := &cobra.Command{
		Use:   "resolve ID|NAME",
		Short: "Current path and state of a project id, exactly as local_codegraph_resolve answers",
		Long: "Show the current path and state of a project id (cg_ followed by 16 letters and digits) from an earlier answer, " +
			"an old session or a GBrain card, or of the one project a NAME stands for (picked as `cgcat path` picks; " +
			"exit status 1 with the candidates on stderr when it names no single project). `cgcat projects` shows the ids. The exit status is 0 when the project is " +
			"there, 3 when the id is unknown, its project is missing or moved, not shared by this configuration, " +
			"changed since --expect-revision, or on another machine (known here only from its GBrain card), and 1 when " +
			"cgcat is not set up.",
		Args: resolveArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			id := args[0]
			if byName(id) {
				// A person types names (`cgcat resolve tiny<TAB>`): the one
				// project a name stands for, picked as `cgcat path` picks.
				t, err := termOf(g, cmd.ErrOrStderr())
				if err != nil {
					return err
				}
				pk, err := pickProject(cmd.Context(), g, id, currentDir(), cmd.ErrOrStderr())
				if err != nil {
					return err
				}
				if pk.project == nil {
					return notPicked(pk, id, t, cmd.ErrOrStderr())
				}
				id = pk.project.ProjectID
			}
			return runResolve(cmd.Context(), g, o, id, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().IntVar(&o.expect, "expect-revision", 0, "answer record_changed unless the record is at this revision")
	addJSONFlag(cmd.Flags(), &o.json, "print the exact envelope the tool returns")
	return cmd
}

// byName reports an argument of resolve that is a name rather than an id:
// not an id, not shaped like one (cg_…), and not a path (which resolve
// refuses, as the tool does).
func byName(arg string) bool {
	return !ids.ValidProjectID(arg) && !strings.HasPrefix(arg, "cg_") && !filepath.IsAbs(arg) && !strings.HasPrefix(arg, "~") && !strings.HasPrefix(arg, ".")
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
	return printResolved(out, e, o.json)
}

// printResolved prints a resolve answer: the detail view, the envelope
// (--json) or the chosen fields (--json FIELDS); the exit status says
// whether the project is there.
func printResolved(out io.Writer, e *server.Envelope, j jsonFlag) error {
	var err error
	switch {
	case j.on && j.fields != nil:
		err = writeFields(out, e.Projects, j.fields)
	case j.on:
		err = writeJSON(out, e)
	default:
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
