package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/cgcat/cgcat/cmd/cgcat/doctor"
	"github.com/cgcat/cgcat/cmd/cgcat/hostconfig"
	"github.com/cgcat/cgcat/local"
)

// What install does beside cgcat's own entry: find and check the host's
// CodeGraph entry, and the allow rules of the hosts that ignore
// readOnlyHint.

// findNativeCodeGraph reads a host file's servers and finds CodeGraph's
// own MCP server among them.
func findNativeCodeGraph(h *hostconfig.Host, src []byte) ([]hostconfig.Server, hostconfig.Server, bool) {
	if len(src) == 0 {
		return nil, hostconfig.Server{}, false
	}
	servers, err := h.ReadServers(src)
	if err != nil {
		return nil, hostconfig.Server{}, false // the upsert reports the file
	}
	s, ok := hostconfig.FindCodeGraph(servers)
	return servers, s, ok
}

// reportNativeCodeGraph runs doctor's CodeGraph checks on the host's
// servers (so install and doctor give every finding the same severity)
// and prints them; broken is true when one of them is a problem (✗). When
// start is false (--dry-run) CodeGraph's entry is not started.
func reportNativeCodeGraph(ctx context.Context, h *hostconfig.Host, file string, servers []hostconfig.Server, e hostconfig.Entry, start bool, out io.Writer) (broken bool) {
	if s, ok := hostconfig.FindCodeGraph(servers); ok && s.Name != hostconfig.DefaultCodeGraphServer && s.Disabled == "" {
		fmt.Fprintf(out, "  CodeGraph: cgcat's answers name CodeGraph's MCP server %q (--codegraph-server %s)\n", local.Printable(s.Name), local.Printable(s.Name))
	}
	in := doctor.HostInput{Host: h, Env: hostEnv(), File: file, Name: e.Name, Environ: os.Environ(), Dir: os.TempDir(),
		Install: "cgcat install " + h.Name, CgcatVersion: version, SkipStart: !start}
	cs, hs := doctor.CodeGraphStarted(ctx, in, servers, hostconfig.Server{Name: e.Name, Command: e.Command, Args: e.Args()})
	for _, c := range cs {
		switch c.Status {
		case doctor.Fail:
			broken = true
			fmt.Fprintf(out, "problem: %s\n", c.What)
		case doctor.Warn:
			fmt.Fprintf(out, "warning: %s\n", c.What)
		case doctor.OK:
			if s, ok := hostconfig.FindCodeGraph(servers); ok && hs != nil {
				fmt.Fprintf(out, "  CodeGraph: CodeGraph's MCP server %q (%s %s) offers %s with projectPath\n",
					local.Printable(s.Name), local.Printable(hs.ServerName), local.Printable(hs.ServerVersion), hostconfig.ExploreTool)
				continue
			}
			fmt.Fprintf(out, "  CodeGraph: %s\n", c.What)
		default:
			fmt.Fprintf(out, "  CodeGraph: %s\n", c.What)
		}
		if c.Fix != "" {
			fmt.Fprintf(out, "  fix: %s\n", c.Fix)
		}
	}
	return broken
}

// installAllowRules writes (with --allow-tools) or mentions the allow rule
// of a host that ignores readOnlyHint.
func installAllowRules(h *hostconfig.Host, env hostconfig.Env, o *installOptions, out io.Writer) (changed bool, err error) {
	if h.Allow == nil {
		return false, nil
	}
	file, before, after, err := allowEdit(h, env, o.name, true)
	if err != nil {
		return false, err
	}
	shown := local.Printable(file)
	what := h.Allow.Describe(o.name)
	if string(before) == string(after) {
		fmt.Fprintf(out, "  allow rule: %s already lets %s run %s and %s without asking\n", shown, h.Title, hostconfig.ToolProjects, hostconfig.ToolResolve)
		return false, nil
	}
	if !o.allowTools {
		fmt.Fprintf(out, "note: %s.\n  To allow exactly cgcat's two tools: cgcat install %s --allow-tools (adds %s to %s)\n", h.PromptPolicy, h.Name, what, shown)
		return false, nil
	}
	if o.dryRun {
		fmt.Fprint(out, hostconfig.UnifiedDiff(file, before, after))
		return false, nil
	}
	backup, err := writeHostFile(h, file, after, o)
	if err == nil && h.Allow.Path != nil {
		err = recordKey(h, file, h.Allow.Path, hostconfig.MissingPath(before, h.Allow.Path))
	}
	if err != nil {
		return false, err
	}
	fmt.Fprintf(out, "allowed %s and %s in %s (%s)\n", hostconfig.ToolProjects, hostconfig.ToolResolve, shown, what)
	printBackup(out, backup)
	return true, nil
}

// uninstallAllowRules removes what --allow-tools wrote.
func uninstallAllowRules(h *hostconfig.Host, env hostconfig.Env, o *installOptions, out io.Writer) (changed bool, err error) {
	if h.Allow == nil {
		return false, nil
	}
	file, before, after, err := allowEdit(h, env, o.name, false)
	if err != nil || string(before) == string(after) {
		return false, err
	}
	shown := local.Printable(file)
	if o.dryRun {
		fmt.Fprint(out, hostconfig.UnifiedDiff(file, before, after))
		return false, nil
	}
	if after != nil && h.Allow.Path != nil {
		after = pruneRecorded(h, file, h.Allow.Path, after)
	}
	gone := after == nil || (wasCreated(h, file) && h.Allow.Leftover != nil && h.Allow.Leftover(after))
	if gone {
		backup, err := removeCreatedFile(h, file, o)
		if err != nil {
			return false, err
		}
		fmt.Fprintf(out, "removed the allow rule %s\n", shown)
		if after != nil {
			printBackup(out, backup)
		}
		return true, nil
	}
	backup, err := writeHostFile(h, file, after, o)
	if err != nil {
		return false, err
	}
	fmt.Fprintf(out, "removed the allow rule (%s) from %s\n", h.Allow.Describe(o.name), shown)
	printBackup(out, backup)
	return true, nil
}

// allowEdit computes the allow-rule file of h before and after adding (or
// removing) the rule for the entry called name; after is nil when the file
// goes away.
func allowEdit(h *hostconfig.Host, env hostconfig.Env, name string, add bool) (file string, before, after []byte, err error) {
	file, err = h.Allow.File(env, name)
	if err != nil {
		return "", nil, nil, err
	}
	if before, err = readIfExists(file); err != nil {
		return "", nil, nil, err
	}
	if after, err = h.Allow.Edit(before, name, add); err != nil {
		return "", nil, nil, fmt.Errorf("%s: %w", local.Printable(file), err)
	}
	return file, before, after, nil
}

func readIfExists(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}
