package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/cgcat/cgcat/gbrain"
	"github.com/cgcat/cgcat/local/config"
	"github.com/cgcat/cgcat/local/store"
	"github.com/cgcat/cgcat/projection"
)

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
	// Identity is this data dir's machine identity: whether it is bound
	// to this machine and kept outside the data dir (so a lost data dir
	// keeps its machine id and ids).
	Identity *identityStatus `json:"identity,omitempty"`
	// Recovery is the state of taking a lost catalog's ids back from GBrain.
	Recovery *projection.Recovery `json:"recovery,omitempty"`
	// Machines is what the mirror knows of the machines on this brain.
	Machines map[string]projection.MachineInfo `json:"machines,omitempty"`
}

// identityStatus is what status and doctor say of the identity.
type identityStatus struct {
	MachineID string `json:"machineId"`
	Bound     bool   `json:"bound"`
	KeptAt    string `json:"keptAt,omitempty"`
	Restored  bool   `json:"restored,omitempty"`
	Replaced  string `json:"replaced,omitempty"`
}

// describeConnection names how cgcat reaches GBrain: the stdio command, or
// the HTTP endpoint and where its credentials come from (never a secret).
func describeConnection(conn gbrain.Connection) string {
	if conn.Command != "" {
		return strings.TrimSpace("stdio: " + conn.Command + " " + strings.Join(conn.Args, " "))
	}
	d := "http: " + conn.URL
	switch conn.AuthMode() {
	case gbrain.AuthClientCredentials:
		return d + fmt.Sprintf(" (OAuth client credentials from $%s and $%s)", conn.ClientIDEnv, conn.ClientSecretEnv)
	case gbrain.AuthStaticToken:
		return d + fmt.Sprintf(" (static token from $%s)", conn.TokenEnv)
	default:
		return d + " (no credentials)"
	}
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
	if st, err := openStore(ctx, cfg); err != nil {
		s.StoreError = err.Error()
	} else {
		if s.Store, err = projection.ReadStatus(ctx, st); err != nil {
			s.StoreError = err.Error()
		}
		s.Mirror, _ = projection.LastMirror(ctx, st)
		id := st.Identity()
		s.Identity = &identityStatus{MachineID: id.MachineID, Bound: id.Binding != "", KeptAt: id.KeptAt, Restored: id.Restored, Replaced: id.Replaced}
		if rs, err := projection.ReadRecovery(ctx, st); err == nil && (rs.Fresh || rs.Done || rs.Err != "") {
			s.Recovery = rs
		}
		s.Machines, _ = projection.Machines(ctx, st)
	}
	conn, err := projection.Connection(cfg)
	if err != nil {
		s.ConnectError = err.Error()
		return s
	}
	s.Connection = describeConnection(conn)
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
	if o.json {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(s); err != nil {
			return err
		}
	} else {
		printGBrainStatus(out, s)
	}
	// The connection failing is a failure of this command (exit 1), after
	// everything else it could say.
	if s.Enabled && !s.Connected {
		return &exitError{code: 1}
	}
	return nil
}

// printGBrainStatus is the status for people, one line per fact.
func printGBrainStatus(out io.Writer, s *gbrainStatus) {
	if !s.Enabled {
		fmt.Fprintln(out, "GBrain: off")
		fmt.Fprintln(out, s.Message)
		return
	}
	printGBrainConnection(out, s)
	if s.StoreError != "" {
		fmt.Fprintf(out, "catalog store: FAILED: %s\n", s.StoreError)
	}
	if st := s.Store; st != nil {
		printProjectionStatus(out, st)
	}
	printIdentityStatus(out, s)
	printMirrorStatus(out, s.Mirror)
}

// printGBrainConnection says what the connection reaches: the server, the
// source, the token, where writes land and which brain it is.
func printGBrainConnection(out io.Writer, s *gbrainStatus) {
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
}

// printProjectionStatus says what the store knows of the projection: the
// outbox, the projector, the last sync, conflicts and orphans.
func printProjectionStatus(out io.Writer, st *projection.Status) {
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
	rr := st.LastReconcile
	if rr == nil {
		fmt.Fprintln(out, "orphans: unknown (run `cgcat gbrain sync --full` to enumerate the cards in GBrain)")
		return
	}
	fmt.Fprintf(out, "orphans: %d (as of the last `gbrain sync --full`, %s ago)\n", rr.OrphanCount, time.Since(rr.At).Round(time.Second))
	for _, orph := range rr.Orphans {
		fmt.Fprintf(out, "  %s: %s\n", orph.Slug, orph.Why)
	}
	if rr.UnsharedCount > 0 {
		fmt.Fprintf(out, "cards of projects no longer shared: %d\n", rr.UnsharedCount)
	}
}

