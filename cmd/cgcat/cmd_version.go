package main

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"
)

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print version, commit and build date",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintf(cmd.OutOrStdout(), "cgcat %s\ncommit %s\nbuilt %s\n%s %s/%s\n", version, commit, date, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return nil
		},
	}
}
