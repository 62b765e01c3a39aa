package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cgcat/cgcat/cmd/cgcat/hostconfig"
	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/config"
	"github.com/cgcat/cgcat/local/store"
	"github.com/cgcat/cgcat/server"
	"github.com/spf13/cobra"
)

// shells are the shells `cgcat completion` writes scripts for.
var shells = []string{"bash", "zsh", "fish", "powershell"}

func newCompletionCommand(_ *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "completion bash|zsh|fish|powershell",
		Short: "Print the shell completion script (commands, flags, hosts, languages, project ids)",
		Long: `Print the completion script for a shell. Besides commands and flags it completes
the hosts of install and uninstall (` + strings.Join(hostconfig.Hosts, ", ") + `), instructions --lang
(en, zh), and the project ids of resolve and forget (with each project's name), asked of
the catalog the way ` + "`cgcat projects`" + ` asks it: only projects this configuration
shares are ever offered, and completing never scans.

  bash        source <(cgcat completion bash)             # in ~/.bashrc
              (needs the bash-completion package)
  zsh         cgcat completion zsh > "${fpath[1]}/_cgcat"  # then start a new shell
              (or: source <(cgcat completion zsh) in ~/.zshrc, after compinit)
  fish        cgcat completion fish > ~/.config/fish/completions/cgcat.fish
  powershell  cgcat completion powershell | Out-String | Invoke-Expression   # in $PROFILE`,
		Args:      cobra.ExactArgs(1),
		ValidArgs: shells,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCompletion(cmd.Root(), args[0], cmd.OutOrStdout())
		},
	}
	return cmd
}

func runCompletion(root *cobra.Command, shell string, out io.Writer) error {
	switch shell {
	case "bash":
		return root.GenBashCompletionV2(out, true)
	case "zsh":
		return root.GenZshCompletion(out)
	case "fish":
		return root.GenFishCompletion(out, true)
	case "powershell":
		return root.GenPowerShellCompletionWithDesc(out)
	}
	return usagef("unknown shell %q: write bash, zsh, fish or powershell", local.Printable(shell))
}

// addCompletions gives the commands their dynamic completions. It is kept
// apart from the commands so that each shell sees the same values the
// commands accept.
func addCompletions(root *cobra.Command, g *globalOptions) {
	_ = root.MarkPersistentFlagDirname("root")
	_ = root.MarkPersistentFlagDirname("data-dir")
	_ = root.MarkPersistentFlagFilename("config", "json")
	for _, cmd := range root.Commands() {
		switch cmd.Name() {
		case "install", "uninstall":
			cmd.ValidArgsFunction = completeHosts
		case "resolve":
			cmd.ValidArgsFunction = completeIDsOrNames(g)
		case "path", "show":
			cmd.ValidArgsFunction = completeIDsOrNames(g)
		case "forget":
			cmd.ValidArgsFunction = completeProjectIDs(g, -1)
		case "projects":
			cmd.ValidArgsFunction = completeProjectNames(g)
		case "instructions":
			_ = cmd.RegisterFlagCompletionFunc("lang", cobra.FixedCompletions(
				[]cobra.Completion{cobra.CompletionWithDesc("en", "English"), cobra.CompletionWithDesc("zh", "中文")}, cobra.ShellCompDirectiveNoFileComp))
		}
		for _, name := range []string{"workspace", "project"} {
			if cmd.Flags().Lookup(name) != nil {
				_ = cmd.MarkFlagDirname(name)
			}
		}
	}
}

