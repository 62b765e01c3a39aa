// Command cgcat finds the local projects that CodeGraph has indexed and
// hands their exact root paths to coding agents over MCP.
//
// This package is wiring. Each command has its file (cmd_*.go) that builds
// its cobra command, reads its flags and the config, calls the packages
// that do the work and prints their result, as text or as --json. `cgcat
// serve` puts them together: the answering service (package server) behind
// the MCP face (server/protocol), the discovery loop (local/refresh) and,
// with GBrain on, the projection service (package projection). main only
// maps errors to exit codes; every command is a testable runX that is
// handed its output writers.
//
// It must never hold logic that another package owns: the CLI twins
// (`cgcat projects`, `cgcat resolve`) answer through the same
// server.Frontend as MCP, doctor's checks live in package doctor, host
// files are edited by package hostconfig, and store keys, lease files and
// file names are asked of the packages that own them. In `cgcat serve`
// stdout belongs to MCP: nothing else may ever write to it.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
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
	tuneGC()
	stopProfile := startCPUProfile()
	code := runUntilSignalled(os.Args[1:], os.Stdin, out, os.Stderr)
	stopProfile()
	os.Exit(code)
}

// tuneGC: a cgcat process keeps little on its heap (the catalog is a
// mapped file) and allocates many short-lived values per answer and per
// directory; collecting at 5× the live heap instead of 2× spends about a
// sixth less CPU under a burst of calls (bench/load.sh), and a soft limit
// keeps a process with a big catalog within bounds (issue 14: 100 MB per
// serve at 100k projects). GOGC and GOMEMLIMIT, when set, win.
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(gcSoftLimit)
	}
}

// startCPUProfile writes a CPU profile of the whole command to the file
// CGCAT_CPUPROFILE names ("%d" becomes the process id), for benchmarks
// (bench/load.sh, bench/scan.sh): where a busy serve or a scan spends its
// time. It returns what stops it.
func startCPUProfile() func() {
	path := os.Getenv("CGCAT_CPUPROFILE")
	if path == "" {
		return func() {}
	}
	f, err := os.Create(strings.ReplaceAll(path, "%d", strconv.Itoa(os.Getpid())))
	if err != nil {
		return func() {}
	}
	_ = pprof.StartCPUProfile(f)
	return func() { pprof.StopCPUProfile(); f.Close() }
}

// gcSoftLimit is the Go heap size past which the collector runs more often
// again (not a cap: a bigger live heap still fits, at more CPU).
const gcSoftLimit = 48 << 20

// Exit statuses: one table for every command, printed by `cgcat --help`
// (exitStatusHelp) and in the README.
const (
	exitOK       = 0 // done; a search that matches nothing is done too
	exitFailure  = 1 // an error, or not set up yet; doctor: something is broken
	exitUsage    = 2 // how the command was called: see usagef
	exitNotFound = 3 // the project id named is unknown, missing, not available or another machine's
)

// exitStatusHelp is the exit-status table as `--help` shows it.
const exitStatusHelp = `Exit status (every command):
  0  done (a search that matches nothing is done too: the answer says so)
  1  failed: an error, or cgcat is not set up yet (no config file or no roots);
     doctor: something is broken
  2  usage: an unknown command or flag, a bad flag value, a missing or extra
     argument, or a value cgcat refuses to write (config init --root ~/code)
  3  not found: the project id you named is unknown, missing (moved or
     deleted), not shared by this configuration, changed, or on another
     machine (known only from its GBrain card) (resolve, forget)`

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

func (e *exitError) Unwrap() error { return e.err }

// usagef is a mistake in how a command was called (exit status 2): the
// message names what is wrong (the flag or argument first) and what to
// type instead; run adds where the command's usage is.
func usagef(format string, a ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, a...)}
}

func run(ctx context.Context, args []string, in io.Reader, out, errOut io.Writer) int {
	root := newRootCommand(in, out, errOut)
	root.SetArgs(joinJSONFields(args))
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitOK
	}
	code, msg := exitFailure, explain(err).Error()
	var ee *exitError
	if errors.As(err, &ee) {
		code, msg = ee.code, ""
		if ee.err != nil {
			msg = explain(ee.err).Error()
		}
	}
	if msg == "" {
		return code
	}
	if wantsJSON(cmd, args) {
		// A --json caller reads stdout: the failure is one JSON object there.
		enc := json.NewEncoder(out)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		_ = enc.Encode(jsonError{Error: msg, ExitCode: code})
		return code
	}
	fmt.Fprintln(errOut, "cgcat:", msg)
	if code == exitUsage && cmd != nil {
		fmt.Fprintf(errOut, "Run `%s --help` for usage.\n", cmd.CommandPath())
	}
	return code
}

// jsonError is what a command called with --json prints when it fails.
type jsonError struct {
	Error    string `json:"error"`
	ExitCode int    `json:"exitCode"`
}

// wantsJSON reports whether the command that failed was called with --json
// (also when the flags did not parse: then the arguments say so).
func wantsJSON(cmd *cobra.Command, args []string) bool {
	if cmd == nil || cmd.Flags().Lookup("json") == nil {
		return false
	}
	if f := cmd.Flags().Lookup("json"); f.Changed {
		return f.Value.String() != "false" // true, or fields (--json name,projectPath)
	}
	for _, a := range args {
		if a == "--" {
			break
		}
		if v, ok := strings.CutPrefix(a, "--json="); a == "--json" || ok && (v == "true" || isFieldList(v)) {
			return true
		}
	}
	return false
}
