package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/cgcat/cgcat/gbrain"
	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/catalog"
	"github.com/cgcat/cgcat/local/config"
	"github.com/cgcat/cgcat/local/lease"
	"github.com/cgcat/cgcat/local/store"
	"github.com/cgcat/cgcat/outbox"
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
	cmd.AddCommand(sync, status)
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
	// WaitedFor is the pid of another projector this sync waited for.
	WaitedFor int  `json:"waitedFor,omitempty"`
	DryRun    bool `json:"dryRun,omitempty"`
	// Error and ExitCode: a sync that stopped part way (as jsonError).
	Error    string `json:"error,omitempty"`
	ExitCode int    `json:"exitCode,omitempty"`
}

func runGBrainSync(ctx context.Context, g *globalOptions, o *gbrainSyncOptions, out, errOut io.Writer) error {
	cfg, err := g.loadConfig()
	if err != nil {
		return err
	}
	warn(errOut, cfg)
	if !cfg.GBrain.Enabled {
		return gbrainDisabled(cfg)
	}
	logger := newLogger(errOut)
	st, err := store.Open(ctx, cfg.DataDir)
	if err != nil {
		return err
	}
	conn, err := dialForCLI(ctx, cfg, logger, errOut)
	if err != nil {
		return &exitError{code: 1, err: fmt.Errorf("cannot reach GBrain (%v); %d cards wait in the outbox, nothing is lost — see `cgcat gbrain status`", err, outboxDepth(ctx, st))}
	}
	defer conn.Close()
	p := projection.NewProjector(st, catalog.PolicyFrom(cfg), projection.SettingsFrom(cfg, st), conn, logger)
	res := &gbrainSyncResult{DryRun: o.dryRun}
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
	last := time.Time{}
	p.Progress = func(pr projection.Progress) {
		switch {
		case lines:
			fmt.Fprintf(errOut, "progress done=%d total=%d written=%d unchanged=%d conflicts=%d\n", pr.Done, pr.Total, pr.Report.Written, pr.Report.Unchanged, pr.Report.Conflicts)
		case tty && time.Since(last) > 100*time.Millisecond:
			last = time.Now()
			fmt.Fprintf(errOut, "\r\033[Kgbrain sync: %d/%d cards (%d written, %d unchanged, %d conflicts)", pr.Done, pr.Total, pr.Report.Written, pr.Report.Unchanged, pr.Report.Conflicts)
		}
	}
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

// dialForCLI connects to GBrain for a command a person runs: what GBrain
// says on stderr while it starts is shown at once, and a silence of a few
// seconds is explained (a brain held by another gbrain command delays
// GBrain's answer by up to 30 s), never waited on without a word.
func dialForCLI(ctx context.Context, cfg *config.Config, logger *slog.Logger, errOut io.Writer) (*projection.Conn, error) {
	c, err := projection.Connection(cfg)
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	dialing := true
	opts := gbrain.Options{ExpectedSource: cfg.GBrain.ExpectedSource, ExpectedBrain: cfg.GBrain.ExpectedBrain, Logger: logger,
		OnStderr: func(line string) {
			mu.Lock()
			defer mu.Unlock()
			if dialing {
				fmt.Fprintf(errOut, "gbrain: %s\n", local.Printable(line))
			}
		}}
	conn := projection.NewConnWith(c, opts)
	slow := time.AfterFunc(cliSlowDial, func() {
		mu.Lock()
		defer mu.Unlock()
		if dialing {
			fmt.Fprintf(errOut, "cgcat: GBrain has not answered for %s; its brain may be held by another gbrain command (init, sync, embed), which makes GBrain wait up to 30 s before it answers. Still waiting (Ctrl-C to stop)…\n", cliSlowDial)
		}
	})
	_, err = conn.Client(ctx)
	slow.Stop()
	mu.Lock()
	dialing = false
	mu.Unlock()
	if err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

// cliSlowDial is how long a command waits for GBrain in silence before it
// says why it may be waiting.
var cliSlowDial = 3 * time.Second

// recordContact writes what this command learned of GBrain where every host
// reads gbrainState.
func recordContact(ctx context.Context, st *store.Store, err error) {
	c := local.GBrainContact{OK: err == nil, At: time.Now().UTC()}
	if err != nil {
		c.Error = err.Error()
	}
	wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_ = st.Update(wctx, func(tx *store.Tx) error { tx.PutGBrainContact(c); return nil })
}

// waitForProjector follows another process's drain until the outbox is
// empty (done), or takes the lease itself once that process lets it go.
func waitForProjector(ctx context.Context, st *store.Store, p *projection.Projector, stall time.Duration, errOut io.Writer, tty, lines bool) (pid int, done bool, err error) {
	_, pid = lease.Holder(projection.LeasePath(st.DataDir()))
	fmt.Fprintf(errOut, "cgcat: another cgcat process (pid %d) is writing GBrain cards; waiting for it to drain the outbox…\n", pid)
	lastDepth, lastChange := -1, time.Now()
	for {
		d := outboxDepth(ctx, st)
		if d == 0 {
			if tty {
				fmt.Fprint(errOut, "\r\033[K")
			}
			return pid, true, nil
		}
		if d != lastDepth {
			if lines {
				fmt.Fprintf(errOut, "waiting pid=%d depth=%d\n", pid, d)
			} else if tty {
				fmt.Fprintf(errOut, "\r\033[Kwaiting for pid %d: %d cards left", pid, d)
			}
			if lastDepth < 0 || d < lastDepth {
				lastChange = time.Now()
			}
			lastDepth = d
		}
		if time.Since(lastChange) > stall {
			return pid, false, fmt.Errorf("the process writing GBrain cards (pid %d) made no progress for %s with %d cards left; is its GBrain connection down? see `cgcat gbrain status`", pid, stall, d)
		}
		select {
		case <-ctx.Done():
			return pid, false, ctx.Err()
		case <-time.After(300 * time.Millisecond):
		}
		// The holder stopped (or crashed): take over.
		if err := p.TryAcquire(ctx); err == nil {
			if tty {
				fmt.Fprint(errOut, "\r\033[K")
			}
			return pid, false, nil
		} else if !errors.Is(err, lease.ErrHeld) {
			return pid, false, err
		}
	}
}

func outboxDepth(ctx context.Context, st *store.Store) int {
	n := 0
	_ = st.View(ctx, func(r *store.Reader) error { n = outbox.Depth(r); return nil })
	return n
}

func printSyncResult(out io.Writer, o *gbrainSyncOptions, res *gbrainSyncResult) error {
	if o.json {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	if rr := res.Reconcile; rr != nil {
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
	if pr := res.Prune; pr != nil {
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
	if res.DryRun {
		if len(res.Plan) == 0 {
			fmt.Fprintln(out, "dry run: the outbox is empty; nothing would be written")
			return nil
		}
		n := 0
		for _, it := range res.Plan {
			verb := map[projection.Outcome]string{
				projection.Written: "would write", projection.Unchanged: "unchanged  ", projection.Adopted: "up to date ",
				projection.Conflict: "conflict   ", projection.NotShared: "skip       ", projection.Dropped: "drop       ", projection.Failed: "cannot     ",
				projection.Retracted: "would delete",
			}[it.Action]
			if it.Action == projection.Written {
				n++
			}
			name := it.Name
			if name != "" {
				name = " (" + name + ")"
			}
			fmt.Fprintf(out, "%s %s%s: %s\n", verb, firstNonEmptyStr(it.Slug, it.ProjectID), name, it.Detail)
		}
		fmt.Fprintf(out, "dry run: %d of %d queued cards would be written; nothing was written\n", n, len(res.Plan))
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
		fmt.Fprintf(out, "; %d left in the outbox\n", r.Remaining)
	}
	if m := res.Mirror; m != nil {
		fmt.Fprintf(out, "mirror: %d cards in GBrain (%d read, %d unchanged, %d removed", m.Listed, m.Read, m.Kept+m.FromRecord, m.Deleted)
		if m.Edited > 0 {
			fmt.Fprintf(out, ", %d edited by people", m.Edited)
		}
		if m.Partial {
			fmt.Fprint(out, "; the rest is read next time")
		}
		fmt.Fprintln(out, ")")
	}
	return nil
}

func firstNonEmptyStr(xs ...string) string {
	for _, x := range xs {
		if x != "" {
			return x
		}
	}
	return ""
}

// gbrainStatus is `cgcat gbrain status --json`.
type gbrainStatus struct {
	Enabled        bool   `json:"enabled"`
	Message        string `json:"message,omitempty"`
	Connection     string `json:"connection,omitempty"`
	Connected      bool   `json:"connected"`
	Server         string `json:"server,omitempty"`
	ConnectError   string `json:"connectError,omitempty"`
	ExpectedBrain  string `json:"expectedBrain,omitempty"`
	ExpectedSource string `json:"expectedSource,omitempty"`
	SourceOK       bool   `json:"sourceOk"`
	SourceError    string `json:"sourceError,omitempty"`
	// Auth is how an HTTP connection authenticates (never a secret).
	Auth *gbrain.AuthInfo `json:"auth,omitempty"`
	// WriteSource is where pages written through this connection land, as
	// GBrain tells it (whoami); WriteSourceError says why cgcat will not
	// write through it (another source, a static token, no write scope).
	WriteSource      *gbrain.WriteSource `json:"writeSource,omitempty"`
	WriteSourceOK    bool                `json:"writeSourceOk"`
	WriteSourceError string              `json:"writeSourceError,omitempty"`
	// Brain is what GBrain tells of itself (get_brain_identity: version,
	// engine, pages); BrainCheck says how expectedBrain was checked, or
	// plainly that it cannot be.
	Brain      *gbrain.BrainIdentity `json:"brain,omitempty"`
	BrainCheck string                `json:"brainCheck,omitempty"`
	BrainOK    bool                  `json:"brainOk"`
	// Mirror is the last refresh of the local mirror of GBrain's cards.
	Mirror         *projection.MirrorReport `json:"mirror,omitempty"`
	SlugPrefix     string                   `json:"slugPrefix,omitempty"`
	Projection     string                   `json:"projection,omitempty"`
	SemanticSearch bool                     `json:"semanticSearch"`
	Store          *projection.Status       `json:"store,omitempty"`
	StoreError     string                   `json:"storeError,omitempty"`
}

// inspectGBrain gathers the status: the store (no network) and one dial.
func inspectGBrain(ctx context.Context, cfg *config.Config) *gbrainStatus {
	s := &gbrainStatus{Enabled: cfg.GBrain.Enabled}
	if !cfg.GBrain.Enabled {
		s.Message = projection.EnableHint
		return s
	}
	g := cfg.GBrain
	s.ExpectedBrain, s.ExpectedSource, s.SlugPrefix, s.Projection, s.SemanticSearch = g.ExpectedBrain, g.ExpectedSource, g.SlugPrefix, g.Projection, g.SemanticSearch
	if st, err := store.Open(ctx, cfg.DataDir); err != nil {
		s.StoreError = err.Error()
	} else {
		if s.Store, err = projection.ReadStatus(ctx, st); err != nil {
			s.StoreError = err.Error()
		}
		s.Mirror, _ = projection.LastMirror(ctx, st)
	}
	conn, err := projection.Connection(cfg)
	if err != nil {
		s.ConnectError = err.Error()
		return s
	}
	if conn.Command != "" {
		s.Connection = strings.TrimSpace("stdio: " + conn.Command + " " + strings.Join(conn.Args, " "))
	} else {
		s.Connection = "http: " + conn.URL
		switch conn.AuthMode() {
		case gbrain.AuthClientCredentials:
			s.Connection += fmt.Sprintf(" (OAuth client credentials from $%s and $%s)", conn.ClientIDEnv, conn.ClientSecretEnv)
		case gbrain.AuthStaticToken:
			s.Connection += fmt.Sprintf(" (static token from $%s)", conn.TokenEnv)
		default:
			s.Connection += " (no credentials)"
		}
	}
	c, err := gbrain.Dial(ctx, conn, gbrain.Options{ExpectedSource: g.ExpectedSource, ExpectedBrain: g.ExpectedBrain})
	if err != nil {
		s.ConnectError = err.Error()
		return s
	}
	defer c.Close()
	s.Connected = true
	info := c.ServerInfo()
	s.Server = strings.TrimSpace(info.Name + " " + info.Version)
	if bi, err := c.BrainIdentity(ctx); err == nil {
		s.Brain = bi
	}
	s.BrainCheck, s.BrainOK = brainCheck(conn, g.ExpectedBrain)
	if err := c.CheckSource(ctx); err != nil {
		s.SourceError = err.Error()
	} else {
		s.SourceOK = true
	}
	s.WriteSource, err = c.CheckWriteSource(ctx)
	if err != nil {
		s.WriteSourceError = err.Error()
	} else {
		s.WriteSourceOK = true
	}
	if conn.HTTP() {
		a := c.Auth()
		s.Auth = &a
	}
	return s
}

func runGBrainStatus(ctx context.Context, g *globalOptions, o *gbrainStatusOptions, out, errOut io.Writer) error {
	cfg, err := g.loadConfig()
	if err != nil {
		return err
	}
	warn(errOut, cfg)
	s := inspectGBrain(ctx, cfg)
	// The connection failing is a failure of this command (exit 1), after
	// everything else it could say.
	failed := func() error {
		if s.Enabled && !s.Connected {
			return &exitError{code: 1}
		}
		return nil
	}
	if o.json {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(s); err != nil {
			return err
		}
		return failed()
	}
	if !s.Enabled {
		fmt.Fprintln(out, "GBrain: off")
		fmt.Fprintln(out, s.Message)
		return nil
	}
	fmt.Fprintf(out, "GBrain: on (%s, source %s, slugs %s/…, %s", s.Connection, s.ExpectedSource, s.SlugPrefix, s.Projection)
	if s.SemanticSearch {
		fmt.Fprint(out, ", semantic recall")
	}
	fmt.Fprintln(out, ")")
	if s.Connected {
		fmt.Fprintf(out, "connection: ok (%s)\n", s.Server)
	} else {
		fmt.Fprintf(out, "connection: FAILED: %s\n", s.ConnectError)
	}
	switch {
	case s.SourceOK:
		fmt.Fprintf(out, "source: %s is registered\n", s.ExpectedSource)
	case s.SourceError != "":
		fmt.Fprintf(out, "source: FAILED: %s\n", s.SourceError)
	}
	if a := s.Auth; a != nil && a.Mode == gbrain.AuthClientCredentials && !a.ExpiresAt.IsZero() {
		fmt.Fprintf(out, "token: from %s, scopes %q, valid until %s\n", a.TokenEndpoint, strings.Join(a.Scopes, " "), a.ExpiresAt.UTC().Format(time.RFC3339))
	}
	switch {
	case s.WriteSourceOK:
		fmt.Fprintf(out, "writes land in: %s (%s)\n", s.WriteSource.Source, s.WriteSource.How)
	case s.WriteSourceError != "":
		fmt.Fprintf(out, "writes: WARNING: %s\n", s.WriteSourceError)
	}
	if s.BrainCheck != "" {
		fmt.Fprintf(out, "brain: %s\n", s.BrainCheck)
	}
	if b := s.Brain; b != nil {
		fmt.Fprintf(out, "brain identity: GBrain %s on %s, %d pages\n", b.Version, b.Engine, b.PageCount)
	}
	if s.StoreError != "" {
		fmt.Fprintf(out, "catalog store: FAILED: %s\n", s.StoreError)
	}
	if st := s.Store; st != nil {
		fmt.Fprintf(out, "outbox: %d cards waiting", st.OutboxDepth)
		if !st.OldestPending.IsZero() {
			fmt.Fprintf(out, " (oldest queued %s ago)", time.Since(st.OldestPending).Round(time.Second))
		}
		fmt.Fprintln(out)
		for _, e := range st.PendingErrors {
			fmt.Fprintf(out, "  last error: %s\n", e)
		}
		if st.LeaseHeld {
			fmt.Fprintf(out, "projector: pid %d holds the lease\n", st.LeasePID)
		} else {
			fmt.Fprintln(out, "projector: none running (a `cgcat serve` with GBrain on takes the lease, or run `cgcat gbrain sync`)")
		}
		fmt.Fprintf(out, "cards written: %d\n", st.Cards)
		if ls := st.LastSync; ls != nil {
			r := ls.Report
			fmt.Fprintf(out, "last sync: %s ago by pid %d: %d written, %d unchanged, %d conflicts, %d not shared, %d left\n",
				time.Since(ls.At).Round(time.Second), ls.PID, r.Written, r.Unchanged, r.Conflicts, r.NotShared, r.Remaining)
		} else {
			fmt.Fprintln(out, "last sync: never")
		}
		fmt.Fprintf(out, "conflicts: %d\n", len(st.Conflicts))
		for _, c := range st.Conflicts {
			fmt.Fprintf(out, "  %s: %s\n", c.Slug, c.Why)
		}
		for _, c := range st.Failed {
			fmt.Fprintf(out, "  refused: %s: %s\n", c.Slug, c.Why)
		}
		if rr := st.LastReconcile; rr != nil {
			fmt.Fprintf(out, "orphans: %d (as of the last `gbrain sync --full`, %s ago)\n", rr.OrphanCount, time.Since(rr.At).Round(time.Second))
			for _, orph := range rr.Orphans {
				fmt.Fprintf(out, "  %s: %s\n", orph.Slug, orph.Why)
			}
			if rr.UnsharedCount > 0 {
				fmt.Fprintf(out, "cards of projects no longer shared: %d\n", rr.UnsharedCount)
			}
		} else {
			fmt.Fprintln(out, "orphans: unknown (run `cgcat gbrain sync --full` to enumerate the cards in GBrain)")
		}
	}
	if m := s.Mirror; m != nil {
		fmt.Fprintf(out, "mirror: %d cards, refreshed %s ago (%d edited by people)\n", m.Listed, time.Since(m.At).Round(time.Second), m.Edited)
	} else {
		fmt.Fprintln(out, "mirror: never refreshed (a `cgcat serve` with GBrain on, or `cgcat gbrain sync`, refreshes it)")
	}
	return failed()
}

// brainCheck says how the expected brain is made sure of for this
// connection — or, plainly, that it cannot be.
func brainCheck(conn gbrain.Connection, expected string) (string, bool) {
	if expected == "" {
		return "no gbrain.expectedBrain set: the brain is whatever the connection reaches", false
	}
	if conn.HTTP() {
		return fmt.Sprintf("expected %q, NOT CHECKED: GBrain over HTTP does not tell which brain a token serves (get_brain_identity names only its version and engine); the server at %s decides. Only the source is checked for each token", expected, conn.URL), false
	}
	return fmt.Sprintf("%q, pinned: cgcat starts gbrain with GBRAIN_BRAIN_ID=%s (GBrain then serves that brain or refuses to start); GBrain does not name its brain over MCP", expected, expected), true
}

// gbrainDoctorChecks are doctor's GBrain checks (R26): the connection (a
// real MCP handshake), the pinned source, and from the store the outbox,
// conflicts, refused cards and orphans. With GBrain off it says so and
// nothing fails. doctorGBrain can return it as it is.
func gbrainDoctorChecks(ctx context.Context, cfg *config.Config) []check {
	s := inspectGBrain(ctx, cfg)
	if !s.Enabled {
		return []check{infof("GBrain is off (optional; everything works without it)")}
	}
	var cs []check
	if s.Connected {
		cs = append(cs, okf("GBrain connection: %s (%s)", s.Server, s.Connection))
	} else {
		cs = append(cs, failf("check connections."+cfg.GBrain.ConnectionRef+" in the config; a PGLite brain admits one process, so point cgcat at a Postgres-backed brain or at `gbrain serve --http`",
			"GBrain connection: %s", s.ConnectError))
	}
	switch {
	case s.SourceOK:
		cs = append(cs, okf("GBrain source %s is registered", s.ExpectedSource))
	case s.SourceError != "":
		cs = append(cs, failf("`gbrain sources add "+s.ExpectedSource+"`, or set gbrain.expectedSource to a registered source", "GBrain source: %s", s.SourceError))
	}
	if s.Connected && s.BrainCheck != "" {
		if s.BrainOK {
			cs = append(cs, okf("GBrain brain %s", s.BrainCheck))
		} else {
			cs = append(cs, infof("GBrain brain: %s", s.BrainCheck))
		}
	}
	switch {
	case s.WriteSourceOK:
		cs = append(cs, okf("GBrain writes land in source %s (%s)", s.WriteSource.Source, s.WriteSource.How))
	case s.WriteSourceError != "":
		cs = append(cs, warnf("cgcat writes no card through this connection until its token writes to "+s.ExpectedSource+"; see the message",
			"GBrain write source: %s", s.WriteSourceError))
	}
	if s.StoreError != "" {
		cs = append(cs, failf("", "GBrain projection state: %s", s.StoreError))
	}
	st := s.Store
	if st == nil {
		return cs
	}
	if st.OutboxDepth > 0 && !st.OldestPending.IsZero() && time.Since(st.OldestPending) > 10*time.Minute {
		cs = append(cs, warnf("run `cgcat gbrain sync` (or keep a `cgcat serve` with GBrain on running)", "GBrain outbox: %d cards waiting, the oldest for %s", st.OutboxDepth, time.Since(st.OldestPending).Round(time.Minute)))
	} else {
		cs = append(cs, okf("GBrain outbox: %d cards waiting", st.OutboxDepth))
	}
	for _, e := range st.PendingErrors {
		cs = append(cs, warnf("", "GBrain card not written yet: %s", e))
	}
	if n := len(st.Conflicts); n > 0 {
		c := warnf("look at the pages in GBrain; delete a page (or restore cgcat's version) and run `cgcat gbrain sync --full` to write the card again",
			"GBrain conflicts: %d cards were edited in GBrain and are not overwritten", n)
		for _, x := range st.Conflicts {
			c.Notes = append(c.Notes, x.Slug+": "+x.Why)
		}
		cs = append(cs, c)
	}
	if n := len(st.Failed); n > 0 {
		c := warnf("", "GBrain refused %d cards", n)
		for _, x := range st.Failed {
			c.Notes = append(c.Notes, x.Slug+": "+x.Why)
		}
		cs = append(cs, c)
	}
	if rr := st.LastReconcile; rr != nil && rr.OrphanCount > 0 {
		cs = append(cs, warnf("delete them in GBrain if they are not wanted", "GBrain orphans: %d cards under %s/ name no project bound here", rr.OrphanCount, s.SlugPrefix))
	}
	return cs
}
