// Command cgcat finds the local projects that CodeGraph has indexed and
// hands their exact root paths to coding agents over MCP.
//
// main only maps errors to exit codes; every command is a testable runX.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Set by the build (-ldflags "-X main.version=...").
var (
	version = "dev"
	commit  = "unknown"
	date    = "unknown"
)

func main() {
	// stdout belongs to MCP in `cgcat serve`: keep the real one for the
	// commands' output and point os.Stdout at stderr before anything else
	// runs, so no stray print can corrupt the protocol.
	out := os.Stdout
	os.Stdout = os.Stderr
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, out, os.Stderr)
	stop()
	os.Exit(code)
}

// exitError carries a specific exit code (e.g. doctor's "something is broken").
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func run(ctx context.Context, args []string, in io.Reader, out, errOut io.Writer) int {
	root := newRootCommand(in, out, errOut)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil && ee.err.Error() != "" {
			fmt.Fprintln(errOut, "cgcat:", ee.err)
		}
		return ee.code
	}
	fmt.Fprintln(errOut, "cgcat:", err)
	return 1
}
