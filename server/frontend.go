package server

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/catalog"
	"github.com/cgcat/cgcat/local/config"
)

// Recall and RecallHit are the GBrain recall contract (package local).
type (
	Recall    = local.Recall
	RecallHit = local.RecallHit
)

// Options configure a Frontend.
type Options struct {
	// Config is the configuration in force, followed live: sharing, deny
	// and discovery roots apply to the next answer after the file changes.
	Config *config.Live
	// Open loads the catalog of a config's data dir. It runs in the
	// background from NewFrontend on, so `initialize` never waits (R11);
	// calls wait for it. A failed open is tried again by the next call.
	// The Discovery is this process's loop (nil: none).
	Open func(ctx context.Context, cfg *config.Config) (*catalog.Catalog, Discovery, error)
	// Processes tells what every process of the data dir does for
	// discovery (none known when unset).
	Processes Processes
	// Workspace is the --workspace hint (R5); the tool argument overrides it.
	Workspace string
	Recall    local.Recall
	// Cards asks GBrain for a card the mirror lacks (resolve only), within
	// RecallBudget; nil when GBrain is off.
	Cards local.CardLookup
	// RecallBudget bounds how long a search waits for GBrain.
	RecallBudget time.Duration
	// SliceBudget bounds the scan a call runs on an empty catalog (R11).
	SliceBudget time.Duration
	// CodeGraphServer is the name the host gave the native CodeGraph MCP
	// server, for the handoff's mcpServerHint ("codegraph" when unset).
	CodeGraphServer string
	// Face is who reads the messages (FaceAgent when unset).
	Face Face
	Log  *slog.Logger
	Now  func() time.Time
}

// Frontend answers both tools for one process's sharing view. The MCP
// handlers and the CLI twins (`cgcat projects`, `cgcat resolve`) call it, so
// they answer identically.
type Frontend struct {
	opt     Options
	cursors *cursors

	openMu sync.Mutex
	opened *opening

	pol catalog.PolicyCache

	// Plain listings (no query) by catalog revision, view and workspace:
	// filtering the whole catalog by the sharing policy is the costly part
	// of a call.
	plainMu sync.Mutex
	plain   map[plainKey]*listing
	self    map[plainKey]string // workspace → id of its own project ("" for none)
}

// opening is one attempt to open the catalog.
type opening struct {
	done chan struct{}
	cat  *catalog.Catalog
	ref  Discovery
	err  error
}

// RevalidateAfter is the hint given with every record (R23): not a lock.
const RevalidateAfter = 60

// NewFrontend builds a frontend and starts opening its catalog.
func NewFrontend(opt Options) *Frontend {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	if opt.SliceBudget == 0 {
		opt.SliceBudget = time.Second
	}
	if opt.RecallBudget == 0 {
		opt.RecallBudget = 300 * time.Millisecond
	}
	if opt.CodeGraphServer == "" {
		opt.CodeGraphServer = "codegraph"
	}
	if opt.Processes == nil {
		opt.Processes = nobody{}
	}
	f := &Frontend{opt: opt}
	if cfg, _ := opt.Config.Current(); cfg != nil && cfg.HasRoots() {
		f.open(cfg)
	}
	return f
}

// open returns the current attempt to open the catalog, starting one when
// there is none or the last one failed.
func (f *Frontend) open(cfg *config.Config) *opening {
	f.openMu.Lock()
	defer f.openMu.Unlock()
	if o := f.opened; o != nil {
		select {
		case <-o.done:
			if o.err == nil {
				return o
			}
		default:
			return o // still opening
		}
	}
	o := &opening{done: make(chan struct{})}
	f.opened = o
	go func() {
		defer close(o.done)
		o.cat, o.ref, o.err = f.opt.Open(context.Background(), cfg)
		if o.err == nil {
			f.cursors = newCursors(o.cat.Secret(), 15*time.Minute, 64)
		}
	}()
	return o
}

