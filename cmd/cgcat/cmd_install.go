package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cgcat/cgcat/cmd/cgcat/doctor"
	"github.com/cgcat/cgcat/cmd/cgcat/hostconfig"
	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/config"
	"github.com/spf13/cobra"
)

// Host names, for the tests that drive one host.
const (
	hostCodex    = hostconfig.Codex
	hostOpenCode = hostconfig.OpenCode
	hostClaude   = hostconfig.Claude
	hostGemini   = hostconfig.Gemini
)

type installOptions struct {
	name    string
	dryRun  bool
	print   bool
	force   bool
	project string
	// allowTools also writes the narrowest allow rule for our two tools
	// (Claude Code and Gemini CLI, which ignore readOnlyHint).
	allowTools bool
	// executable is the cgcat command written into the host entry; empty
	// means the running binary. Tests set it to a freshly built cgcat.
	executable string
	// now stamps backups; zero means time.Now.
	now func() time.Time
}

func newInstallCommand(g *globalOptions) *cobra.Command {
	o := &installOptions{}
	cmd := &cobra.Command{
		Use:   "install " + strings.Join(hostconfig.Hosts, "|"),
		Short: "Add cgcat's MCP server entry to " + hostTitles() + " (backup first; --dry-run shows the diff)",
		Long: `Add (or update) only cgcat's own MCP server entry in the host's user configuration:

` + hostFilesHelp() + `
The entry starts this cgcat binary by its absolute path with "serve --config ABS",
where ABS is the config file in use (--config, $CGCAT_CONFIG or the default); the
config file must exist. When the host already has CodeGraph's own MCP server
(codegraph serve --mcp) under another name than "codegraph", the entry also passes
"--codegraph-server NAME" so answers name the server the agent can call; install
starts CodeGraph's entry and checks that it offers codegraph_explore with projectPath.
Comments, other servers and settings are kept; a timestamped backup is written first
(into $XDG_STATE_HOME/cgcat/backups/HOST, default ~/.local/state/cgcat/backups/HOST,
keeping the last 5 of each file) and the file is replaced atomically. An existing entry with different settings is
shown and replaced only with --force.

Claude Code and Gemini CLI ignore the tools' readOnlyHint and ask before every call
(in "claude -p" and "gemini -p" the call is refused or the tools are not offered).
--allow-tools also writes the narrowest rule that lets them run exactly cgcat's two
tools: Claude Code's permissions.allow in its settings.json, Gemini CLI's policy file
policies/cgcat-NAME.toml. It is never written without the flag.

--print prints the snippets (all hosts, or the named one) with the real absolute
paths, for merging by hand, and writes nothing.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			host := ""
			if len(args) == 1 {
				host = args[0]
			}
			return runInstall(cmd.Context(), g, o, host, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.name, "name", hostconfig.DefaultName, "server name in the host config")
	f.BoolVar(&o.dryRun, "dry-run", false, "print the unified diff and write nothing")
	f.BoolVar(&o.print, "print", false, "print the configuration snippets with real absolute paths and write nothing")
	f.BoolVar(&o.force, "force", false, "replace an existing entry of the same name that has different settings")
	f.StringVar(&o.project, "project", "", "opencode only: edit DIR/opencode.json(c) instead of the global file")
	f.BoolVar(&o.allowTools, "allow-tools", false, "claude and gemini only: also allow exactly cgcat's two tools, so the host runs them without asking")
	return cmd
}

func newUninstallCommand(g *globalOptions) *cobra.Command {
	o := &installOptions{}
	cmd := &cobra.Command{
		Use:   "uninstall " + strings.Join(hostconfig.Hosts, "|"),
		Short: "Remove cgcat's MCP server entry from " + hostTitles() + " (backup first)",
		Long: "Remove only the entry named --name (default codegraph-catalog) from the host's configuration file, after a timestamped backup, " +
			"and the allow rule --allow-tools wrote (Claude Code's two permissions.allow entries, Gemini CLI's policy file). Everything else in the file " +
			"is kept byte for byte. A file or folder that install created and that holds nothing else any more is removed.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runUninstall(cmd.Context(), g, o, args[0], cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.name, "name", hostconfig.DefaultName, "server name in the host config")
	f.BoolVar(&o.dryRun, "dry-run", false, "print the unified diff and write nothing")
	f.StringVar(&o.project, "project", "", "opencode only: edit DIR/opencode.json(c) instead of the global file")
	return cmd
}

// hostTitle is the display name of the host called name.
func hostTitle(name string) string {
	if h, ok := hostconfig.ByName(name); ok {
		return h.Title
	}
	return name
}

// hostFilesHelp is one line (or two) per host: the file install edits.
func hostFilesHelp() string {
	var b strings.Builder
	for _, h := range hostconfig.All() {
		fmt.Fprintf(&b, "  %-9s %s\n", h.Name, strings.ReplaceAll(h.FileHelp, "\n", "\n            "))
	}
	return b.String()
}

// hostTitles lists every host's display name: "Codex, OpenCode or Cursor".
func hostTitles() string {
	var t []string
	for _, h := range hostconfig.All() {
		t = append(t, h.Title)
	}
	if len(t) < 2 {
		return strings.Join(t, "")
	}
	return strings.Join(t[:len(t)-1], ", ") + " or " + t[len(t)-1]
}

// namesOf lists the names of the hosts that ok accepts: "claude, gemini".
func namesOf(ok func(*hostconfig.Host) bool) string {
	var n []string
	for _, h := range hostconfig.All() {
		if ok(h) {
			n = append(n, h.Name)
		}
	}
	return strings.Join(n, ", ")
}

// lookupHost returns the host called name, refusing the flags it does not
// take.
func lookupHost(name string, o *installOptions) (*hostconfig.Host, error) {
	if name == "" {
		return nil, &exitError{code: 2, err: errors.New("name the host: " + hostconfig.NameList())}
	}
	h, ok := hostconfig.ByName(name)
	if !ok {
		return nil, &exitError{code: 2, err: fmt.Errorf("unknown host %q: use %s", name, hostconfig.NameList())}
	}
	if o.project != "" && !h.Project {
		return nil, &exitError{code: 2, err: fmt.Errorf("--project is for %s only: cgcat writes %s's user config",
			namesOf(func(h *hostconfig.Host) bool { return h.Project }), h.Title)}
	}
	if o.allowTools && h.Allow == nil {
		return nil, &exitError{code: 2, err: fmt.Errorf("--allow-tools is for %s: %s",
			namesOf(func(h *hostconfig.Host) bool { return h.Allow != nil }), h.PromptPolicy)}
	}
	return h, nil
}

// cgcatExecutable is the absolute path of the running cgcat binary with
// symlinks resolved (hosts start it without a shell or PATH).
func cgcatExecutable(override string) (string, error) {
	p := override
	if p == "" {
		var err error
		if p, err = os.Executable(); err != nil {
			return "", fmt.Errorf("cannot tell where this cgcat binary is: %w", err)
		}
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	p, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	if strings.Contains(filepath.ToSlash(p), "/go-build") {
		return "", fmt.Errorf("this cgcat runs from a temporary `go run` build (%s) that disappears when it exits; build it first (go build -o bin/cgcat ./cmd/cgcat) and run install from that binary", p)
	}
	return p, nil
}

// installConfigPath is the absolute path of the config file a host entry
// will name. It must exist and be valid: an entry without a config would
// only ever answer setup_required.
func installConfigPath(g *globalOptions) (path string, cfg *config.Config, err error) {
	if len(g.roots) > 0 {
		return "", nil, &exitError{code: 2, err: errors.New("--root makes a one-off config that a host cannot use; write a config file first: cgcat config init --root DIR")}
	}
	path = g.configPath
	if path == "" {
		path = config.DefaultPath()
	}
	if path == "" {
		return "", nil, &exitError{code: 2, err: errors.New("cannot tell where the cgcat config is: pass --config FILE")}
	}
	if path, err = filepath.Abs(path); err != nil {
		return "", nil, err
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return path, nil, &exitError{code: 1, err: fmt.Errorf("no cgcat config file at %s; a host entry without a config can only answer setup_required, so create one first: cgcat config init --root DIR (the folders that hold your code)", path)}
	}
	cfg, err = config.Load(path)
	if err != nil {
		return path, nil, &exitError{code: 1, err: fmt.Errorf("the cgcat config is not valid, so a host could not start cgcat with it: %w (fix it, then check with `cgcat config check`)", err)}
	}
	return path, cfg, nil
}

func runInstall(ctx context.Context, g *globalOptions, o *installOptions, name string, out, errOut io.Writer) error {
	if o.print {
		return runInstallPrint(g, o, name, out, errOut)
	}
	h, err := lookupHost(name, o)
	if err != nil {
		return err
	}
	cfgPath, cfg, err := installConfigPath(g)
	if err != nil {
		return err
	}
	warnInstallConfig(errOut, g, cfgPath, cfg)
	exe, err := cgcatExecutable(o.executable)
	if err != nil {
		return &exitError{code: 1, err: err}
	}
	e := hostconfig.Entry{Name: o.name, Command: exe, ConfigPath: cfgPath}
	env := hostEnv()
	path, exists, err := hostFile(h, env, o.project)
	if err != nil {
		return &exitError{code: 1, err: err}
	}
	if h.ConfigNote != nil {
		if note := h.ConfigNote(env, o.project); note != "" {
			fmt.Fprintf(errOut, "cgcat: note: %s; cgcat edits %s\n", local.Printable(note), local.Printable(path))
		}
	}
	var before []byte
	if exists {
		if before, err = os.ReadFile(path); err != nil {
			return &exitError{code: 1, err: err}
		}
	}
	servers, native, nativeFound := installedCodeGraph(h, env, o.project, before)
	if nativeFound {
		e.CodeGraphServer = native.Name
	}
	changed, done, err := installEntry(h, e, path, before, exists, o, out)
	if err != nil || done {
		return err
	}
	allowChanged, err := installAllowRules(h, env, o, out)
	if err != nil {
		return &exitError{code: 1, err: err}
	}
	broken := reportNativeCodeGraph(ctx, h, path, servers, e, !o.dryRun, out)
	if o.dryRun {
		fmt.Fprintln(out, "dry run: nothing was written")
		return nil
	}
	printInstallNext(out, h, changed || allowChanged, broken)
	return nil
}

// warnInstallConfig warns about what the host's cgcat will not get from
// this command line: --data-dir is not written into the entry, and a config
// without roots answers setup_required.
func warnInstallConfig(errOut io.Writer, g *globalOptions, cfgPath string, cfg *config.Config) {
	if g.dataDir != "" {
		fmt.Fprintf(errOut, "cgcat: warning: --data-dir is not written into the host entry; the host's cgcat uses dataDir from %s (%s)\n", local.Printable(cfgPath), local.Printable(cfg.DataDir))
	}
	if !cfg.HasRoots() {
		fmt.Fprintf(errOut, "cgcat: warning: %s has no discovery roots, so the tools will answer setup_required until you add some\n", local.Printable(cfgPath))
	}
}

// installedCodeGraph finds the host's native CodeGraph server in the file
// being edited or, for a project file (merged over the user's), in the
// user's file. servers are the CodeGraph servers found.
func installedCodeGraph(h *hostconfig.Host, env hostconfig.Env, project string, before []byte) (servers []hostconfig.Server, native hostconfig.Server, found bool) {
	servers, native, found = findNativeCodeGraph(h, before)
	if !found && project != "" {
		// A project file is merged over the user's: CodeGraph may be there.
		if user, ok, _ := hostFile(h, env, ""); ok {
			src, _ := os.ReadFile(user)
			if _, n, ok := findNativeCodeGraph(h, src); ok {
				servers, native, found = append(servers, n), n, true
			}
		}
	}
	return servers, native, found
}

// installEntry puts the entry into the host file: written (with a backup),
// shown as a diff with --dry-run, or left as it is when it is already
// there. done means the command has nothing more to do (a dry run that
// needs --force).
func installEntry(h *hostconfig.Host, e hostconfig.Entry, path string, before []byte, exists bool, o *installOptions, out io.Writer) (changed, done bool, err error) {
	shown := local.Printable(path)
	var missing []string // what the upsert adds around the entry
	if !h.SnippetTOML {
		missing = hostconfig.MissingPath(before, []string{h.ServersKey})
	}
	after, changed, err := h.Upsert(before, e, o.force)
	var conflict *hostconfig.ConflictError
	if errors.As(err, &conflict) && o.dryRun {
		return false, true, showForcedInstall(h, e, path, before, conflict, o, out)
	}
	if err != nil {
		return false, false, &exitError{code: 1, err: fmt.Errorf("%s: %w", shown, err)}
	}
	if !exists {
		before = nil
	}
	switch {
	case !changed:
		fmt.Fprintf(out, "%s already has MCP server %q with exactly these settings; nothing to do\n  command: %s\n", shown, o.name, commandLine(e))
	case o.dryRun:
		fmt.Fprint(out, hostconfig.UnifiedDiff(path, before, after))
	default:
		backup, err := writeHostFile(h, path, after, o)
		if err == nil {
			err = recordKey(h, path, []string{h.ServersKey}, missing)
		}
		if err != nil {
			return false, false, &exitError{code: 1, err: err}
		}
		fmt.Fprintf(out, "installed MCP server %q into %s\n", o.name, shown)
		fmt.Fprintf(out, "  command: %s\n", commandLine(e))
		printBackup(out, backup)
	}
	return changed, false, nil
}

// showForcedInstall is a dry run that meets another entry of the same
// name: it shows what --force would do, and says that it needs --force.
func showForcedInstall(h *hostconfig.Host, e hostconfig.Entry, path string, before []byte, conflict *hostconfig.ConflictError, o *installOptions, out io.Writer) error {
	shown := local.Printable(path)
	fmt.Fprintf(out, "%s already has an MCP server named %q with different settings:\n%s\n\n",
		shown, o.name, indent(strings.TrimRight(conflict.Existing, "\r\n"), "    "))
	forced, _, ferr := h.Upsert(before, e, true)
	if ferr != nil {
		return &exitError{code: 1, err: fmt.Errorf("%s: %w", shown, ferr)}
	}
	fmt.Fprint(out, hostconfig.UnifiedDiff(path, before, forced))
	fmt.Fprintln(out, "dry run: nothing was written; rerun with --force (and without --dry-run) to replace the entry as shown")
	return nil
}

// printInstallNext says what the user does next: restart the host when
// something changed, fix the host's broken CodeGraph entry when there is one.
func printInstallNext(out io.Writer, h *hostconfig.Host, changed, broken bool) {
	if changed {
		fmt.Fprintf(out, "next: restart %s and start a new session (a running session keeps its old server list); `cgcat doctor` checks the entry by starting it\n", h.Title)
	}
	if broken {
		// The entry asked for is written (exit 0); the problem is the
		// host's other entry, and doctor reports it with the same ✗.
		fmt.Fprintf(out, "cgcat's entry is in place, but agents cannot read code until the problem above is fixed; `cgcat doctor` reports it (✗) until then\n")
	}
}

func runUninstall(_ context.Context, _ *globalOptions, o *installOptions, name string, out, _ io.Writer) error {
	h, err := lookupHost(name, o)
	if err != nil {
		return err
	}
	env := hostEnv()
	path, exists, err := hostFile(h, env, o.project)
	if err != nil {
		return &exitError{code: 1, err: err}
	}
	shown := local.Printable(path)
	changed := false
	if !exists {
		fmt.Fprintf(out, "%s does not exist; nothing to remove\n", shown)
	} else {
		before, err := os.ReadFile(path)
		if err != nil {
			return &exitError{code: 1, err: err}
		}
		after, ch, err := h.Remove(before, o.name)
		if err != nil {
			return &exitError{code: 1, err: fmt.Errorf("%s: %w", shown, err)}
		}
		changed = ch
		switch {
		case !changed:
			fmt.Fprintf(out, "%s has no MCP server named %q; nothing to remove\n", shown, o.name)
		case o.dryRun:
			fmt.Fprint(out, hostconfig.UnifiedDiff(path, before, after))
		default:
			if err := removeEntry(h, path, after, o, out); err != nil {
				return &exitError{code: 1, err: err}
			}
		}
	}
	allowChanged, err := uninstallAllowRules(h, env, o, out)
	if err != nil {
		return &exitError{code: 1, err: err}
	}
	if o.dryRun {
		fmt.Fprintln(out, "dry run: nothing was written")
		return nil
	}
	if err := removeCreatedDirs(h, out); err != nil {
		return &exitError{code: 1, err: err}
	}
	if changed || allowChanged {
		fmt.Fprintf(out, "next: restart %s and start a new session\n", h.Title)
	}
	return nil
}

// removeEntry writes the host file without cgcat's entry, or removes the
// file when install created it and nothing else is in it now.
func removeEntry(h *hostconfig.Host, path string, after []byte, o *installOptions, out io.Writer) error {
	shown := local.Printable(path)
	if !h.SnippetTOML {
		after = pruneRecorded(h, path, []string{h.ServersKey}, after)
	}
	if wasCreated(h, path) && h.Leftover != nil && h.Leftover(after) {
		backup, err := removeCreatedFile(h, path, o)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "removed MCP server %q and %s, which cgcat's install had created and which holds nothing else\n", o.name, shown)
		printBackup(out, backup)
		return nil
	}
	backup, err := writeHostFile(h, path, after, o)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "removed MCP server %q from %s\n", o.name, shown)
	printBackup(out, backup)
	return nil
}

// writeHostFile creates the host's config directory when needed (never a
// project directory) and records what it created, writes with a backup
// into the host's backup folder, and reads the file back.
func writeHostFile(h *hostconfig.Host, path string, data []byte, o *installOptions) (backup string, err error) {
	dir := filepath.Dir(path)
	if o.project == "" {
		created, err := mkdirRecorded(dir, h.DirMode)
		if err != nil {
			return "", fmt.Errorf("create %s: %w", dir, err)
		}
		if err := recordCreated(h, created, nil); err != nil {
			return "", err
		}
	}
	_, statErr := os.Lstat(path)
	now := time.Now
	if o.now != nil {
		now = o.now
	}
	backup, err = hostconfig.WriteWithBackup(path, data, now(), backupsOf(h))
	if err != nil {
		if backup != "" {
			return backup, fmt.Errorf("%s: %w (the original is unchanged; a backup is at %s)", path, err, backup)
		}
		return "", fmt.Errorf("%s: %w (the original is unchanged)", path, err)
	}
	if errors.Is(statErr, fs.ErrNotExist) {
		if err := recordCreated(h, nil, []string{path}); err != nil {
			return backup, err
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		return backup, fmt.Errorf("%s: reading it back: %w", path, err)
	}
	if string(got) != string(data) {
		return backup, fmt.Errorf("%s: the file read back differs from what was written (another program changed it?); the previous version is at %s", path, backup)
	}
	return backup, nil
}

func printBackup(out io.Writer, backup string) {
	if backup == "" {
		fmt.Fprintln(out, "  backup:  none (the file is new)")
		return
	}
	fmt.Fprintf(out, "  backup:  %s\n", local.Printable(backup))
}

// commandLine shows the entry's command as a host runs it.
func commandLine(e hostconfig.Entry) string {
	return doctor.QuoteArgs([]string{e.Command, "serve", "--config", e.ConfigPath})
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}

// runInstallPrint prints the host snippets (R24) with real
// absolute paths; it writes nothing.
func runInstallPrint(g *globalOptions, o *installOptions, name string, out, errOut io.Writer) error {
	hosts := hostconfig.All()
	if name != "" {
		h, err := lookupHost(name, o)
		if err != nil {
			return err
		}
		hosts = []*hostconfig.Host{h}
	}
	cfgPath, _, err := installConfigPath(g)
	if err != nil {
		var ee *exitError
		if cfgPath == "" || !errors.As(err, &ee) {
			return err
		}
		// Still print, but say that the entry would not work yet.
		fmt.Fprintf(errOut, "cgcat: warning: %v\n", ee.err)
	}
	exe, err := cgcatExecutable(o.executable)
	if err != nil {
		return &exitError{code: 1, err: err}
	}
	e := hostconfig.Entry{Name: o.name, Command: exe, ConfigPath: cfgPath}
	env := hostEnv()
	for i, h := range hosts {
		if i > 0 {
			fmt.Fprintln(out)
		}
		where := "its config file"
		if p, _, err := hostFile(h, env, o.project); err == nil {
			where = local.Printable(p)
		}
		comment := "//"
		if h.SnippetTOML {
			comment = "#"
		}
		fmt.Fprintf(out, "%s %s: %s (or run `cgcat install %s`)\n", comment, h.Title, fmt.Sprintf(h.SnippetWhere, where), h.Name)
		fmt.Fprint(out, hostconfig.Snippet(h.Name, e))
	}
	return nil
}
