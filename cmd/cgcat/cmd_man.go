package main

import (
	"os"
	"path/filepath"

	"github.com/cgcat/cgcat/local"
	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// newManCommand writes the man pages (one per command) for the release
// archives. Hidden: it is for packaging, not for people.
func newManCommand() *cobra.Command {
	return &cobra.Command{
		Use:    "man DIR",
		Short:  "Write the man pages of every command into DIR",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := filepath.Abs(args[0])
			if err != nil {
				return usagef("DIR %q: %v", local.Printable(args[0]), err)
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			root := cmd.Root()
			root.DisableAutoGenTag = true // the same pages for the same source
			header := &doc.GenManHeader{Title: "CGCAT", Section: "1", Source: "cgcat " + version, Manual: "cgcat manual"}
			return doc.GenManTree(root, header, dir)
		},
	}
}
