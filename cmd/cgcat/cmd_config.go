package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/catalog"
	"github.com/cgcat/cgcat/local/config"
	"github.com/cgcat/cgcat/local/store"
	"github.com/spf13/cobra"
)

type configInitOptions struct {
	force        bool
	allowMissing bool
	json         bool
}

type configCheckOptions struct {
	json bool
}

func newConfigCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{Use: "config", Short: "Create or check the config file"}
	o := &configInitOptions{}
	initCmd := &cobra.Command{
		Use:   "init --root DIR [--root DIR...] [--data-dir DIR]",
		Short: "Write a starter config file with these roots",
		Long: "Write the config file (--config, else $CGCAT_CONFIG, else $XDG_CONFIG_HOME/cgcat/config.json) with these " +
			"discovery roots (shared too) and data dir. The values are checked by the same rules cgcat uses to read the " +
			"file: every path absolute (no ~, no $VARS, no relative path), and every root must exist unless you pass " +
			"--allow-missing (a missing root is skipped until it exists).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runConfigInit(cmd.Context(), g, o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	initCmd.Flags().BoolVar(&o.force, "force", false, "overwrite an existing config file")
	initCmd.Flags().BoolVar(&o.allowMissing, "allow-missing", false, "write roots that do not exist (yet); they are skipped until they do")
	initCmd.Flags().BoolVar(&o.json, "json", false, "print what was written as JSON")
	co := &configCheckOptions{}
	check := &cobra.Command{
		Use:   "check",
		Short: "Validate the config file and print what it means; report problems in the projects' hint files",
		Long: "Validate the config file with the rules cgcat reads it by and print what it means. Without a config file " +
			"(and without --root) it fails and says how to create one. It also reports the problems found in the hint " +
			"files (codegraph/project.json) of the catalogued projects this configuration shares — a file that does not " +
			"parse, an unknown key — as the last scan read them.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runConfigCheck(cmd.Context(), g, co, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	check.Flags().BoolVar(&co.json, "json", false, "print the result as JSON")
	cmd.AddCommand(initCmd, check)
	return cmd
}

// configWritten is what `cgcat config init --json` prints.
type configWritten struct {
	Path     string   `json:"path"`
	Roots    []string `json:"roots"`
	DataDir  string   `json:"dataDir"`
	Warnings []string `json:"warnings"`
}

func runConfigInit(_ context.Context, g *globalOptions, o *configInitOptions, out, errOut io.Writer) error {
	if len(g.roots) == 0 {
		return usagef("name at least one --root DIR: the folders that hold your code (cgcat never scans your whole home directory by default)")
	}
	path := g.configPath
	if path == "" {
		path = config.DefaultPath()
	}
	if path == "" {
		return usagef("cannot tell where to write the config ($HOME is not set): pass --config FILE")
	}
	path, _ = filepath.Abs(path)
	cfg, err := configFromFlags(g.roots, g.dataDir, path)
	if err != nil {
		return err
	}
	if !o.allowMissing {
		for _, r := range cfg.Discovery.Roots {
			if _, err := os.Stat(r); errors.Is(err, fs.ErrNotExist) {
				return usagef("--root %s does not exist; create it or correct the path (or pass --allow-missing to write it anyway: it is skipped until it exists)", local.Printable(r))
			}
		}
	}
	if _, err := os.Stat(path); err == nil && !o.force {
		return usagef("%s already exists; pass --force to overwrite it, or edit it by hand", local.Printable(path))
	}
	b, err := config.Marshal(cfg)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return err
	}
	if o.json {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(configWritten{Path: path, Roots: cfg.Discovery.Roots, DataDir: cfg.DataDir, Warnings: nonNil(cfg.Warnings)})
	}
	warn(errOut, cfg)
	fmt.Fprintf(out, "wrote %s\n", local.Printable(path))
	for _, r := range cfg.Discovery.Roots {
		fmt.Fprintf(out, "root: %s\n", local.Printable(r))
	}
	fmt.Fprintf(out, "data dir: %s\nnext: `cgcat scan` to discover projects now, then `cgcat install codex` (or opencode, claude, gemini)\n", local.Printable(cfg.DataDir))
	return nil
}

// configFromFlags builds the config `config init` writes and checks it with
// the loader's own rules, on the values exactly as typed: `--root=~/code`
// (a ~ the shell did not expand) is refused, never written as
// /cwd/~/code.
func configFromFlags(roots []string, dataDir, path string) (*config.Config, error) {
	raw := config.Default()
	raw.DataDir = dataDir
	if raw.DataDir == "" {
		raw.DataDir = config.DefaultDataDir()
	}
	raw.Discovery.Roots = roots
	b, err := config.Marshal(&raw)
	if err != nil {
		return nil, err
	}
	cfg, err := config.Parse(b, path)
	var ce *config.Error
	if errors.As(err, &ce) {
		return nil, flagConfigError(ce, roots, raw.DataDir)
	}
	return cfg, err
}

