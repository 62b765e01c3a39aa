package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/config"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// globalOptions are the flags every command takes.
type globalOptions struct {
	configPath string
	roots      []string
	dataDir    string
	color      string // --color: auto, always or never
	// noConfig is the default config path when no file is there (set by
	// loadConfig): the commands that need roots say so once (notSetUp).
	noConfig string
}

func newRootCommand(in io.Reader, out, errOut io.Writer) *cobra.Command {
	g := &globalOptions{}
	root := &cobra.Command{
		Use:           "cgcat",
		Short:         "Find local CodeGraph-indexed projects and hand their paths to coding agents",
		Long:          "cgcat discovers the projects on this machine that CodeGraph has indexed (a directory whose own .codegraph/ holds codegraph.db), keeps a catalog of them, and serves it to Codex, OpenCode and other MCP hosts with two tools: local_codegraph_projects and local_codegraph_resolve.\n\n" + exitStatusHelp,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       currentBuild().oneLine(),
		// Without a command: the help. An unknown command is a usage error
		// (polishCommands gives the root subcommandArgs).
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	root.SetIn(in)
	root.SetOut(out)
	root.SetErr(errOut)
	pf := root.PersistentFlags()
	pf.StringVar(&g.configPath, "config", "", "config file (default $CGCAT_CONFIG, else $XDG_CONFIG_HOME/cgcat/config.json)")
	pf.StringArrayVar(&g.roots, "root", nil, "scan and share this directory instead of the config's roots (repeatable)")
	pf.StringVar(&g.dataDir, "data-dir", "", "catalog directory for --root use (default $XDG_DATA_HOME/cgcat)")
	pf.StringVar(&g.color, "color", "auto", "colour the output: auto (on a terminal, unless NO_COLOR is set), always or never")
	root.AddCommand(
		newServeCommand(g),
		newScanCommand(g),
		newProjectsCommand(g),
		newResolveCommand(g),
		newConfigCommand(g),
		newStoreCommand(g),
		newForgetCommand(g),
		newPruneCommand(g),
		newGBrainCommand(g),
		newInstallCommand(g),
		newUninstallCommand(g),
		newInstructionsCommand(g),
		newDoctorCommand(g),
		newVersionCommand(),
		newCompletionCommand(g),
		newPathCommand(g),
		newShowCommand(g),
		newInitCommand(),
		newManCommand(),
	)
	root.SetFlagErrorFunc(flagUsageError)
	// `cgcat --help` itself shows the whole table (exitStatusHelp).
	root.SetUsageTemplate(root.UsageTemplate() + "{{if .HasParent}}\nExit status: 0 done, 1 failed, 2 usage error, 3 not found (`cgcat --help` says more).\n{{end}}")
	polishCommands(root)
	addCompletions(root, g)
	return root
}

// polishCommands gives every command the CLI's own usage errors: a command
// with subcommands refuses an unknown one (cobra would print the help and
// exit 0), and a wrong number of arguments is said in cgcat's words, with
// the exit status 2 (cobra says "accepts 1 arg(s), received 0").
func polishCommands(cmd *cobra.Command) {
	for _, c := range cmd.Commands() {
		polishCommands(c)
	}
	cmd.Long = wrapHelp(cmd.Long, helpWidth)
	if cmd.HasSubCommands() {
		cmd.Args = subcommandArgs
		if cmd.RunE == nil && cmd.Run == nil {
			cmd.RunE = func(c *cobra.Command, _ []string) error { return c.Help() }
		}
		return
	}
	if check := cmd.Args; check != nil {
		cmd.Args = func(c *cobra.Command, args []string) error {
			if err := check(c, args); err != nil {
				var ee *exitError
				if errors.As(err, &ee) {
					return err // already in our words
				}
				return argCountError(c, args)
			}
			return nil
		}
	}
}

// subcommandArgs refuses an unknown subcommand, naming the known ones.
func subcommandArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	var names []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	hint := ""
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2
	}
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		hint = fmt.Sprintf(" (did you mean %q?)", s[0])
	}
	return usagef("unknown command %q for `%s`%s; the commands are: %s", local.Printable(args[0]), cmd.CommandPath(), hint, strings.Join(names, ", "))
}

// argCountError words a wrong number of arguments from the command's Use
// line ("install codex|opencode|claude|gemini": the argument is
// codex|opencode|claude|gemini).
func argCountError(cmd *cobra.Command, args []string) error {
	want := positionals(cmd.Use)
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = strconv.Quote(local.Printable(a))
	}
	switch {
	case want == "":
		return usagef("`%s` takes no arguments, got %s", cmd.CommandPath(), strings.Join(quoted, " "))
	case len(args) == 0:
		return usagef("`%s` needs %s", cmd.CommandPath(), want)
	}
	return usagef("`%s` takes %s, got %d arguments: %s", cmd.CommandPath(), want, len(args), strings.Join(quoted, " "))
}

// positionals is the argument part of a Use line: the words after the
// command name that are neither flags nor their values.
func positionals(use string) string {
	words := strings.Fields(use)
	var out []string
	for i := 1; i < len(words); i++ {
		w := words[i]
		switch {
		case strings.HasPrefix(w, "[-") || w == "[flags]":
			// an optional flag, maybe with a value word: skip to its "]"
			for !strings.HasSuffix(words[i], "]") && i+1 < len(words) {
				i++
			}
		case strings.HasPrefix(w, "-"):
			i++ // a flag and its value
		default:
			out = append(out, w)
		}
	}
	return strings.Join(out, " ")
}

