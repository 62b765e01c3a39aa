package main

import (
	"context"
	"fmt"
	"io"

	"github.com/cgcat/cgcat/cmd/cgcat/hostconfig"
	"github.com/spf13/cobra"
)

type instructionsOptions struct {
	lang string
}

func newInstructionsCommand(_ *globalOptions) *cobra.Command {
	o := &instructionsOptions{}
	cmd := &cobra.Command{
		Use:   "instructions [--lang en|zh]",
		Short: "Print the short agent usage text (to paste into your own AGENTS.md or rules)",
		Long:  "Print the short text that tells an agent how to use the catalog: find a project with local_codegraph_projects, then pass its projectPath unchanged to CodeGraph's codegraph_explore. cgcat only prints it; it never writes AGENTS.md or any other file.",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runInstructions(cmd.Context(), o, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&o.lang, "lang", "en", "language: en or zh")
	return cmd
}

func runInstructions(_ context.Context, o *instructionsOptions, out io.Writer) error {
	text, err := hostconfig.Instructions(o.lang)
	if err != nil {
		return &exitError{code: 2, err: fmt.Errorf("--lang: %w", err)}
	}
	_, err = io.WriteString(out, text)
	return err
}
