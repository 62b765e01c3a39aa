package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/cgcat/cgcat/local/config"
	"github.com/cgcat/cgcat/server"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

type projectsOptions struct {
	limit     int
	page      int
	all       bool
	workspace string
	refresh   bool
	json      bool
	// again is the command line that shows another page ("" when unknown).
	again func(page int) string
}

func newProjectsCommand(g *globalOptions) *cobra.Command {
	o := &projectsOptions{}
	cmd := &cobra.Command{
		Use:   "projects [QUERY...]",
		Short: "Search the catalog, exactly as the local_codegraph_projects tool does",
		Long: `Search the catalog by package name, project name, alias or description words, or list
it without a query. Every word is part of one query: ` + "`cgcat projects pay gateway`" + ` searches
for "pay gateway". The answer is the one an agent gets from local_codegraph_projects, shown
for a person: "5 of 12 projects", page by page (--page N), or all at once (--all).
--json prints the tool's envelope, plus total, page and pages.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.again = func(page int) string { return pageCommand(cmd, args, page) }
			return runProjects(cmd.Context(), g, o, strings.Join(args, " "), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().IntVar(&o.limit, "limit", server.DefaultLimit, fmt.Sprintf("how many projects per page (1-%d)", server.MaxLimit))
	cmd.Flags().IntVar(&o.page, "page", 1, "which page to show (1 is the first)")
	cmd.Flags().BoolVar(&o.all, "all", false, "show every page")
	cmd.Flags().StringVar(&o.workspace, "workspace", "", "your current workspace directory (a ranking hint: its own project goes last, related ones first)")
	cmd.Flags().BoolVar(&o.refresh, "refresh", false, fmt.Sprintf("walk every root anew before answering (at most %s)", cliRefreshBudget))
	cmd.Flags().BoolVar(&o.json, "json", false, "print the tool's envelope as JSON, plus total, page and pages")
	return cmd
}

// cliRefreshBudget bounds the refresh `cgcat projects` makes with --refresh,
// or before answering a miss while no process follows the disk.
const cliRefreshBudget = 5 * time.Second

// projectsJSON is `cgcat projects --json`: the envelope the tool returns,
// plus where this page stands in the whole listing.
type projectsJSON struct {
	*server.Envelope
	Total int `json:"total"`          // projects in the whole listing for this view
	Page  int `json:"page,omitempty"` // absent with --all
	Pages int `json:"pages"`
}

func runProjects(ctx context.Context, g *globalOptions, o *projectsOptions, query string, out, errOut io.Writer) error {
	if o.page < 1 {
		return usagef("--page must be 1 or more, got %d", o.page)
	}
	if o.all && o.page != 1 {
		return usagef("--all shows every page; leave out --page %d", o.page)
	}
	ws := o.workspace
	if ws != "" && !filepath.IsAbs(ws) {
		// A flag is relative to where the user stands.
		abs, err := filepath.Abs(ws)
		if err != nil {
			return usagef("--workspace %q: %v", ws, err)
		}
		ws = abs
	}
	a := server.ProjectsArgs{Query: query, Limit: o.limit, WorkspacePath: ws, Refresh: o.refresh, Offset: (o.page - 1) * o.limit, RefreshBudget: cliRefreshBudget}
	if err := a.Validate(); err != nil {
		return flagError(err)
	}
	cfg, err := g.loadConfig()
	if err != nil {
		return err
	}
	warn(errOut, cfg)
	f := newCLIFrontend(config.Fixed(cfg), errOut)
	if err := f.Ready(ctx); err != nil {
		return err
	}
	if cfg.HasRoots() && f.Catalog().State().LastCompleted.IsZero() {
		// The CLI has no background loop: finish discovery first, with
		// progress — after GBrain's cards of a fresh store are mirrored.
		primeMirror(ctx, cfg, f.Catalog(), newLogger(errOut), errOut)
		if err := scanToCompletion(ctx, cfg, f.Catalog(), errOut); err != nil {
			return err
		}
	}
	e, err := f.Projects(ctx, a)
	if err != nil {
		return err
	}
	if o.all {
		// The next pages, from the same snapshot of the listing (cursors
		// work within one process).
		for pages := 1; e.Status == server.StatusOK && e.NextCursor != nil; pages++ {
			if pages > e.Total/o.limit+1 {
				return fmt.Errorf("the listing did not end after %d pages of %d (%d projects); run the command again", pages, o.limit, e.Total)
			}
			next := a
			next.Cursor, next.Offset = *e.NextCursor, 0
			more, err := f.Projects(ctx, next)
			if err != nil {
				return err
			}
			if more.Status != server.StatusOK {
				return fmt.Errorf("the listing changed while it was being read (%s); run the command again", more.Status)
			}
			e.Projects = append(e.Projects, more.Projects...)
			e.NextCursor = more.NextCursor
		}
	}
	pages := (e.Total + o.limit - 1) / o.limit
	if e.Status == server.StatusOK && len(e.Projects) == 0 && o.page > pages {
		return usagef("--page %d is past the end: %d project(s) make %d page(s) of %d", o.page, e.Total, pages, o.limit)
	}
	if o.json {
		page := o.page
		if o.all {
			page = 0
		}
		enc := json.NewEncoder(out)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(projectsJSON{Envelope: e, Total: e.Total, Page: page, Pages: pages}); err != nil {
			return err
		}
	} else {
		v := listingView{query: query, page: o.page, pages: pages, limit: o.limit, all: o.all, again: o.again}
		if _, err := io.WriteString(out, renderProjects(e, v)); err != nil {
			return err
		}
	}
	if e.Status == server.StatusSetupRequired {
		return &exitError{code: exitFailure}
	}
	return nil
}

// flags names, in CLI terms, the argument an ArgError is about.
var flags = map[string]string{"limit": "--limit", "workspacePath": "--workspace", "offset": "--page", "query": "QUERY", "projectId": "ID", "expectedRecordRevision": "--expect-revision"}

// flagError words an argument error in CLI terms, as a usage error.
func flagError(err error) error {
	var ae *server.ArgError
	if !errors.As(err, &ae) || ae.Arg == "" {
		return usagef("%v", err)
	}
	return usagef("%s: %s", cmp.Or(flags[ae.Arg], ae.Arg), ae.Problem)
}

// pageCommand is the command as it was typed, with --page set to page:
// what the person runs for another page.
func pageCommand(cmd *cobra.Command, args []string, page int) string {
	words := []string{cmd.CommandPath()}
	for _, a := range args {
		words = append(words, shellWord(a))
	}
	cmd.Flags().Visit(func(f *pflag.Flag) {
		switch f.Name {
		case "page", "all", "refresh":
			return
		}
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			for _, v := range sv.GetSlice() {
				words = append(words, "--"+f.Name, shellWord(v))
			}
			return
		}
		if f.Value.Type() == "bool" {
			words = append(words, "--"+f.Name)
			return
		}
		words = append(words, "--"+f.Name, shellWord(f.Value.String()))
	})
	return strings.Join(append(words, "--page", fmt.Sprint(page)), " ")
}

// shellWord quotes s for a POSIX shell when it needs quoting.
func shellWord(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./@:,+=%", r) || r > 0x7f)
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
