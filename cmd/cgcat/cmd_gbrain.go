package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/cgcat/cgcat/local/config"
	"github.com/cgcat/cgcat/local/lease"
	"github.com/cgcat/cgcat/local/store"
	"github.com/cgcat/cgcat/projection"
	"github.com/spf13/cobra"
)

type gbrainSyncOptions struct {
	full   bool
	prune  bool
	dryRun bool
	json   bool
	// stall is how long a wait for another projector may see no progress
	// before giving up.
	stall time.Duration
}

type gbrainStatusOptions struct {
	json bool
}

func newGBrainCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "gbrain",
		Short: "Keep reference-only project cards in GBrain (optional)",
		Long: "GBrain is optional and off by default. When gbrain.enabled is true, cgcat keeps one reference-only card per shared project " +
			"in GBrain (under gbrain.slugPrefix, in gbrain.expectedSource), written by one process at a time from a durable outbox, " +
			"and uses GBrain search as extra recall. The local catalog stays authoritative: a card never changes a binding or what is shared.",
		Args: cobra.NoArgs,
	}
	so := &gbrainSyncOptions{stall: 2 * time.Minute}
	sync := &cobra.Command{
		Use:   "sync",
		Short: "Write pending project cards to GBrain now",
		Long: "Drain the outbox: every card queued by a metadata change is read from GBrain, checked (ours, unchanged since our last write) " +
			"and written, then read back; the cards of projects that are forgotten or hidden here (denied, unshared) are deleted from GBrain " +
			"when they are ours and unedited. A card someone else edited is never overwritten or deleted: it is reported as a conflict. Then " +
			"the local mirror of the cards (this machine's and other machines') is refreshed. If a running `cgcat serve` holds the projector " +
			"lease, wait for it to drain and show the queue going down.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runGBrainSync(cmd.Context(), g, so, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	sync.Flags().BoolVar(&so.full, "full", false, "reconcile first: list every card in GBrain and queue the missing, stale and changed ones; report orphans")
	sync.Flags().BoolVar(&so.prune, "prune", false, "delete this machine's own unedited cards whose project ids are not bound here (forgotten, or replaced after a lost catalog); other machines' cards are never touched")
	sync.Flags().BoolVar(&so.dryRun, "dry-run", false, "say what would be written or deleted, change nothing (GBrain is read, not changed)")
	sync.Flags().BoolVar(&so.json, "json", false, "print the result as JSON")
	st := &gbrainStatusOptions{}
	status := &cobra.Command{
		Use:   "status",
		Short: "Show the GBrain connection, source, outbox, last sync, conflicts and orphans",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runGBrainStatus(cmd.Context(), g, st, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	status.Flags().BoolVar(&st.json, "json", false, "print the status as JSON")
	cmd.AddCommand(sync, status, newGBrainRetireCommand(g))
	return cmd
}

// gbrainDisabled is the answer when the config leaves GBrain off.
func gbrainDisabled(cfg *config.Config) error {
	where := "the config file"
	if cfg.Path != "" {
		where = cfg.Path
	}
	return &exitError{code: 2, err: fmt.Errorf("GBrain is not enabled in %s. %s", where, projection.EnableHint)}
}

type gbrainSyncResult struct {
	Reconcile *projection.ReconcileReport `json:"reconcile,omitempty"`
	Prune     *projection.PruneReport     `json:"prune,omitempty"`
	Sweep     *projection.SweepReport     `json:"sweep,omitempty"`
	Report    *projection.Report          `json:"report,omitempty"`
	Mirror    *projection.MirrorReport    `json:"mirror,omitempty"`
	Plan      []projection.PlanItem       `json:"plan,omitempty"`
	// Recovery is the taking back of a lost catalog's ids, when this sync
	// did it; IDsPending counts ids still pending.
	Recovery   *projection.Recovery `json:"recovery,omitempty"`
	IDsPending int                  `json:"idsPending,omitempty"`
	// WaitedFor is the pid of another projector this sync waited for.
	WaitedFor int  `json:"waitedFor,omitempty"`
	DryRun    bool `json:"dryRun,omitempty"`
	// Error and ExitCode: a sync that stopped part way (as jsonError).
	Error    string `json:"error,omitempty"`
	ExitCode int    `json:"exitCode,omitempty"`
}

func runGBrainSync(ctx context.Context, g *globalOptions, o *gbrainSyncOptions, out, errOut io.Writer) error {
	c, err := openGBrainCommand(ctx, g, errOut, func(err error, st *store.Store) error {
		return &exitError{code: 1, err: fmt.Errorf("cannot reach GBrain (%v); %d cards wait in the outbox, nothing is lost — see `cgcat gbrain status`", err, outboxDepth(ctx, st))}
	})
	if err != nil {
		return err
	}
	defer c.conn.Close()
	st, p := c.st, c.p
	res := &gbrainSyncResult{DryRun: o.dryRun}
	if err := pruneReconcileSweep(ctx, p, o, res); err != nil {
		return err
	}
	if o.dryRun {
		if res.Plan, err = p.Plan(ctx); err != nil {
			return fmt.Errorf("dry run: %w", err)
		}
		return printSyncResult(out, o, res)
	}

	tty := isTerminal(errOut)
	lines := os.Getenv("CGCAT_PROGRESS") == "lines"
	err = p.TryAcquire(ctx)
	if errors.Is(err, lease.ErrHeld) {
		var done bool
		res.WaitedFor, done, err = waitForProjector(ctx, st, p, o.stall, errOut, tty, lines)
		if err != nil {
			return err
		}
		if done {
			return printSyncResult(out, o, res)
		}
	} else if err != nil {
		return err
	}
	defer p.Release()
	if err := recoverFirst(ctx, st, p, res, errOut, tty); err != nil {
		return err
	}
	if err := p.Heartbeat(ctx); err != nil && !errors.Is(err, projection.ErrRetired) {
		c.log.Warn("this machine's page in GBrain was not written", "err", err)
	}
	p.Progress = syncProgress(errOut, tty, lines)
	return drainAndRefresh(ctx, st, p, o, res, out, errOut, tty)
}

// pruneReconcileSweep runs what the options ask for before the outbox is
// drained: --prune looks for this machine's orphaned cards, --full
// reconciles with GBrain, and a real sync takes back the cards of projects
// hidden since they were written.
func pruneReconcileSweep(ctx context.Context, p *projection.Projector, o *gbrainSyncOptions, res *gbrainSyncResult) error {
	var err error
	if o.prune {
		if res.Prune, err = p.Prune(ctx, o.dryRun); err != nil {
			return fmt.Errorf("look for this machine's orphaned cards: %w", err)
		}
	}
	if o.full {
		if res.Reconcile, err = p.Reconcile(ctx, o.dryRun); err != nil {
			return fmt.Errorf("reconcile with GBrain: %w", err)
		}
	}
	if !o.dryRun {
		// Cards of projects hidden since they were written go back.
		sw, err := p.Sweep(ctx)
		if err != nil {
			return fmt.Errorf("look for cards to take back: %w", err)
		}
		res.Sweep = &sw
	}
	return nil
}

// syncProgress reports the drain's progress on errOut: a line per step
// with CGCAT_PROGRESS=lines, a line redrawn at most ten times a second on
// a terminal, nothing otherwise.
func syncProgress(errOut io.Writer, tty, lines bool) func(projection.Progress) {
	last := time.Time{}
	return func(pr projection.Progress) {
		switch {
		case lines:
			fmt.Fprintf(errOut, "progress done=%d total=%d written=%d unchanged=%d conflicts=%d\n", pr.Done, pr.Total, pr.Report.Written, pr.Report.Unchanged, pr.Report.Conflicts)
		case tty && time.Since(last) > 100*time.Millisecond:
			last = time.Now()
			fmt.Fprintf(errOut, "\r\033[Kgbrain sync: %d/%d cards (%d written, %d unchanged, %d conflicts)", pr.Done, pr.Total, pr.Report.Written, pr.Report.Unchanged, pr.Report.Conflicts)
		}
	}
}

// drainAndRefresh writes the outbox's cards, then refreshes the local
// mirror of GBrain's cards, and prints what was done — also when either
// stopped part way.
func drainAndRefresh(ctx context.Context, st *store.Store, p *projection.Projector, o *gbrainSyncOptions, res *gbrainSyncResult, out, errOut io.Writer, tty bool) error {
	rep, err := p.Drain(ctx)
	if tty {
		fmt.Fprint(errOut, "\r\033[K")
	}
	res.Report = &rep
	if err != nil {
		recordContact(ctx, st, err)
		err = fmt.Errorf("GBrain sync stopped (%w); %d cards wait in the outbox, nothing is lost — run `cgcat gbrain sync` again", err, rep.Remaining)
		if o.json { // one JSON object: the report and the error
			res.Error, res.ExitCode = err.Error(), exitFailure
			_ = printSyncResult(out, o, res)
			return &exitError{code: exitFailure}
		}
		_ = printSyncResult(out, o, res)
		return err
	}
	mrep, err := p.RefreshMirror(ctx, projection.MirrorOptions{})
	res.Mirror = &mrep
	recordContact(ctx, st, err)
	if err != nil {
		_ = printSyncResult(out, o, res)
		return fmt.Errorf("the cards were written, but the local mirror of GBrain's cards could not be refreshed (%w); run `cgcat gbrain sync` again", err)
	}
	return printSyncResult(out, o, res)
}

func printSyncResult(out io.Writer, o *gbrainSyncOptions, res *gbrainSyncResult) error {
	if o.json {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	if rr := res.Reconcile; rr != nil {
		printReconcile(out, rr)
	}
	if pr := res.Prune; pr != nil {
		printPrune(out, pr)
	}
	if res.DryRun {
		printSyncPlan(out, res.Plan)
		return nil
	}
	if res.WaitedFor != 0 {
		if res.Report == nil || res.Report.Rows == 0 {
			fmt.Fprintf(out, "the outbox is empty: pid %d wrote the cards\n", res.WaitedFor)
			return nil
		}
		fmt.Fprintf(out, "pid %d stopped before the outbox was empty; this process wrote the rest\n", res.WaitedFor)
	}
	if r := res.Report; r != nil {
		printDrainReport(out, r)
	}
	if rs := res.Recovery; rs != nil {
		fmt.Fprintf(out, "lost catalog: %d of this machine's cards read (%d of format 1); %d ids not taken back\n", rs.Own, rs.Old, len(rs.NotTakenBack))
		for _, o := range rs.NotTakenBack {
			fmt.Fprintf(out, "  %s: %s\n", o.ProjectID, o.Why)
		}
	}
	if res.IDsPending > 0 {
		fmt.Fprintf(out, "%d project ids pending: no card is written until this machine's cards are read\n", res.IDsPending)
	}
	if m := res.Mirror; m != nil {
		printMirrorRefresh(out, m)
	}
	return nil
}

// printReconcile says what `gbrain sync --full` found in GBrain and queued.
func printReconcile(out io.Writer, rr *projection.ReconcileReport) {
	verb := "queued"
	if rr.DryRun {
		verb = "would queue"
	}
	fmt.Fprintf(out, "reconcile: %d cards in GBrain, %d shared projects here; %s %d (%d missing, %d stale, %d changed in GBrain)\n",
		rr.Cards, rr.Local, verb, rr.Enqueued, rr.Missing, rr.Stale, len(rr.Changed))
	for _, c := range rr.Changed {
		fmt.Fprintf(out, "  changed in GBrain since our write: %s\n", c.Slug)
	}
	for _, c := range rr.Foreign {
		fmt.Fprintf(out, "  conflict: %s (%s)\n", c.Slug, c.Why)
	}
	for _, orph := range rr.Orphans {
		fmt.Fprintf(out, "  orphan: %s (%s)\n", orph.Slug, orph.Why)
	}
	if rr.OtherMachines > 0 {
		fmt.Fprintf(out, "  %d other machines' cards (theirs: never orphans here)\n", rr.OtherMachines)
	}
	if rr.OrphanCount > len(rr.Orphans) {
		fmt.Fprintf(out, "  … and %d more orphans\n", rr.OrphanCount-len(rr.Orphans))
	}
	for _, u := range rr.Unshared {
		fmt.Fprintf(out, "  not shared any more: %s (%s)\n", u.Slug, u.Why)
	}
	if rr.Shifted {
		fmt.Fprintln(out, "  note: GBrain's card list kept changing during the enumeration; run `cgcat gbrain sync --full` again when it is quiet")
	}
}

// printPrune says which of this machine's cards --prune deletes (or would).
func printPrune(out io.Writer, pr *projection.PruneReport) {
	verb := "deleting"
	if pr.DryRun {
		verb = "would delete"
	}
	fmt.Fprintf(out, "prune: %d of this machine's cards name no project here (%s them); %d edited (left alone); %d other machines' cards (never touched)\n",
		len(pr.Orphans), verb, len(pr.Edited), pr.OtherMachines)
	for _, orph := range pr.Orphans {
		fmt.Fprintf(out, "  %s %s: %s\n", verb, orph.Slug, orph.Why)
	}
	for _, ed := range pr.Edited {
		fmt.Fprintf(out, "  left alone: %s: %s\n", ed.Slug, ed.Why)
	}
}

// planVerbs are the dry run's words for each outcome, padded to a column.
var planVerbs = map[projection.Outcome]string{
	projection.Written: "would write", projection.Unchanged: "unchanged  ", projection.Adopted: "up to date ",
	projection.Conflict: "conflict   ", projection.NotShared: "skip       ", projection.Dropped: "drop       ", projection.Failed: "cannot     ",
	projection.Retracted: "would delete",
}

// printSyncPlan is the dry run: what would happen to each queued card.
func printSyncPlan(out io.Writer, plan []projection.PlanItem) {
	if len(plan) == 0 {
		fmt.Fprintln(out, "dry run: the outbox is empty; nothing would be written")
		return
	}
	n := 0
	for _, it := range plan {
		if it.Action == projection.Written {
			n++
		}
		name := it.Name
		if name != "" {
			name = " (" + name + ")"
		}
		fmt.Fprintf(out, "%s %s%s: %s\n", planVerbs[it.Action], cmp.Or(it.Slug, it.ProjectID), name, it.Detail)
	}
	fmt.Fprintf(out, "dry run: %d of %d queued cards would be written; nothing was written\n", n, len(plan))
}

// printDrainReport is the one-line summary of a drain of the outbox.
func printDrainReport(out io.Writer, r *projection.Report) {
	fmt.Fprintf(out, "gbrain sync: %d written, %d unchanged", r.Written, r.Unchanged)
	if r.Adopted > 0 {
		fmt.Fprintf(out, ", %d found already written", r.Adopted)
	}
	if r.Conflicts > 0 {
		fmt.Fprintf(out, ", %d conflicts (edited in GBrain, not overwritten — see `cgcat gbrain status`)", r.Conflicts)
	}
	if r.NotShared > 0 {
		fmt.Fprintf(out, ", %d not shared (skipped)", r.NotShared)
	}
	if r.Dropped > 0 {
		fmt.Fprintf(out, ", %d dropped (record gone)", r.Dropped)
	}
	if r.Failed > 0 {
		fmt.Fprintf(out, ", %d refused by GBrain", r.Failed)
	}
	if r.Retracted > 0 {
		fmt.Fprintf(out, ", %d deleted from GBrain (projects forgotten or hidden here)", r.Retracted)
	}
	fmt.Fprintf(out, "; %d left in the outbox (%d GBrain calls in %s", r.Remaining, r.Calls, r.Duration)
	if r.CardsPerSecond > 0 {
		fmt.Fprintf(out, ", %.1f cards/s", r.CardsPerSecond)
	}
	fmt.Fprintln(out, ")")
}

// printMirrorRefresh says what refreshing the local mirror read.
func printMirrorRefresh(out io.Writer, m *projection.MirrorReport) {
	kind := "changed since the last refresh"
	if m.Full {
		kind = "in GBrain"
	}
	fmt.Fprintf(out, "mirror: %d cards %s (%d read, %d unchanged, %d removed, %d calls", m.Listed, kind, m.Read, m.Kept+m.FromRecord, m.Deleted, m.Calls)
	if m.Edited > 0 {
		fmt.Fprintf(out, ", %d edited by people", m.Edited)
	}
	if m.Partial {
		fmt.Fprint(out, "; the rest is read next time")
	}
	fmt.Fprintln(out, ")")
}

// recoverFirst takes a lost catalog's ids back before anything is written
// (this machine's cards are read; progress on a terminal), when that was
// not done yet. A failure leaves the ids pending: the sync stops there.
func recoverFirst(ctx context.Context, st *store.Store, p *projection.Projector, res *gbrainSyncResult, errOut io.Writer, tty bool) error {
	rs, err := projection.ReadRecovery(ctx, st)
	if err != nil || rs.Done {
		return err
	}
	last := time.Time{}
	rs, err = p.Recover(ctx, func(done, total int) {
		if tty && (time.Since(last) > 100*time.Millisecond || done == total) {
			last = time.Now()
			fmt.Fprintf(errOut, "\r\033[Kreading this machine's GBrain cards: %d/%d", done, total)
		}
	})
	if tty {
		fmt.Fprint(errOut, "\r\033[K")
	}
	res.Recovery = rs
	if err != nil {
		if rs != nil && rs.Blocks() {
			res.IDsPending = rs.Pending
		}
		recordContact(ctx, st, err)
		return fmt.Errorf("this machine's GBrain cards could not be read (%w); they give a lost catalog its ids back, so no card is written until they are — run `cgcat gbrain sync` again", err)
	}
	return nil
}