// flagUsageError words pflag's errors ("invalid argument \"abc\" for
// \"--limit\" flag: strconv.ParseInt: parsing \"abc\": invalid syntax") as
// usage errors in the CLI's own words.
func flagUsageError(cmd *cobra.Command, err error) error {
	var (
		invalid  *pflag.InvalidValueError
		required *pflag.ValueRequiredError
		unknown  *pflag.NotExistError
		syntax   *pflag.InvalidSyntaxError
	)
	var ours *exitError
	switch {
	case errors.As(err, &ours):
		return ours // a flag value that words its own problem (--json FIELDS)
	case errors.As(err, &invalid):
		f := invalid.GetFlag()
		return usagef("--%s %s is not %s: --%s is %s", f.Name, strconv.Quote(local.Printable(invalid.GetValue())), valueKind(f), f.Name, f.Usage)
	case errors.As(err, &required):
		f := required.GetFlag()
		return usagef("--%s needs a value (%s)", f.Name, f.Usage)
	case errors.As(err, &unknown):
		name := unknown.GetSpecifiedName()
		if sh := unknown.GetSpecifiedShortnames(); sh != "" {
			if sh == name[:1] {
				return usagef("unknown flag -%s for `%s`", local.Printable(sh), cmd.CommandPath())
			}
			return usagef("unknown flag -%s in -%s for `%s`", local.Printable(name[:1]), local.Printable(sh), cmd.CommandPath())
		}
		hint := ""
		if s := closestFlag(cmd, name); s != "" {
			hint = fmt.Sprintf(" (did you mean --%s?)", s)
		}
		return usagef("unknown flag --%s for `%s`%s", local.Printable(name), cmd.CommandPath(), hint)
	case errors.As(err, &syntax):
		return usagef("%s is not a flag; write --name or --name=value", strconv.Quote(local.Printable(syntax.GetSpecifiedFlag())))
	}
	return usagef("%s", local.Printable(err.Error()))
}

// valueKind says what a flag's value must be.
func valueKind(f *pflag.Flag) string {
	switch f.Value.Type() {
	case "int", "int64", "int32", "uint", "uint64", "uint32":
		return "a whole number"
	case "bool":
		return "true or false"
	case "duration":
		return "a duration such as 30s or 720h"
	}
	return "a valid " + f.Value.Type()
}

// closestFlag is the flag of cmd nearest to a mistyped name ("" if none
// is close).
func closestFlag(cmd *cobra.Command, name string) string {
	best, bestD := "", 3
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		if d := editDistance(name, f.Name); d < bestD || d == bestD && f.Name < best {
			best, bestD = f.Name, d
		}
	})
	return best
}

// editDistance is the Levenshtein distance (enough for a typo).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// loadConfig finds the config: --root flags make an ad-hoc one; else
// --config, $CGCAT_CONFIG, $XDG_CONFIG_HOME/cgcat/config.json. No file at
// the default place is not an error: the result has no roots and every tool
// answers setup_required (R3).
func (g *globalOptions) loadConfig() (*config.Config, error) {
	if g.dataDir != "" {
		// A flag is relative to where the user stands; a config file's
		// paths must be absolute (R1).
		abs, err := filepath.Abs(g.dataDir)
		if err != nil {
			return nil, err
		}
		g.dataDir = abs
	}
	if len(g.roots) > 0 {
		dd := g.dataDir
		if dd == "" {
			dd = config.DefaultDataDir()
		}
		return config.AdHoc(g.roots, dd)
	}
	path := g.configPath
	explicit := path != "" || os.Getenv("CGCAT_CONFIG") != ""
	if path == "" {
		path = config.DefaultPath()
	}
	if !explicit {
		if _, err := os.Stat(path); os.IsNotExist(err) {
			cfg := config.Default()
			cfg.DataDir = config.DefaultDataDir()
			if g.dataDir != "" {
				cfg.DataDir = g.dataDir
			}
			cfg.Warnings = append(cfg.Warnings, fmt.Sprintf("no config file at %s; run `cgcat config init --root DIR` to create one", path))
			g.noConfig = path
			return &cfg, nil
		}
	}
	cfg, err := config.Load(path)
	if err != nil {
		return nil, err
	}
	if g.dataDir != "" {
		cfg.DataDir = g.dataDir
	}
	return cfg, nil
}

// liveConfig is the config a long-running process follows: the file (or
// the default place, where `cgcat config init` may create one later), or a
// fixed ad-hoc config for --root. An invalid file is no error here: the
// server still starts and says what is wrong in every answer.
func (g *globalOptions) liveConfig() *config.Live {
	cfg, err := g.loadConfig()
	if len(g.roots) > 0 {
		return config.NewLive("", cfg, err, nil)
	}
	path := g.configPath
	if path == "" {
		path = config.DefaultPath()
	}
	dataDir := g.dataDir
	return config.NewLive(path, cfg, err, func(c *config.Config) {
		if dataDir != "" {
			c.DataDir = dataDir
		}
	})
}

func newLogger(w io.Writer) *slog.Logger {
	level := slog.LevelInfo
	switch strings.ToLower(os.Getenv("CGCAT_LOG")) {
	case "debug":
		level = slog.LevelDebug
	case "warn":
		level = slog.LevelWarn
	case "error":
		level = slog.LevelError
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level, ReplaceAttr: explainAttr}))
}

func warn(w io.Writer, cfg *config.Config) {
	for _, m := range cfg.Warnings {
		fmt.Fprintln(w, "cgcat: warning:", m)
	}
}

// isTerminal reports whether w is a character device (progress lines go
// only to terminals).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