// flagConfigError words a config error about a value config init took
// from a flag in the flag's terms, with the value it should have been.
func flagConfigError(ce *config.Error, roots []string, dataDir string) error {
	flag, value := "", ""
	switch {
	case ce.Field == "dataDir":
		flag, value = "--data-dir", dataDir
	case strings.HasPrefix(ce.Field, "discovery.roots["):
		i, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(ce.Field, "discovery.roots["), "]"))
		if err == nil && i < len(roots) {
			flag, value = "--root", roots[i]
		}
	}
	if flag == "" {
		return usagef("%s: %s", ce.Field, ce.Problem)
	}
	msg := fmt.Sprintf("%s: %s", flag, ce.Problem)
	if fixed := absoluteFor(value); fixed != "" {
		msg += fmt.Sprintf("; did you mean %s %s?", flag, shellWord(fixed))
	}
	return usagef("%s", local.Printable(msg))
}

// absoluteFor is the absolute path a person most likely meant by p ("" when
// there is no good guess): ~ and ~/x are the home directory, $VARS are
// expanded, a relative path is taken from the current directory.
func absoluteFor(p string) string {
	switch {
	case p == "" || strings.Contains(p, "://"):
		return ""
	case p == "~" || strings.HasPrefix(p, "~/") || strings.HasPrefix(p, `~\`):
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		return filepath.Join(home, p[1:])
	case strings.Contains(p, "$"):
		if x := os.ExpandEnv(p); filepath.IsAbs(x) && !strings.Contains(x, "$") {
			return filepath.Clean(x)
		}
		return ""
	case !filepath.IsAbs(p):
		a, err := filepath.Abs(p)
		if err != nil {
			return ""
		}
		return a
	}
	return ""
}

// configReport is what `cgcat config check` prints.
type configReport struct {
	Config              string       `json:"config"` // the file ("" for --root use)
	Valid               bool         `json:"valid"`
	DataDir             string       `json:"dataDir"`
	DiscoveryRoots      []string     `json:"discoveryRoots"`
	SharingRoots        []string     `json:"sharingRoots"`
	DenyRoots           []string     `json:"denyRoots"`
	ExposeAbsolutePaths bool         `json:"exposeAbsolutePaths"`
	GBrainEnabled       bool         `json:"gbrainEnabled"`
	Warnings            []string     `json:"warnings"`
	Hints               hintsChecked `json:"hintFiles"`
	// UnsharedRoots are discovery roots no sharing root covers: their
	// projects are found and never shown.
	UnsharedRoots []string `json:"unsharedDiscoveryRoots"`
	// Rejected are the index files the last scan refused (not projects),
	// with the reason.
	Rejected []local.Gap `json:"rejectedIndexFiles"`
}

// hintsChecked is what config check found in the hint files of the
// catalogued projects this configuration shares.
type hintsChecked struct {
	Checked  bool          `json:"checked"`
	Note     string        `json:"note"`
	Projects int           `json:"projects"` // catalogued projects looked at
	Problems []hintProblem `json:"problems"`
}

type hintProblem struct {
	ProjectID string `json:"projectId"`
	Root      string `json:"root"`
	Problem   string `json:"problem"`
}

func runConfigCheck(ctx context.Context, g *globalOptions, o *configCheckOptions, out, errOut io.Writer) error {
	if len(g.roots) == 0 && g.configPath == "" {
		path := config.DefaultPath()
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("no config file at %s; create one with `cgcat config init --root DIR` (one --root per folder that holds your code)", local.Printable(path))
		}
	} else if g.configPath != "" && len(g.roots) == 0 {
		if _, err := os.Stat(g.configPath); errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("no config file at %s; create one with `cgcat config init --config %s --root DIR`", local.Printable(g.configPath), shellWord(local.Printable(g.configPath)))
		}
	}
	cfg, err := g.loadConfig()
	if err != nil {
		return err
	}
	rep := configReport{Config: cfg.Path, Valid: true, DataDir: cfg.DataDir, DiscoveryRoots: nonNil(cfg.Discovery.Roots),
		SharingRoots: nonNil(cfg.Sharing.Roots), DenyRoots: nonNil(cfg.Sharing.DenyRoots), ExposeAbsolutePaths: cfg.Sharing.ExposeAbsolutePaths,
		GBrainEnabled: cfg.GBrain.Enabled, Warnings: nonNil(cfg.Warnings), UnsharedRoots: nonNil(catalog.UnsharedRoots(cfg)), Rejected: []local.Gap{}}
	rep.Hints = checkHintFiles(ctx, cfg, &rep.Rejected)
	if o.json {
		enc := json.NewEncoder(out)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	warn(errOut, cfg)
	where := local.Printable(cfg.Path)
	if where == "" {
		where = "(no file: --root given)"
	}
	fmt.Fprintf(out, "config: %s — valid\n", where)
	fmt.Fprintf(out, "data dir: %s\n", local.Printable(cfg.DataDir))
	if !cfg.HasRoots() {
		fmt.Fprintln(out, "discovery roots: none — every tool answers setup_required until you add some")
	}
	for _, r := range cfg.Discovery.Roots {
		fmt.Fprintf(out, "discovery root: %s\n", local.Printable(r))
	}
	for _, r := range cfg.Sharing.Roots {
		fmt.Fprintf(out, "sharing root: %s\n", local.Printable(r))
	}
	for _, r := range cfg.Sharing.DenyRoots {
		fmt.Fprintf(out, "deny root: %s\n", local.Printable(r))
	}
	for _, r := range rep.UnsharedRoots {
		fmt.Fprintf(out, "warning: discovery root %s is under no sharing root: its projects are found but never shown (add it, or a parent, to sharing.roots)\n", local.Printable(r))
	}
	fmt.Fprintf(out, "absolute paths exposed: %v\n", cfg.Sharing.ExposeAbsolutePaths)
	fmt.Fprintf(out, "gbrain: enabled=%v\n", cfg.GBrain.Enabled)
	h := rep.Hints
	switch {
	case !h.Checked:
		fmt.Fprintf(out, "hint files: not checked (%s)\n", h.Note)
	case len(h.Problems) == 0:
		fmt.Fprintf(out, "hint files: no problems in %d catalogued project(s) (%s)\n", h.Projects, h.Note)
	default:
		fmt.Fprintf(out, "hint files: %d problem(s) in %d catalogued project(s) (%s); README: \"The hint file\"\n", len(h.Problems), h.Projects, h.Note)
		for _, p := range h.Problems {
			fmt.Fprintf(out, "  %s: %s\n", local.Printable(p.Root), local.Printable(p.Problem))
		}
	}
	printRejected(out, rep.Rejected)
	return nil
}

// printRejected names the index files the last scan refused, with why.
func printRejected(out io.Writer, rejected []local.Gap) {
	for _, g := range rejected {
		fmt.Fprintf(out, "not an index: %s (%s)\n", local.Printable(g.Path), local.Printable(g.Why))
	}
}

// hintFile is the hint file's name in a project, as problems name it.
const hintFile = "codegraph/project.json"

// checkHintFiles collects the hint-file problems of the catalogued projects
// this configuration shares, as the last scan read the files (reading
// every project's files here would be a scan). A hidden project's problems
// are never shown. It never creates a catalog.
func checkHintFiles(ctx context.Context, cfg *config.Config, rejected *[]local.Gap) hintsChecked {
	h := hintsChecked{Problems: []hintProblem{}}
	if !cfg.HasRoots() {
		h.Note = "no roots, so no catalogued projects"
		return h
	}
	if _, err := os.Stat(store.DBDir(cfg.DataDir)); err != nil {
		h.Note = "no catalog yet; `cgcat scan` builds it"
		return h
	}
	st, err := openStore(ctx, cfg)
	if err != nil {
		h.Note = fmt.Sprintf("the catalog cannot be opened: %v; `cgcat doctor` says more", err)
		return h
	}
	pol := catalog.PolicyFrom(cfg)
	err = st.View(ctx, func(rd *store.Reader) error {
		if state, err := rd.ScanState(); err == nil {
			*rejected = append(*rejected, catalog.VisibleRejected(state, pol)...)
		}
		return rd.Projects(func(p *local.Project) error {
			if !pol.AllowsRecord(p) {
				return nil
			}
			h.Projects++
			var probs []hintProblem
			for _, prob := range p.Meta.Problems {
				if strings.HasPrefix(prob, hintFile) {
					probs = append(probs, hintProblem{ProjectID: p.ID, Root: p.Root, Problem: prob})
				}
			}
			// The live re-check also hides a root reached through an alias
			// of a deny root, as the listings do.
			if len(probs) > 0 && catalog.Recheck(p, pol).Allowed {
				h.Problems = append(h.Problems, probs...)
			}
			return nil
		})
	})
	if err != nil {
		h.Note = fmt.Sprintf("the catalog cannot be read: %v; `cgcat doctor` says more", err)
		return h
	}
	h.Checked, h.Note = true, "as the last scan read them; `cgcat scan` reads changed files again"
	return h
}

// nonNil makes an absent list print as [] in JSON.
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