// completeHosts offers the hosts install and uninstall accept.
func completeHosts(_ *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for _, h := range hostconfig.Hosts {
		if strings.HasPrefix(h, toComplete) {
			out = append(out, cobra.CompletionWithDesc(h, hostTitle(h)))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeProjectIDs offers the ids of the projects this configuration
// shares, each described by its name and path; n is how many ids the
// command takes (-1: any number, none twice).
func completeProjectIDs(g *globalOptions, n int) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if n >= 0 && len(args) >= n {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ps := completionProjects(cmd.Context(), g)
		var out []cobra.Completion
		for _, p := range ps {
			if strings.HasPrefix(p.ProjectID, toComplete) && !slices.Contains(args, p.ProjectID) {
				out = append(out, cobra.CompletionWithDesc(p.ProjectID, completionText(p)))
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeIDsOrNames completes the one NAME|ID of resolve, path and show:
// ids (with each project's name and path) for a word that is empty or
// starts like an id, names for any other word (what people type:
// `resolve tiny<TAB>`).
func completeIDsOrNames(g *globalOptions) cobra.CompletionFunc {
	ids, names := completeProjectIDs(g, 1), completeProjectNames(g)
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		if toComplete == "" || strings.HasPrefix("cg_", toComplete) || strings.HasPrefix(toComplete, "cg_") {
			return ids(cmd, args, toComplete)
		}
		return names(cmd, args, toComplete)
	}
}

// completeProjectNames offers the names of the shared projects as a
// query: every form a search finds a project by exactly — its name, its
// package names, their unscoped form or last path element, its
// directory's name — that starts with the word typed (case aside), so
// `projects ord<TAB>` offers order-sdk for @acme/order-sdk. Shells keep
// only the values that start with the typed word, so that is what is
// offered.
func completeProjectNames(g *globalOptions) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		seen := map[string]bool{}
		var out []cobra.Completion
		prefix := strings.ToLower(toComplete)
		for _, p := range completionProjects(cmd.Context(), g) {
			for _, form := range nameForms(p) {
				form = oneLine(form)
				if form == "" || seen[form] || strings.ContainsAny(form, " ") || !strings.HasPrefix(strings.ToLower(form), prefix) {
					continue
				}
				seen[form] = true
				out = append(out, cobra.Completion(form))
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// nameForms are the words that name p exactly (see names in pick.go).
func nameForms(p server.Project) []string {
	forms := []string{p.Name, lastElement(p.Name)}
	for _, pk := range p.Packages {
		forms = append(forms, pk, lastElement(pk))
	}
	if p.ProjectPath != nil {
		forms = append(forms, filepath.Base(*p.ProjectPath))
	}
	return forms
}

// lastElement is a name without its scope or path: @acme/x and
// example.com/x are x, org.acme:x is x.
func lastElement(s string) string { return s[strings.LastIndexAny(s, ":/")+1:] }

// maxCompletionPages bounds how much of the catalog one completion reads
// (pages of server.MaxLimit projects).
const maxCompletionPages = 20

// completionProjects lists the projects of this configuration's view
// through the frontend the CLI twins use (`cgcat projects`), so a
// completion never offers a project those would not show. It never scans
// and never creates a catalog: without one (or on any error) it offers
// nothing.
func completionProjects(ctx context.Context, g *globalOptions) []server.Project {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	cfg, err := g.loadConfig()
	if err != nil || !cfg.HasRoots() {
		return nil
	}
	if _, err := os.Stat(store.DBDir(cfg.DataDir)); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	f := newCLIFrontend(config.Fixed(cfg), io.Discard)
	if err := f.Ready(ctx); err != nil || f.Catalog() == nil || f.Catalog().Len() == 0 {
		return nil // an empty catalog would make the frontend scan a slice
	}
	var out []server.Project
	a := server.ProjectsArgs{Limit: server.MaxLimit}
	for range maxCompletionPages {
		e, err := f.Projects(ctx, a)
		if err != nil || e.Status != server.StatusOK {
			break
		}
		out = append(out, e.Projects...)
		if e.NextCursor == nil {
			break
		}
		a.Cursor = *e.NextCursor
	}
	return out
}

// completionText describes a project in a completion: its name and path
// (or why it has none), on one line.
func completionText(p server.Project) string {
	where := "no path: " + p.Why
	if p.ProjectPath != nil {
		where = *p.ProjectPath
	}
	return oneLine(fmt.Sprintf("%s — %s", p.Name, where))
}

// oneLine makes s safe for a completion line: printable, no tabs or line
// breaks (a tab separates a completion from its description).
func oneLine(s string) string {
	return strings.Join(strings.Fields(local.Printable(s)), " ")
}
