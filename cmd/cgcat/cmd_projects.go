package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cgcat/cgcat/local"
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
	json      jsonFlag
	verbose   bool
	// again is the command line that shows another page ("" when unknown).
	again func(page int) string
	// limitSet and pageSet: given on the command line (else the layout
	// chooses: a page that fits the terminal, every page in a pipe).
	limitSet, pageSet bool
}

func newProjectsCommand(g *globalOptions) *cobra.Command {
	o := &projectsOptions{}
	cmd := &cobra.Command{
		Use:   "projects [QUERY...]",
		Short: "Search the catalog, exactly as the local_codegraph_projects tool does",
		Long: `Search the catalog by package name, project name, alias, language ("python",
"typescript") or description words, or list it without a query. Every word is
part of one query: ` + "`cgcat projects pay gateway`" + ` searches for "pay gateway". The answer is
the one an agent gets from local_codegraph_projects, shown for a person.

On a terminal: one line per project (a state mark, the name, the path, what is
off), a page that fits the screen (--page N, --all), coloured unless NO_COLOR
or --color=never. -v shows every fact of each project ("5 of 12 projects").

In a pipe: every project, one record per line, four tab-separated fields
` + recordFields + ` (PATH empty when the project has none;
control characters written as \xHH), so ` + "`cgcat projects | cut -f2`" + ` lists the paths.

--json prints the tool's envelope, plus total, page and pages; --json
name,projectPath prints only those fields of each project, as one JSON array.
--workspace defaults to the current directory: its project goes last and the
projects related to it first.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.again = func(page int) string { return pageCommand(cmd, args, page) }
			o.limitSet, o.pageSet = cmd.Flags().Changed("limit"), cmd.Flags().Changed("page")
			if !cmd.Flags().Changed("workspace") {
				o.workspace = currentDir()
			}
			return runProjects(cmd.Context(), g, o, strings.Join(args, " "), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().IntVar(&o.limit, "limit", server.DefaultLimit, fmt.Sprintf("how many projects per page (1-%d) (default: what fits the terminal; every one in a pipe; %d with --json)", server.MaxLimit, server.DefaultLimit))
	cmd.Flags().IntVar(&o.page, "page", 1, "which page to show (1 is the first)")
	cmd.Flags().BoolVar(&o.all, "all", false, "show every page")
	cmd.Flags().StringVar(&o.workspace, "workspace", "", "your workspace directory (default: the current directory; a ranking hint: its own project goes last, related ones first; --workspace= for none)")
	cmd.Flags().BoolVar(&o.refresh, "refresh", false, fmt.Sprintf("walk every root anew before answering (at most %s)", cliRefreshBudget))
	cmd.Flags().BoolVarP(&o.verbose, "verbose", "v", false, "show every fact of each project (the detail view)")
	addJSONFlag(cmd.Flags(), &o.json, "print the tool's envelope as JSON, plus total, page and pages")
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

// layout is how a listing is printed.
type layout int

const (
	layoutShort   layout = iota // a terminal: one line per project
	layoutRecords               // a pipe: tab-separated records
	layoutDetail                // -v: every fact
	layoutJSON                  // --json: the envelope
	layoutFields                // --json FIELDS: an array of chosen fields
)

// chooseLayout picks the layout and, unless --limit, --page or --all was
// given, the page: what fits the terminal, or every page where a script
// reads (a pipe, chosen fields).
func (o *projectsOptions) chooseLayout(t termOut) layout {
	l := layoutShort
	switch {
	case o.json.on && o.json.fields != nil:
		l = layoutFields
	case o.json.on:
		return layoutJSON
	case o.verbose:
		l = layoutDetail
	case !t.tty:
		l = layoutRecords
	}
	if o.limitSet || o.pageSet || o.all {
		return l
	}
	switch {
	case l == layoutRecords || l == layoutFields:
		o.all, o.limit = true, server.MaxLimit
	case l == layoutShort:
		o.limit = min(max(t.lines-2, 1), server.MaxLimit)
	case l == layoutDetail && t.tty:
		o.limit = min(max((t.lines-3)/7, 1), server.MaxLimit)
	}
	return l
}

func runProjects(ctx context.Context, g *globalOptions, o *projectsOptions, query string, out, errOut io.Writer) error {
	t, err := termOf(g, out)
	if err != nil {
		return err
	}
	lay := o.chooseLayout(t)
	if o.page < 1 {
		return usagef("--page must be 1 or more, got %d", o.page)
	}
	if o.all && o.page != 1 {
		return usagef("--all shows every page; leave out --page %d", o.page)
	}
	ws, err := absWorkspace(o.workspace)
	if err != nil {
		return err
	}
	a := server.ProjectsArgs{Query: query, Limit: o.limit, WorkspacePath: ws, Refresh: o.refresh, Offset: (o.page - 1) * o.limit, RefreshBudget: cliRefreshBudget}
	if err := a.Validate(); err != nil {
		return flagError(err)
	}
	cfg, err := g.loadConfig()
	if err != nil {
		return err
	}
	warnSetUp(errOut, g, cfg)
	f := newCLIFrontend(config.Fixed(cfg), errOut)
	if err := f.Ready(ctx); err != nil {
		return err
	}
	if cfg.HasRoots() && f.Catalog().State().LastCompleted.IsZero() {
		// The CLI has no background loop: finish discovery first, with
		// progress — after GBrain's cards of a fresh store are mirrored.
		primeMirror(ctx, cfg, f.parts(), newLogger(errOut), errOut)
		if err := scanToCompletion(ctx, cfg, f.parts().st, errOut); err != nil {
			return err
		}
	}
	e, err := listProjects(ctx, f.Frontend, a, o.all, o.limit)
	if err != nil {
		return err
	}
	pages := (e.Total + o.limit - 1) / o.limit
	if e.Status == server.StatusOK && len(e.Projects) == 0 && o.page > pages {
		return usagef("--page %d is past the end: %d project(s) make %d page(s) of %d", o.page, e.Total, pages, o.limit)
	}
	if err := printListing(out, errOut, g, t, lay, e, o, query, pages); err != nil {
		return err
	}
	if e.Status == server.StatusSetupRequired {
		return &exitError{code: exitFailure}
	}
	return nil
}

// printListing prints an answer in its layout.
func printListing(out, errOut io.Writer, g *globalOptions, t termOut, lay layout, e *server.Envelope, o *projectsOptions, query string, pages int) error {
	if e.Status == server.StatusSetupRequired {
		// Said once, on stderr; --json still prints the answer on stdout.
		fmt.Fprintln(errOut, notSetUp(g))
		if lay != layoutJSON && lay != layoutFields {
			return nil
		}
	}
	switch lay {
	case layoutJSON:
		page := o.page
		if o.all {
			page = 0
		}
		return writeJSON(out, projectsJSON{Envelope: e, Total: e.Total, Page: page, Pages: pages})
	case layoutFields:
		return writeFields(out, e.Projects, o.json.fields)
	case layoutDetail:
		v := listingView{query: query, page: o.page, pages: pages, limit: o.limit, all: o.all, again: o.again}
		_, err := io.WriteString(out, renderProjects(e, v))
		return err
	case layoutRecords:
		writeNotes(errOut, e, query, t)
		return writeRecords(out, e.Projects)
	}
	writeNotes(errOut, e, query, t)
	if err := writeShort(out, t, e.Projects); err != nil {
		return err
	}
	if e.Status == server.StatusOK && !o.all && o.page < pages {
		more := e.Total - (o.page-1)*o.limit - len(e.Projects)
		fmt.Fprintln(out, t.paint(sgrDim, fmt.Sprintf("… %d more: %s  (or --all)", more, o.again(o.page+1))))
	}
	return nil
}

// listProjects asks for one page, or with all every page, from the same
// snapshot of the listing (cursors work within one process).
func listProjects(ctx context.Context, f *server.Frontend, a server.ProjectsArgs, all bool, limit int) (*server.Envelope, error) {
	e, err := f.Projects(ctx, a)
	if err != nil || !all {
		return e, err
	}
	for pages := 1; e.Status == server.StatusOK && e.NextCursor != nil; pages++ {
		if pages > e.Total/limit+1 {
			return nil, fmt.Errorf("the listing did not end after %d pages of %d (%d projects); run the command again", pages, limit, e.Total)
		}
		next := a
		next.Cursor, next.Offset = *e.NextCursor, 0
		more, err := f.Projects(ctx, next)
		if err != nil {
			return nil, err
		}
		if more.Status != server.StatusOK {
			return nil, fmt.Errorf("the listing changed while it was being read (%s); run the command again", more.Status)
		}
		e.Projects = append(e.Projects, more.Projects...)
		e.NextCursor = more.NextCursor
	}
	return e, nil
}

// currentDir is the directory the command runs in ("" if unknown): the
// default workspace hint.
func currentDir() string {
	d, err := os.Getwd()
	if err != nil {
		return ""
	}
	return d
}

// absWorkspace makes --workspace absolute (a flag is relative to where
// the user stands).
func absWorkspace(ws string) (string, error) {
	if ws == "" || filepath.IsAbs(ws) {
		return ws, nil
	}
	abs, err := filepath.Abs(ws)
	if err != nil {
		return "", usagef("--workspace %q: %v", local.Printable(ws), err)
	}
	return abs, nil
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
		if f.Name == "json" && f.Value.String() == jsonWhole {
			words = append(words, "--json")
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

// shellWord quotes s for a POSIX shell when it needs quoting: inside
// single quotes nothing is special, and a single quote itself is closed,
// written in double quotes and reopened ('acme'"'"'s sdk'), so no
// backslash is involved (local.Printable would double it). A word with a
// control or invisible format character is written as $'...' with escapes
// instead (bash, zsh, ksh and POSIX.1-2024 sh read it), so the line stays
// printable and still gives the same word back.
func shellWord(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./@:,+=%", r) || r > 0x7f)
	}) < 0 && !hasControl(s) {
		return s
	}
	if hasControl(s) {
		return dollarQuote(s)
	}
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}

// hasControl reports a character that local.Printable would escape (a
// backslash aside).
func hasControl(s string) bool {
	return local.Printable(strings.ReplaceAll(s, "\\", "")) != strings.ReplaceAll(s, "\\", "")
}

// dollarQuote writes s as $'...': printable runes as they are, a quote and
// a backslash escaped, everything else as \xHH bytes.
func dollarQuote(s string) string {
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '\'' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == utf8.RuneError && size <= 1 || local.Printable(s[i:i+size]) != s[i:i+size]:
			for _, c := range []byte(s[i : i+size]) {
				fmt.Fprintf(&b, `\x%02x`, c)
			}
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	b.WriteByte('\'')
	return b.String()
}
