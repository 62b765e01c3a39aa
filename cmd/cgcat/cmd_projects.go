package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/cgcat/cgcat/local/config"
	"github.com/cgcat/cgcat/server"
	"github.com/spf13/cobra"
)

type projectsOptions struct {
	limit     int
	workspace string
	cursor    string
	refresh   bool
	json      bool
}

func newProjectsCommand(g *globalOptions) *cobra.Command {
	o := &projectsOptions{}
	cmd := &cobra.Command{
		Use:   "projects [QUERY]",
		Short: "Search the catalog, exactly as the local_codegraph_projects tool does",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			q := ""
			if len(args) == 1 {
				q = args[0]
			}
			return runProjects(cmd.Context(), g, o, q, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().IntVar(&o.limit, "limit", 5, "how many projects per page (1-50)")
	cmd.Flags().StringVar(&o.workspace, "workspace", "", "absolute path of your current workspace (a ranking hint)")
	cmd.Flags().StringVar(&o.cursor, "cursor", "", "nextCursor of a previous answer (same process only)")
	cmd.Flags().BoolVar(&o.refresh, "refresh", false, "schedule a bounded refresh first")
	cmd.Flags().BoolVar(&o.json, "json", false, "print the exact envelope the tool returns")
	return cmd
}

func runProjects(ctx context.Context, g *globalOptions, o *projectsOptions, query string, out, errOut io.Writer) error {
	cfg, err := g.loadConfig()
	if err != nil {
		return err
	}
	warn(errOut, cfg)
	a := server.ProjectsArgs{Query: query, Limit: o.limit, WorkspacePath: o.workspace, Cursor: o.cursor, Refresh: o.refresh}
	if err := a.Validate(); err != nil {
		return &exitError{code: 2, err: flagError(err)}
	}
	logger := newLogger(errOut)
	f := newFrontend(config.Fixed(cfg), "", logger, cliGBrain(cfg, logger), "")
	if err := f.Ready(ctx); err != nil {
		return err
	}
	if cfg.HasRoots() && f.Catalog().State().LastCompleted.IsZero() {
		// The CLI has no background loop: finish discovery first, with
		// progress — after GBrain's cards of a fresh store are mirrored.
		primeMirror(ctx, cfg, f.Catalog(), logger, errOut)
		if err := scanToCompletion(ctx, cfg, f.Catalog(), errOut); err != nil {
			return err
		}
	}
	e, err := f.Projects(ctx, a)
	if err != nil {
		return err
	}
	return printEnvelope(out, e, o.json)
}

func printEnvelope(out io.Writer, e *server.Envelope, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(out)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		return enc.Encode(e)
	}
	_, err := io.WriteString(out, server.Text(e))
	return err
}

// flags names, in CLI terms, the argument an ArgError is about.
var flags = map[string]string{"limit": "--limit", "workspacePath": "--workspace", "cursor": "--cursor", "query": "QUERY", "projectId": "ID", "expectedRecordRevision": "--expect-revision"}

// flagError words an argument error in CLI terms.
func flagError(err error) error {
	var ae *server.ArgError
	if !errors.As(err, &ae) || ae.Arg == "" {
		return err
	}
	return fmt.Errorf("%s: %s", cmp.Or(flags[ae.Arg], ae.Arg), ae.Problem)
}
