package main

import (
	"context"
	"fmt"
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
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runResolve(cmd.Context(), g, o, args[0], cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().IntVar(&o.expect, "expect-revision", 0, "fail with record_changed unless the record is at this revision")
	cmd.Flags().BoolVar(&o.json, "json", false, "print the exact envelope the tool returns")
	return cmd
}

func runResolve(ctx context.Context, g *globalOptions, o *resolveOptions, id string, out, errOut io.Writer) error {
	cfg, err := g.loadConfig()
	if err != nil {
		return err
	}
	warn(errOut, cfg)
	if o.expect < 0 {
		return &exitError{code: 2, err: fmt.Errorf("--expect-revision must be at least 1, got %d", o.expect)}
	}
	a := server.ResolveArgs{ProjectID: id, ExpectedRecordRevision: uint64(o.expect)}
	if err := a.Validate(); err != nil {
		return &exitError{code: 2, err: flagError(err)}
	}
	logger := newLogger(errOut)
	f := newFrontend(config.Fixed(cfg), "", logger, cliGBrain(cfg, logger), "")
	e, err := f.Resolve(ctx, a)
	if err != nil {
		return err
	}
	if err := printEnvelope(out, e, o.json); err != nil {
		return err
	}
	if e.Status != server.StatusOK {
		return &exitError{code: 3}
	}
	return nil
}
