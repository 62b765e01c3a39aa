package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/catalog"
	"github.com/cgcat/cgcat/local/config"
	"github.com/cgcat/cgcat/local/lease"
	"github.com/cgcat/cgcat/local/pathid"
	"github.com/cgcat/cgcat/local/scan"
	"github.com/cgcat/cgcat/projection"
	"github.com/spf13/cobra"
)

type scanOptions struct {
	once bool
	json bool
}

func newScanCommand(g *globalOptions) *cobra.Command {
	o := &scanOptions{}
	cmd := &cobra.Command{
		Use:   "scan",
		Short: "Discover projects under the configured roots now",
		Long:  "Run discovery rounds until a whole pass over every root is done (or one slice with --once). If another cgcat process is scanning, wait for it, then scan. Progress goes to stderr on a terminal.",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runScan(cmd.Context(), g, o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().BoolVar(&o.once, "once", false, "run one slice only")
	cmd.Flags().BoolVar(&o.json, "json", false, "print the summary as JSON")
	return cmd
}

// scanSummary is what `cgcat scan` reports.
type scanSummary struct {
	Pass          uint64     `json:"pass"`
	Finished      bool       `json:"finished"`
	Directories   int        `json:"directories"`
	ProjectsSeen  int        `json:"projectsSeen"`
	Projects      int        `json:"projects"` // records in the catalog
	Coverage      string     `json:"coverage"`
	Gaps          []scan.Gap `json:"gaps"`
	GapCount      int        `json:"gapCount"`
	Queued        int        `json:"queued"`
	ElapsedMs     int64      `json:"elapsedMs"`
	DirsPerSecond float64    `json:"dirsPerSecond"`
	// Rejected are index files refused by the project rule, with why;
	// UnsharedRoots are discovery roots no sharing root covers.
	Rejected      []scan.Gap `json:"rejectedIndexFiles"`
	UnsharedRoots []string   `json:"unsharedDiscoveryRoots"`
}

func runScan(ctx context.Context, g *globalOptions, o *scanOptions, out, errOut io.Writer) error {
	cfg, err := g.loadConfig()
	if err != nil {
		return err
	}
	warnSetUp(errOut, g, cfg)
	if !cfg.HasRoots() {
		return errNotSetUp(g)
	}
	logger := newLogger(errOut)
	cat, _, err := openCatalog(ctx, cfg, config.Fixed(cfg), logger)
	if err != nil {
		return err
	}
	primeMirror(ctx, cfg, cat, logger, errOut)
	start := time.Now()
	var sum scanSummary
	if o.once {
		s, err := startScanner(ctx, cfg, cat, errOut)
		if err != nil {
			return err
		}
		st, err := s.RunSlice(ctx, cfg.Discovery.MaxDirectoriesPerSlice, time.Now().Add(time.Duration(cfg.Discovery.MaxSliceMs)*time.Millisecond))
		s.Close()
		if err != nil {
			return err
		}
		sum.Pass, sum.Finished, sum.Directories, sum.ProjectsSeen = st.Pass, !st.PassRunning, st.PassDirs, st.PassProjects
	} else {
		if err := scanToCompletionSum(ctx, cfg, cat, errOut, &sum); err != nil {
			return err
		}
	}
	_ = cat.ForceSync(ctx)
	st := cat.State()
	pol := catalog.PolicyFrom(cfg)
	sum.Projects = countVisible(cat, pol)
	cov, gaps := catalog.Coverage(st, cfg, pol)
	sum.Coverage, sum.Gaps, sum.GapCount, sum.Queued = string(cov), gaps, finishedGapCount(st, cfg, pol), st.Queued
	if st.PassRunning {
		vis := visibleGaps(st.PassGaps, pol)
		sum.Coverage, sum.Gaps, sum.GapCount = scan.CoveragePartial, vis, len(vis)+st.PassGapCount-len(st.PassGaps)
	}
	sum.Rejected = catalog.VisibleRejected(st, pol)
	if st.PassRunning {
		sum.Rejected = catalog.VisibleRejected(local.ScanState{Rejected: st.PassRejected}, pol)
	}
	sum.Rejected = append([]scan.Gap{}, sum.Rejected...)
	sum.UnsharedRoots = append([]string{}, catalog.UnsharedRoots(cfg)...)
	el := time.Since(start)
	sum.ElapsedMs = el.Milliseconds()
	if el > 0 {
		sum.DirsPerSecond = float64(sum.Directories) / el.Seconds()
	}
	if o.json {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(sum)
	}
	state := "pass finished"
	if !sum.Finished {
		state = fmt.Sprintf("pass %d still running (%d directories queued; run `cgcat scan` again to continue)", sum.Pass, sum.Queued)
	}
	fmt.Fprintf(out, "%s: %d directories read in %s (%.0f/s), %d projects seen, %d in the catalog, coverage %s\n",
		state, sum.Directories, el.Round(time.Millisecond), sum.DirsPerSecond, sum.ProjectsSeen, sum.Projects, sum.Coverage)
	for _, gp := range sum.Gaps {
		// Names come from the file system: escaped, so a directory named
		// with terminal escape sequences cannot drive the terminal.
		fmt.Fprintf(out, "  not covered: %s (%s)\n", local.Printable(gp.Path), local.Printable(gp.Why))
	}
	if sum.GapCount > len(sum.Gaps) {
		fmt.Fprintf(out, "  … and %d more places not covered\n", sum.GapCount-len(sum.Gaps))
	}
	for _, g := range sum.Rejected {
		fmt.Fprintf(out, "  not an index: %s (%s)\n", local.Printable(g.Path), local.Printable(g.Why))
	}
	for _, r := range sum.UnsharedRoots {
		fmt.Fprintf(out, "  warning: discovery root %s is under no sharing root: its projects are found but never shown (add it, or a parent, to sharing.roots)\n", local.Printable(r))
	}
	return nil
}

// countVisible counts the records this configuration may show: what a
// person is told never counts what it hides.
func countVisible(cat *catalog.Catalog, pol catalog.Policy) int { return len(cat.List(pol)) }

// finishedGapCount is how many places the last finished pass did not
// cover under the current roots, not just the local.MaxGaps kept by path:
// the listed gaps this view may see, plus those only counted. A pass keeps
// at most MaxGaps in all, so the gaps past them are counted once (the scan
// adds them to every root's GapCount, since it cannot tell whose they
// are). Counted gaps may lie in deny roots: they are not known by path.
func finishedGapCount(st local.ScanState, cfg *config.Config, pol catalog.Policy) int {
	listed, unlisted := 0, 0
	for _, r := range cfg.Discovery.Roots {
		rc, ok := st.Roots[pathid.Key(r)]
		if !ok {
			continue
		}
		listed += len(visibleGaps(rc.Gaps, pol))
		unlisted = max(unlisted, rc.GapCount-len(rc.Gaps))
	}
	return listed + unlisted
}

// visibleGaps drops gaps inside deny roots.
func visibleGaps(gaps []local.Gap, pol catalog.Policy) []local.Gap {
	var out []local.Gap
	for _, g := range gaps {
		if !pol.Hides(g.Path) {
			out = append(out, g)
		}
	}
	return out
}

// startScanner takes the scan lease, waiting (with a note on a terminal)
// while another process scans.
func startScanner(ctx context.Context, cfg *config.Config, cat *catalog.Catalog, errOut io.Writer) (*scan.Scanner, error) {
	s, err := scan.TryStart(ctx, cat.Store(), scan.OptionsFrom(cfg))
	if errors.Is(err, lease.ErrHeld) {
		_, pid := lease.Holder(scan.LeasePath(cfg.DataDir))
		fmt.Fprintf(errOut, "cgcat: another cgcat process (pid %d) is scanning this catalog; waiting for it…\n", pid)
		s, err = scan.Start(ctx, cat.Store(), scan.OptionsFrom(cfg))
	}
	return s, err
}

func scanToCompletion(ctx context.Context, cfg *config.Config, cat *catalog.Catalog, errOut io.Writer) error {
	var sum scanSummary
	return scanToCompletionSum(ctx, cfg, cat, errOut, &sum)
}

// scanToCompletionSum runs rounds until a pass finishes, showing progress
// on a terminal.
func scanToCompletionSum(ctx context.Context, cfg *config.Config, cat *catalog.Catalog, errOut io.Writer, sum *scanSummary) error {
	s, err := startScanner(ctx, cfg, cat, errOut)
	if err != nil {
		return err
	}
	defer s.Close()
	tty := isTerminal(errOut)
	// CGCAT_PROGRESS=lines prints one line per committed slice, for
	// scripts and tests that follow a scan from another process.
	lines := os.Getenv("CGCAT_PROGRESS") == "lines"
	start := time.Now()
	last := time.Time{}
	s.Progress = func(st scan.State) {
		sum.Pass, sum.Directories, sum.ProjectsSeen = st.Pass, st.PassDirs, st.PassProjects
		if lines {
			fmt.Fprintf(errOut, "progress pass=%d dirs=%d projects=%d queued=%d\n", st.Pass, st.PassDirs, st.PassProjects, st.Queued)
			return
		}
		if tty && time.Since(last) > 100*time.Millisecond {
			last = time.Now()
			fmt.Fprintf(errOut, "\r\033[Kscanning: %d directories, %d projects, %d queued, %s", st.PassDirs, st.PassProjects, st.Queued, time.Since(start).Round(100*time.Millisecond))
		}
	}
	defer func() {
		if tty {
			fmt.Fprint(errOut, "\r\033[K")
		}
	}()
	for {
		r, err := s.RunRound(ctx)
		if err != nil {
			return err
		}
		if r.Finished {
			sum.Finished = true
			return nil
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("scan interrupted (%w); the queue is kept, so the next scan resumes where this one stopped", err)
		}
	}
}

// primeMirror refreshes GBrain's card mirror before the first scan of a
// fresh store (a first run, or a catalog that was lost), so that this
// machine's cards give their projects' ids back instead of new ones being
// minted (and their cards duplicated). Bounded; GBrain unreachable is said
// and the scan goes on.
func primeMirror(ctx context.Context, cfg *config.Config, cat *catalog.Catalog, log *slog.Logger, errOut io.Writer) {
	if !cfg.GBrain.Enabled || cat.Len() > 0 {
		return
	}
	rep, err := projection.PrimeMirror(ctx, cfg, cat.Store(), log, mirrorPrimeBudget)
	switch {
	case err != nil:
		fmt.Fprintf(errOut, "cgcat: GBrain's cards could not be read before this first scan (%v); projects found now get new ids, and their old cards stay in GBrain (`cgcat gbrain sync --prune` removes this machine's orphans later)\n", err)
	case rep != nil:
		_ = cat.Sync(ctx)
		fmt.Fprintf(errOut, "cgcat: %d GBrain cards mirrored before the first scan (this machine's projects keep their ids)\n", rep.Listed)
	}
}
