package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/cgcat/cgcat/local/config"
)

// notSetUp is what every command that needs roots (scan, projects, path,
// show) says without any: one message, said once, with exit status 1.
func notSetUp(g *globalOptions) string {
	why := "the config file names no discovery roots"
	if g.noConfig != "" {
		why = "there is no config file at " + g.noConfig
	}
	return "cgcat is not set up yet: " + why + ". Run `cgcat config init --root /ABS/DIR` (one --root per folder that holds your code), or pass --root DIR to this command."
}

// errNotSetUp is notSetUp as the command's error (exit status 1).
func errNotSetUp(g *globalOptions) error {
	return &exitError{code: exitFailure, err: fmt.Errorf("%s", strings.TrimPrefix(notSetUp(g), "cgcat is "))}
}

// warnSetUp prints the config's warnings, except the missing config file
// that notSetUp already names when there are no roots.
func warnSetUp(w io.Writer, g *globalOptions, cfg *config.Config) {
	for _, m := range cfg.Warnings {
		if g.noConfig != "" && !cfg.HasRoots() && strings.HasPrefix(m, "no config file at ") {
			continue
		}
		fmt.Fprintln(w, "cgcat: warning:", m)
	}
}
