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
	"github.com/cgcat/cgcat/local/store"
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
	// IDsPending counts the ids bound while this machine's GBrain cards
	// could not be read (a lost catalog, GBrain unreachable): no card is
	// written until they are settled.
	IDsPending int `json:"idsPending,omitempty"`
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
	p, err := openParts(ctx, cfg, config.Fixed(cfg), logger)
	if err != nil {
		return err
	}
	cat := p.cat
	primeMirror(ctx, cfg, p, logger, errOut)
	defer func() { _ = cat.Sync(ctx) }()
	start := time.Now()
	var sum scanSummary
	if o.once {
		s, err := startScanner(ctx, cfg, p.st, errOut)
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
		if err := scanToCompletionSum(ctx, cfg, p.st, errOut, &sum); err != nil {
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
	if rs, err := projection.ReadRecovery(ctx, p.st); err == nil && rs.Blocks() && cfg.GBrain.Enabled {
		sum.IDsPending = rs.Pending
	}
	if o.json {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(sum)
	}
	if sum.IDsPending > 0 {
		defer fmt.Fprintf(out, "%d project ids are pending: this machine's GBrain cards could not be read before the scan, so some may be new ids for projects whose cards GBrain still holds; no card is written until they are read (`cgcat gbrain sync`, or a running serve, does it) — see `cgcat doctor`\n", sum.IDsPending)
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
func startScanner(ctx context.Context, cfg *config.Config, st *store.Store, errOut io.Writer) (*scan.Scanner, error) {
	s, err := scan.TryStart(ctx, st, scan.OptionsFrom(cfg))
	if errors.Is(err, lease.ErrHeld) {
		_, pid := lease.Holder(scan.LeasePath(cfg.DataDir))
		fmt.Fprintf(errOut, "cgcat: another cgcat process (pid %d) is scanning this catalog; waiting for it…\n", pid)
		s, err = scan.Start(ctx, st, scan.OptionsFrom(cfg))
	}
	return s, err
}

func scanToCompletion(ctx context.Context, cfg *config.Config, st *store.Store, errOut io.Writer) error {
	var sum scanSummary
	return scanToCompletionSum(ctx, cfg, st, errOut, &sum)
}

// scanToCompletionSum runs rounds until a pass finishes, showing progress
// on a terminal.
func scanToCompletionSum(ctx context.Context, cfg *config.Config, st *store.Store, errOut io.Writer, sum *scanSummary) error {
	s, err := startScanner(ctx, cfg, st, errOut)
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

// primeMirror takes a fresh store's ids back from GBrain before its first
// scan (a first run, or a catalog or data dir that was lost): this
// machine's cards are read, however long that takes (progress shows on a
// terminal), so its projects keep their ids. GBrain unreachable is said,
// and the scan goes on with the ids pending.
func primeMirror(ctx context.Context, cfg *config.Config, p *parts, log *slog.Logger, errOut io.Writer) {
	if !cfg.GBrain.Enabled || p.cat.Len() > 0 {
		return
	}
	tty, last := isTerminal(errOut), time.Time{}
	progress := func(done, total int) {
		if tty && (time.Since(last) > 100*time.Millisecond || done == total) {
			last = time.Now()
			fmt.Fprintf(errOut, "\r\033[Kreading this machine's GBrain cards: %d/%d", done, total)
		}
	}
	rs, err := projection.PrimeMirror(ctx, cfg, p.st, log, progress)
	if tty {
		fmt.Fprint(errOut, "\r\033[K")
	}
	switch {
	case err != nil:
		fmt.Fprintf(errOut, "cgcat: this machine's GBrain cards could not be read before this first scan (%v); the ids it binds are pending, and no card is written until the cards are read\n", err)
	case rs != nil:
		_ = p.cat.Sync(ctx)
		fmt.Fprintf(errOut, "cgcat: %d of this machine's GBrain cards read before the first scan (%d of format 1): its projects keep their ids\n", rs.Own, rs.Old)
	}
}
