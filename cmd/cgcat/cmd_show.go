package main

import (
	"context"
	"io"
	"strings"

	"github.com/cgcat/cgcat/local/ids"
	"github.com/spf13/cobra"
)

type showOptions struct {
	workspace string
	json      jsonFlag
}

func newShowCommand(g *globalOptions) *cobra.Command {
	o := &showOptions{}
	cmd := &cobra.Command{
		Use:   "show NAME|ID",
		Short: "Show every fact of one project, by name or id",
		Long: `Show every fact of one project: its id, path, state, packages, description and branch,
checked now, as ` + "`cgcat resolve`" + ` shows them. NAME picks a project as ` + "`cgcat path`" + ` does (exit
status 1, with the candidates on stderr, when it names no single project); an id (cg_…)
is resolved (exit status 3 when it is unknown, missing or not shared).`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("workspace") {
				o.workspace = currentDir()
			}
			return runShow(cmd.Context(), g, o, strings.Join(args, " "), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVar(&o.workspace, "workspace", "", "your workspace directory (default: the current directory; a ranking hint)")
	addJSONFlag(cmd.Flags(), &o.json, "print the project's envelope as JSON, as local_codegraph_resolve returns it")
	return cmd
}

func runShow(ctx context.Context, g *globalOptions, o *showOptions, words string, out, errOut io.Writer) error {
	t, err := termOf(g, errOut)
	if err != nil {
		return err
	}
	ws, err := absWorkspace(o.workspace)
	if err != nil {
		return err
	}
	pk, err := pickProject(ctx, g, words, ws, errOut)
	if err != nil {
		return err
	}
	if pk.project == nil {
		return notPicked(pk, words, t, errOut)
	}
	// The detail of a name's pick is the resolve answer for its id: the
	// same facts, checked now, as `cgcat resolve ID` and the tool give.
	if !ids.ValidProjectID(words) {
		return runResolve(ctx, g, &resolveOptions{json: o.json}, pk.project.ProjectID, out, errOut)
	}
	return printResolved(out, pk.env, o.json)
}
