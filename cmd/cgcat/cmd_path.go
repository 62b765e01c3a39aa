package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/server"
	"github.com/spf13/cobra"
)

type pathOptions struct {
	workspace string
}

func newPathCommand(g *globalOptions) *cobra.Command {
	o := &pathOptions{}
	cmd := &cobra.Command{
		Use:   "path NAME|ID",
		Short: "Print the root path of the project a name stands for (for cd, scripts and editors)",
		Long: `Print the root path of the one project NAME stands for, and nothing else: ` + "`cd \"$(cgcat path order-sdk)\"`" + `.
NAME is searched as ` + "`cgcat projects`" + ` searches it; the path is printed only when the answer is
sure: exactly one project is named by it (its name, a package name with or without its scope,
or its directory's name, case and separators aside), or exactly one project matches at all.
Otherwise the exit status is 1 and the candidates, best first, go to stderr. A project id
(cg_…) prints that project's path, as ` + "`cgcat resolve`" + ` checks it (exit status 3 when it has none).

` + "`eval \"$(cgcat init zsh)\"`" + ` gives a jump command built on it.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("workspace") {
				o.workspace = currentDir()
			}
			return runPath(cmd.Context(), g, o, strings.Join(args, " "), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVar(&o.workspace, "workspace", "", "your workspace directory (default: the current directory; a ranking hint)")
	return cmd
}

func runPath(ctx context.Context, g *globalOptions, o *pathOptions, words string, out, errOut io.Writer) error {
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
	return printPath(out, *pk.project)
}

// printPath prints a project's root, exactly, for a shell to use: a path
// with control characters is printed as it is when stdout is a pipe
// ($(...)), and escaped on a terminal, where it is only read.
func printPath(out io.Writer, p server.Project) error {
	if p.ProjectPath == nil {
		return &exitError{code: exitNotFound, err: fmt.Errorf("%s (%s) has no path here: %s", quoted(p.Name), p.ProjectID, local.Printable(p.Why))}
	}
	path := *p.ProjectPath
	if isTerminal(out) {
		path = local.Printable(path)
	}
	_, err := fmt.Fprintln(out, path)
	return err
}