// OpenWorld reports whether answers may involve the network (GBrain on):
// tool annotations say so.
func (f *Frontend) OpenWorld() bool {
	cfg, _ := f.opt.Config.Current()
	return cfg != nil && cfg.GBrain.Enabled
}

// Ready waits until the catalog is loaded (or failed to load).
func (f *Frontend) Ready(ctx context.Context) error {
	f.openMu.Lock()
	o := f.opened
	f.openMu.Unlock()
	if o == nil {
		return nil
	}
	select {
	case <-o.done:
		return o.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Catalog is the loaded catalog (nil before Ready or without roots).
func (f *Frontend) Catalog() *catalog.Catalog {
	if o := f.ready(); o != nil {
		return o.cat
	}
	return nil
}

func (f *Frontend) ready() *opening {
	f.openMu.Lock()
	defer f.openMu.Unlock()
	if o := f.opened; o != nil {
		select {
		case <-o.done:
			if o.err == nil {
				return o
			}
		default:
		}
	}
	return nil
}

// call is what one answer stands on: the config and policy in force, the
// catalog brought up to date, and what the agent should be told about them.
type call struct {
	cfg    *config.Config
	pol    catalog.Policy
	cat    *catalog.Catalog
	ref    Discovery // nil: no loop in this process
	notes  []string  // said in the answer's message
	gstate string    // this call's own GBrain outcome, if it asked
	// sliced: this call moved discovery of an empty catalog on by a slice
	// (or waited for another process's), R11.
	sliced bool
	// refreshed: this call walked every root to the end itself just now
	// (a CLI run's refresh), so coverage needs no watcher to be complete.
	refreshed bool
	// coverWhy is why coverage is partial, with the next step: said by a
	// listing (a resolve is about one record).
	coverWhy string
}

// begin is where both tools start: setup_required without a valid config or
// roots, else the catalog brought up to date with what other processes
// published. A nil call comes with the answer (or error) to return instead.
func (f *Frontend) begin(ctx context.Context) (*call, *Envelope, error) {
	cfg, cfgErr := f.opt.Config.Current()
	if cfg == nil {
		e := f.envelope(nil, StatusSetupRequired)
		e.Message = fmt.Sprintf("The configuration cannot be used: %v. Fix the file (`cgcat config check` shows the problem); this server picks up the corrected file by itself.", cfgErr)
		if f.opt.Face == FaceCLI {
			e.Message = fmt.Sprintf("The configuration cannot be used: %v. Fix the file; `cgcat config check` shows the problem.", cfgErr)
		}
		return nil, e, nil
	}
	if !cfg.HasRoots() {
		e := f.envelope(nil, StatusSetupRequired)
		e.Message = "No project roots are configured, so nothing is scanned. Run `cgcat config init --root /ABS/DIR` (one --root per folder that holds your code); this server picks up the new config by itself."
		if f.opt.Face == FaceCLI {
			e.Message = "No project roots are configured, so nothing is scanned. Run `cgcat config init --root /ABS/DIR` (one --root per folder that holds your code), or pass --root DIR to this command."
		}
		return nil, e, nil
	}
	o := f.open(cfg)
	select {
	case <-o.done:
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
	if o.err != nil {
		return nil, nil, o.err
	}
	c := &call{cfg: cfg, pol: f.policy(cfg), cat: o.cat, ref: o.ref}
	if cfgErr != nil {
		c.notes = append(c.notes, fmt.Sprintf("The configuration file changed but cannot be used (%v); answers follow the last valid configuration until it is fixed.", cfgErr))
	}
	if err := c.cat.Sync(ctx); err != nil {
		return nil, nil, fmt.Errorf("read catalog: %w", err)
	}
	if d := c.cat.StoreDamage(); d != nil {
		c.notes = append(c.notes, "The catalog store is damaged, so discovery cannot update it; answers come from the last published catalog. Run `cgcat store recover` to rebuild it (ids are kept).")
	}
	if err := c.cat.Err(); err != nil {
		c.notes = append(c.notes, fmt.Sprintf("The newest published catalog could not be read (%v); answers come from the last one read.", err))
	}
	if c.ref != nil {
		if derr := c.ref.LastError(); derr != nil {
			c.notes = append(c.notes, "Discovery cannot update the catalog right now ("+derr.Error()+"); these answers come from the catalog as it was.")
		}
	}
	return c, nil, nil
}

// onSoundView answers, and answers again when the published base the
// answer was read from changed under it meanwhile (a backup restored over
// it in place): that answer may hold another file's records. The next try
// syncs first, which reloads (the store, when the file is not this
// catalog's); after three tries the file is being rewritten without
// pause and the last answer stands.
func (f *Frontend) onSoundView(answer func() (*Envelope, error)) (*Envelope, error) {
	for try := 1; ; try++ {
		e, err := answer()
		cat := f.Catalog()
		if try == 3 || cat == nil || !cat.BaseMoved() {
			return e, err
		}
	}
}

// policy is cfg's resolved policy (resolved again after a moment).
func (f *Frontend) policy(cfg *config.Config) catalog.Policy { return f.pol.For(cfg) }

// envelope starts an answer: the facts of the catalog and discovery as this
// frontend's configuration sees them right now.
func (f *Frontend) envelope(c *call, status string) *Envelope {
	e := &Envelope{SchemaVersion: SchemaVersion, Status: status, Projects: []Project{}, GBrainState: GBrainDisabled}
	if c == nil {
		e.ScanState, e.Coverage = "not_configured", string(local.CoverageNone)
		if cfg, _ := f.opt.Config.Current(); cfg != nil && cfg.GBrain.Enabled {
			e.GBrainState = GBrainDegraded
		}
		return e
	}
	e.MachineID = c.cat.MachineID()
	e.CatalogRevision = c.cat.Revision()
	st := c.cat.State()
	cov, why := f.coverage(c, st)
	e.Coverage, c.coverWhy = string(cov), why
	e.ScanState = "idle"
	// running is a fact (R36): a live process walks now (it holds the
	// scan lease and keeps it fresh), or this very call moved an empty
	// catalog's pass on (R11). An unfinished pass that nobody walks right
	// now is idle, and said so: a live serve resumes such a pass within
	// seconds (at its next interval when its own round hit a limit), a
	// killed scan never.
	switch {
	case f.opt.Processes.Scanning(c.cfg.DataDir) || c.ref != nil && c.ref.Running():
		e.ScanState = "running"
	case c.sliced && st.PassRunning:
		e.ScanState = "running"
	case st.PassRunning && f.opt.Processes.Alive(c.cfg.DataDir):
		c.notes = append(c.notes, "A discovery pass is unfinished and nothing walks it right now; a host's cgcat serve resumes it within seconds (after a round limit, at its next refresh interval), or `cgcat scan` finishes it now.")
	case st.PassRunning:
		c.notes = append(c.notes, "A discovery pass was left unfinished; the next `cgcat scan` (or a host's cgcat serve) resumes it.")
	}
	e.GBrainState = f.gbrainState(c)
	if len(c.notes) > 0 {
		e.Message = joinNotes(c.notes)
	}
	return e
}

// gbrainState is the same truth on every answer: disabled, ok when GBrain
// answered recently (or this call's own recall succeeded), else degraded.
func (f *Frontend) gbrainState(c *call) string {
	if !c.cfg.GBrain.Enabled {
		return GBrainDisabled // the config in force says so, whatever was wired at start
	}
	if c.gstate != "" {
		return c.gstate
	}
	// The last check is news for three check intervals (a round may run
	// late on a busy machine); older, nobody knows that GBrain answers.
	fresh := 3 * time.Duration(max(c.cfg.GBrain.CheckSeconds, 60)) * time.Second
	g := c.cat.GBrain()
	if g.OK && f.opt.Now().Sub(g.At) < fresh {
		return GBrainOK
	}
	return GBrainDegraded
}

func joinNotes(notes []string) string {
	out := notes[0]
	for _, n := range notes[1:] {
		out += " " + n
	}
	return out
}