// printIdentityStatus says who this machine is, where taking a lost
// catalog back stands, and what is known of the brain's machines.
func printIdentityStatus(out io.Writer, s *gbrainStatus) {
	if id := s.Identity; id != nil {
		fmt.Fprintln(out, "identity: "+identityLine(id))
		if id.Replaced != "" {
			fmt.Fprintln(out, "  "+id.Replaced)
		}
	}
	if rs := s.Recovery; rs != nil {
		fmt.Fprintln(out, "lost-catalog recovery: "+recoveryLine(rs))
		for _, o := range rs.NotTakenBack {
			fmt.Fprintf(out, "  not taken back: %s (%s)\n", o.ProjectID, o.Why)
		}
	}
	if id := s.Identity; id != nil {
		if mi := s.Machines[id.MachineID]; mi.RetiredBy != "" {
			fmt.Fprintf(out, "this machine: RETIRED by %s on %s: no card is written; `cgcat gbrain retire --undo %s` brings it back\n", mi.RetiredBy, mi.RetiredAt, id.MachineID)
		}
	}
	retired, stale := 0, 0
	for _, mi := range s.Machines {
		if mi.RetiredBy != "" {
			retired++
		} else if mi.StaleSince != "" {
			stale++
		}
	}
	if len(s.Machines) > 0 {
		fmt.Fprintf(out, "machines on this brain: %d (%d retired, %d stale)\n", len(s.Machines), retired, stale)
	}
}

// printMirrorStatus says when the local mirror of GBrain's cards was last
// refreshed and what that took.
func printMirrorStatus(out io.Writer, m *projection.MirrorReport) {
	if m == nil {
		fmt.Fprintln(out, "mirror: never refreshed (a `cgcat serve` with GBrain on, or `cgcat gbrain sync`, refreshes it)")
		return
	}
	kind := "changes since the last refresh"
	if m.Full {
		kind = "a full listing"
	}
	fmt.Fprintf(out, "mirror: refreshed %s ago (%s: %d cards listed, %d read, %d calls; %d edited by people)\n", time.Since(m.At).Round(time.Second), kind, m.Listed, m.Read, m.Calls, m.Edited)
}

// identityLine says whether the identity outlives the data dir.
func identityLine(id *identityStatus) string {
	switch {
	case !id.Bound:
		return fmt.Sprintf("machine %s, kept in the data dir only (this system has no OS machine id, or %s names none): losing the whole data dir makes a new machine id", id.MachineID, store.OSMachineIDEnv)
	case id.KeptAt == "":
		return fmt.Sprintf("machine %s, bound to this machine and user, kept in the data dir only (a data dir in the temporary directory, or no state directory; set %s to keep it outside)", id.MachineID, store.IdentityDirEnv)
	case id.Restored:
		return fmt.Sprintf("machine %s, taken back from %s after the data dir was lost", id.MachineID, id.KeptAt)
	}
	return fmt.Sprintf("machine %s, bound to this machine and user, also kept at %s (a lost data dir keeps its machine id and project ids)", id.MachineID, id.KeptAt)
}

// recoveryLine says where taking a lost catalog's ids back stands.
func recoveryLine(rs *projection.Recovery) string {
	switch {
	case rs.Blocks():
		return rs.PendingError().Error()
	case rs.Done:
		return fmt.Sprintf("done %s ago: %d of this machine's cards and %d of format 1 read, %d ids not taken back", time.Since(rs.At).Round(time.Second), rs.Own, rs.Old, len(rs.NotTakenBack))
	}
	return "not done yet (the next GBrain round reads this machine's cards): " + rs.Err
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
	cs := gbrainConnectionChecks(cfg, s)
	if s.StoreError != "" {
		cs = append(cs, failf("", "GBrain projection state: %s", s.StoreError))
	}
	if s.Store == nil {
		return cs
	}
	cs = append(cs, projectionChecks(s)...)
	return append(cs, fleetChecks(s)...)
}

// gbrainConnectionChecks: the connection, the pinned source, the brain
// and where writes land.
func gbrainConnectionChecks(cfg *config.Config, s *gbrainStatus) []check {
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
	return cs
}

// projectionChecks: from the store, the outbox, cards not written yet,
// conflicts, refused cards and orphans.
func projectionChecks(s *gbrainStatus) []check {
	st := s.Store
	var cs []check
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

// fleetChecks are doctor's checks of this machine among the others: its
// identity, a lost catalog's pending ids, a retirement.
func fleetChecks(s *gbrainStatus) []check {
	var cs []check
	if id := s.Identity; id != nil {
		switch {
		case id.Replaced != "":
			cs = append(cs, warnf("nothing to do unless this data dir really is that machine's: its projects' cards are that machine's, and clash here as conflicts", "GBrain identity: %s", id.Replaced))
		case !id.Bound || id.KeptAt == "":
			cs = append(cs, infof("GBrain identity: %s", identityLine(id)))
		default:
			cs = append(cs, okf("GBrain identity: %s", identityLine(id)))
		}
		if mi := s.Machines[id.MachineID]; mi.RetiredBy != "" {
			cs = append(cs, warnf("`cgcat gbrain retire --undo "+id.MachineID+"` if this machine should write cards again",
				"GBrain: this machine was retired by %s on %s; its cards are left out of every search and none is written", mi.RetiredBy, mi.RetiredAt))
		}
	}
	if rs := s.Recovery; rs != nil && rs.Blocks() {
		cs = append(cs, warnf("let a `cgcat serve` with GBrain on run, or run `cgcat gbrain sync`, once GBrain answers",
			"GBrain: %d project ids pending: %s", rs.Pending, rs.Err))
	}
	return cs
}
