package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/cgcat/cgcat/cmd/cgcat/doctor"
	"github.com/cgcat/cgcat/cmd/cgcat/hostconfig"
	"github.com/cgcat/cgcat/cmd/cgcat/hostlaunch"
	"github.com/cgcat/cgcat/local"
)

// What install does beside cgcat's own entry: find and check the host's
// CodeGraph entry, and the allow rules of the hosts that ignore
// readOnlyHint.

// findNativeCodeGraph finds CodeGraph's own MCP server in a host file.
func findNativeCodeGraph(host string, src []byte) (hostconfig.Server, bool) {
	if len(src) == 0 {
		return hostconfig.Server{}, false
	}
	servers, err := hostconfig.ReadServers(host, src)
	if err != nil {
		return hostconfig.Server{}, false // the upsert reports the file
	}
	return hostconfig.FindCodeGraph(servers)
}

// codegraphTimeout bounds starting CodeGraph's entry from install.
const codegraphTimeout = 30 * time.Second

// reportNativeCodeGraph says whether the host has CodeGraph's own server,
// and (when start, so not for --dry-run) starts it to check it offers
// codegraph_explore with projectPath.
func reportNativeCodeGraph(ctx context.Context, host, file string, s hostconfig.Server, found, start bool, out io.Writer) {
	if !found {
		fmt.Fprintf(out, "warning: %s has no CodeGraph MCP server (codegraph serve --mcp): agents can find projects with cgcat but cannot read their code\n", local.Printable(file))
		fmt.Fprintf(out, "  fix: %s (npm install -g %s first if needed), then run `cgcat install %s` again so cgcat names it\n", hostconfig.CodeGraphAddCommand(host), hostconfig.CodeGraphPackage, host)
		return
	}
	desc := fmt.Sprintf("CodeGraph's MCP server %q", s.Name)
	if s.Disabled != "" {
		fmt.Fprintf(out, "warning: %s is disabled (%s) in %s: agents cannot read code until it is enabled\n", desc, s.Disabled, local.Printable(file))
		return
	}
	if s.Name != hostconfig.DefaultCodeGraphServer {
		fmt.Fprintf(out, "  CodeGraph: cgcat's answers name %s (--codegraph-server %s)\n", desc, s.Name)
	}
	if !start {
		return
	}
	l := hostlaunch.For(host, s, os.Environ(), os.TempDir())
	l.Timeout = max(l.Timeout, codegraphTimeout)
	hs, err := hostlaunch.Start(ctx, l, "cgcat-install", version)
	if err == nil {
		err = hostlaunch.CheckExplore(hs)
	}
	switch {
	case errors.Is(err, hostlaunch.ErrBackendIncompatible):
		fmt.Fprintf(out, "warning: %s: %v\n  fix: upgrade CodeGraph (npm install -g %s@latest)\n", desc, err, hostconfig.CodeGraphPackage)
	case err != nil:
		fmt.Fprintf(out, "warning: %s does not start: %v\n  fix: run `%s` yourself to see why; `cgcat doctor` checks it again\n", desc, err, doctor.QuoteArgs(append([]string{s.Command}, s.Args...)))
	default:
		fmt.Fprintf(out, "  CodeGraph: %s (%s %s) offers %s with projectPath\n", desc, hs.ServerName, hs.ServerVersion, hostlaunch.ExploreTool)
	}
}

// installAllowRules writes (with --allow-tools) or mentions the allow rule
// of a host that ignores readOnlyHint.
func installAllowRules(host string, o *installOptions, out io.Writer) (changed bool, err error) {
	if host != hostClaude && host != hostGemini {
		return false, nil
	}
	file, before, after, what, err := allowEdit(host, o.name, true)
	if err != nil {
		return false, err
	}
	shown := local.Printable(file)
	if string(before) == string(after) {
		fmt.Fprintf(out, "  allow rule: %s already lets %s run %s and %s without asking\n", shown, hostTitle(host), hostconfig.ToolProjects, hostconfig.ToolResolve)
		return false, nil
	}
	if !o.allowTools {
		fmt.Fprintf(out, "note: %s.\n  To allow exactly cgcat's two tools: cgcat install %s --allow-tools (adds %s to %s)\n", promptPolicy(host), host, what, shown)
		return false, nil
	}
	if o.dryRun {
		fmt.Fprint(out, hostconfig.UnifiedDiff(file, before, after))
		return false, nil
	}
	backup, err := writeHostFile(host, file, after, o)
	if err != nil {
		return false, err
	}
	fmt.Fprintf(out, "allowed %s and %s in %s (%s)\n", hostconfig.ToolProjects, hostconfig.ToolResolve, shown, what)
	printBackup(out, backup)
	return true, nil
}

// uninstallAllowRules removes what --allow-tools wrote.
func uninstallAllowRules(host string, o *installOptions, out io.Writer) (changed bool, err error) {
	if host != hostClaude && host != hostGemini {
		return false, nil
	}
	file, before, after, what, err := allowEdit(host, o.name, false)
	if err != nil || string(before) == string(after) {
		return false, err
	}
	shown := local.Printable(file)
	if o.dryRun {
		fmt.Fprint(out, hostconfig.UnifiedDiff(file, before, after))
		return false, nil
	}
	if after == nil { // Gemini's policy file is ours as a whole
		if err := os.Remove(file); err != nil {
			return false, err
		}
		fmt.Fprintf(out, "removed the allow rule %s\n", shown)
		return true, nil
	}
	backup, err := writeHostFile(host, file, after, o)
	if err != nil {
		return false, err
	}
	fmt.Fprintf(out, "removed the allow rule (%s) from %s\n", what, shown)
	printBackup(out, backup)
	return true, nil
}

// allowEdit computes the allow-rule file of host before and after adding
// (or removing) the rule for the entry called name. after is nil when the
// file goes away; what describes the rule.
func allowEdit(host, name string, add bool) (file string, before, after []byte, what string, err error) {
	if host == hostClaude {
		_, file, err = claudeFiles()
		if err != nil {
			return "", nil, nil, "", err
		}
		rules := hostconfig.ClaudeAllowRules(name)
		what = "permissions.allow " + strings.Join(rules, ", ")
		if before, err = readIfExists(file); err != nil {
			return "", nil, nil, "", err
		}
		edit := hostconfig.RemoveFromList
		if add {
			edit = hostconfig.AddToList
		}
		after, _, err = edit(before, hostconfig.ClaudeAllowPath, rules)
		if err != nil {
			return "", nil, nil, "", fmt.Errorf("%s: %w", local.Printable(file), err)
		}
		return file, before, after, what, nil
	}
	_, file, err = geminiFiles(name)
	if err != nil {
		return "", nil, nil, "", err
	}
	what = fmt.Sprintf("a policy rule allowing %s and %s of server %q", hostconfig.ToolProjects, hostconfig.ToolResolve, name)
	if before, err = readIfExists(file); err != nil {
		return "", nil, nil, "", err
	}
	if before != nil && !hostconfig.IsGeminiPolicy(before) {
		return "", nil, nil, "", fmt.Errorf("%s exists and was not written by cgcat; move it aside (or rename the entry with --name), then run again", local.Printable(file))
	}
	if add {
		after = []byte(hostconfig.GeminiPolicy(name))
	}
	return file, before, after, what, nil
}

func readIfExists(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}
