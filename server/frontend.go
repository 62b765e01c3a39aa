package server

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/catalog"
	"github.com/cgcat/cgcat/local/config"
	"github.com/cgcat/cgcat/local/meta"
	"github.com/cgcat/cgcat/local/pathid"
	"github.com/cgcat/cgcat/local/scan"
	"github.com/cgcat/cgcat/local/store"
	"github.com/zeebo/xxh3"
)

// Recall is optional GBrain recall (R31): project ids of cards that match a
// query. The frontend keeps only hits of this machine whose ids are bound
// locally and visible in this frontend's view.
type Recall interface {
	Recall(ctx context.Context, query string, limit int) ([]RecallHit, error)
}

// RecallHit is one GBrain card that matched.
type RecallHit struct {
	ProjectID string
	MachineID string
}

// Options configure a Frontend.
type Options struct {
	Config *config.Config
	// Open loads the catalog. It runs in the background from NewFrontend on,
	// so `initialize` never waits for a large catalog (R11); calls wait for
	// it. Unused when the config has no roots.
	Open func(ctx context.Context) (*catalog.Catalog, *catalog.Refresher, error)
	// Workspace is the --workspace hint (R5); the tool argument overrides it.
	Workspace string
	Recall    Recall
	// RecallBudget bounds how long a search waits for GBrain.
	RecallBudget time.Duration
	// SliceBudget bounds the scan a call runs on an empty catalog (R11).
	SliceBudget time.Duration
	Log         *slog.Logger
	Now         func() time.Time
	// CodeGraphServer is the name the host gave CodeGraph's own MCP server,
	// named in every handoff (mcpServerHint); "" means "codegraph".
	CodeGraphServer string
}

// Frontend answers both tools for one process's sharing view. The MCP
// handlers and the CLI twins (`cgcat projects`, `cgcat resolve`) call it, so
// they answer identically.
type Frontend struct {
	opt     Options
	pol     catalog.Policy
	cursors *cursors

	ready   chan struct{}
	cat     *catalog.Catalog
	ref     *catalog.Refresher
	openErr error

	// Plain listings (no query) by catalog revision and workspace: they
	// are the same until the catalog changes (the policy never changes in
	// a frontend's life), and filtering the whole catalog by the sharing
	// policy is the costly part of a call.
	plainMu sync.Mutex
	plain   map[plainKey]*listing
	self    map[plainKey]string // workspace → id of its own project ("" for none)
}

// RevalidateAfter is the hint given with every record (R23): not a lock.
const RevalidateAfter = 60

// NewFrontend builds a frontend over an opened catalog.
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
	f := &Frontend{opt: opt, pol: catalog.PolicyFrom(opt.Config), ready: make(chan struct{})}
	if !opt.Config.HasRoots() || opt.Open == nil {
		close(f.ready)
		return f
	}
	go func() {
		defer close(f.ready)
		f.cat, f.ref, f.openErr = opt.Open(context.Background())
		if f.openErr == nil {
			f.cursors = newCursors(f.cat.Secret(), 15*time.Minute, 64)
		}
	}()
	return f
}

// Ready waits until the catalog is loaded (or failed to load).
func (f *Frontend) Ready(ctx context.Context) error {
	select {
	case <-f.ready:
		return f.openErr
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Catalog is the loaded catalog (nil before Ready or without roots).
func (f *Frontend) Catalog() *catalog.Catalog { return f.cat }

// Refresher is the discovery loop (nil before Ready or without roots).
func (f *Frontend) Refresher() *catalog.Refresher { return f.ref }

// listing is one ordered result. It is read-only once built: plain
// listings are cached per catalog revision and shared by every snapshot
// (and cursor) taken from them, so a 100k-project catalog is not copied per
// call.
type listing struct {
	ids       []string
	reasons   [][]string // parallel to ids: why each matched; nil when none did
	workspace []string   // parallel to ids: "self", "related" or ""; nil without a hint
}

func (l *listing) reasonsAt(i int) []string {
	if i < len(l.reasons) && l.reasons[i] != nil {
		return l.reasons[i]
	}
	return []string{}
}

func (l *listing) workspaceAt(i int) string {
	if i < len(l.workspace) {
		return l.workspace[i]
	}
	return ""
}

// plainKey names a cached plain listing: the catalog revision it was built
// from and the workspace hint it was ranked for.
type plainKey struct {
	rev uint64
	ws  string
}

// maxPlain bounds the cached plain listings (one per workspace hint seen).
const maxPlain = 8

// maxHits bounds the hits a search keeps for paging (20 pages of 50). A
// search's result is the top matches, never the catalog (a plain listing,
// shared between snapshots, pages through everything); without a bound,
// each kept snapshot of a query matching most of a 100k catalog would hold
// 100k entries.
const maxHits = 1000

func (f *Frontend) base(status string) *Envelope {
	e := &Envelope{SchemaVersion: SchemaVersion, Status: status, Projects: []Project{}, GBrainState: GBrainDisabled}
	if f.opt.Recall != nil {
		e.GBrainState = GBrainOK
	}
	if f.cat == nil {
		e.ScanState, e.Coverage = "not_configured", "none"
		return e
	}
	e.MachineID = f.cat.Store().MachineID()
	e.CatalogRevision = f.cat.Revision()
	st := f.cat.State()
	e.ScanState, e.Coverage = "idle", st.Coverage
	if st.PassRunning || st.LastCompleted.IsZero() {
		e.ScanState = "running"
	}
	if st.LastCompleted.IsZero() || e.Coverage == "" {
		e.Coverage = scan.CoveragePartial
	}
	return e
}

func (f *Frontend) setupRequired() *Envelope {
	e := f.base(StatusSetupRequired)
	e.Message = "No project roots are configured, so nothing is scanned. Run `cgcat config init --root /ABS/DIR` (one --root per folder that holds your code), then restart this server."
	return e
}

// Projects answers local_codegraph_projects.
func (f *Frontend) Projects(ctx context.Context, a ProjectsArgs) (*Envelope, error) {
	return f.warn(f.projects(ctx, a))
}

// warn adds to an answer what the agent should know about discovery itself
// (a full disk, a read-only data dir): answers then come from the catalog
// as it was, and say so.
func (f *Frontend) warn(e *Envelope, err error) (*Envelope, error) {
	if e == nil || f.ref == nil {
		return e, err
	}
	if derr := f.ref.LastError(); derr != nil {
		w := "Discovery cannot update the catalog right now (" + derr.Error() + "); these answers come from the catalog as it was."
		if e.Message == "" {
			e.Message = w
		} else {
			e.Message += " " + w
		}
	}
	return e, err
}

// current is where both tools start: setup_required without roots, else
// the loaded catalog brought up to date with other processes' commits.
// A nil catalog comes with the answer (or error) to return instead.
func (f *Frontend) current(ctx context.Context) (*catalog.Catalog, *Envelope, error) {
	if !f.opt.Config.HasRoots() || f.opt.Open == nil {
		return nil, f.setupRequired(), nil
	}
	if err := f.Ready(ctx); err != nil {
		return nil, nil, err
	}
	if err := f.cat.Sync(ctx); err != nil {
		return nil, nil, fmt.Errorf("read catalog: %w", err)
	}
	return f.cat, nil, nil
}

func (f *Frontend) projects(ctx context.Context, a ProjectsArgs) (*Envelope, error) {
	cat, early, err := f.current(ctx)
	if cat == nil {
		return early, err
	}
	if a.Refresh && f.ref != nil {
		f.ref.Kick()
	}
	if cat.Len() == 0 && cat.State().LastCompleted.IsZero() && f.ref != nil {
		f.ref.SliceNow(ctx, f.opt.SliceBudget)
	}
	ws := a.WorkspacePath
	if ws == "" {
		ws = f.opt.Workspace
	}
	binding := f.binding(a.Query, ws, a.Limit)
	var (
		snap   *snapshot
		offset int
		gstate string
	)
	if a.Cursor != "" {
		var err error
		snap, offset, err = f.cursors.open(a.Cursor, binding, f.opt.Now())
		if err != nil {
			e := f.base(StatusCursorExpired)
			e.Message = "This cursor no longer applies (the arguments, the sharing view or the listing changed, or it expired). Call again without cursor to start a fresh listing."
			return e, nil
		}
	} else {
		var list *listing
		list, gstate = f.rank(ctx, a.Query, ws)
		snap = &snapshot{binding: binding, list: list, revision: cat.Revision(), created: f.opt.Now()}
	}
	e := f.base(StatusOK)
	if gstate != "" {
		e.GBrainState = gstate
	}
	ids := snap.list.ids
	if len(ids) == 0 {
		e.Status = StatusNoMatches
		e.Message = "No catalogued project matches. This says nothing about code that exists elsewhere"
		if e.Coverage != scan.CoverageComplete {
			e.Message += "; discovery has not covered every configured root yet, so try again shortly"
		}
		e.Message += "."
		return e, nil
	}
	end := min(offset+a.Limit, len(ids))
	for i := offset; i < end; i++ {
		p := cat.Get(ids[i])
		if p == nil {
			continue
		}
		ck := catalog.Recheck(p, f.pol)
		if !ck.Allowed {
			continue // outside this view: omitted without trace (R19)
		}
		e.Projects = append(e.Projects, f.project(p, ck, snap.list.reasonsAt(i), snap.list.workspaceAt(i), true))
	}
	if end < len(ids) {
		if snap.id == "" {
			f.cursors.keep(snap)
		}
		c := f.cursors.encode(snap, end)
		e.NextCursor = &c
	}
	return e, nil
}

func (f *Frontend) binding(query, ws string, limit int) uint64 {
	h := xxh3.New()
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], f.pol.ViewKey())
	h.Write(b[:])
	fmt.Fprintf(h, "%q|%q|%d", query, pathid.Key(ws), limit)
	return h.Sum64()
}

// rank orders the visible records for a query: exact tiers, lexical
// relevance, then GBrain recall (R16); the workspace hint marks the
// caller's own project and its relatives (R5).
func (f *Frontend) rank(ctx context.Context, query, ws string) (*listing, string) {
	if strings.TrimSpace(query) == "" {
		return f.plainListing(ws), ""
	}
	cat := f.cat
	hits, _ := cat.SearchTop(query, f.pol, maxHits)
	if len(hits) > maxHits {
		hits = hits[:maxHits]
	}
	l := &listing{ids: make([]string, len(hits)), reasons: make([][]string, len(hits))}
	for i, h := range hits {
		l.ids[i], l.reasons[i] = h.ID, h.Reasons
	}
	gstate := ""
	if f.opt.Recall != nil {
		gstate = GBrainOK
		hits, err := f.recall(ctx, query)
		if err != nil {
			gstate = GBrainDegraded
			f.opt.Log.Warn("GBrain recall failed; answering from the local catalog", "err", err)
		}
		seen := make(map[string]bool, len(l.ids))
		for _, id := range l.ids {
			seen[id] = true
		}
		me := cat.Store().MachineID()
		for _, h := range hits {
			if seen[h.ProjectID] || h.MachineID != me || !store.ValidProjectID(h.ProjectID) {
				continue
			}
			p := cat.Get(h.ProjectID)
			if p == nil || !f.pol.Allows(p.Root) {
				continue
			}
			seen[h.ProjectID] = true
			l.ids = append(l.ids, h.ProjectID)
			l.reasons = append(l.reasons, []string{"GBrain recall: its project card matches the query"})
		}
	}
	return f.applyWorkspace(l, ws, false), gstate
}

// plainListing is the no-query listing for a workspace hint, built once
// per catalog revision.
func (f *Frontend) plainListing(ws string) *listing {
	rev := f.cat.Revision()
	key := plainKey{rev: rev, ws: pathid.Key(ws)}
	f.plainMu.Lock()
	l := f.plain[key]
	f.plainMu.Unlock()
	if l != nil {
		return l
	}
	if ws == "" {
		l = &listing{ids: f.cat.List(f.pol)}
	} else {
		l = f.applyWorkspace(f.plainListing(""), ws, true)
	}
	if f.cat.Revision() == rev { // no reload ran meanwhile
		f.plainMu.Lock()
		if f.plain == nil || len(f.plain) >= maxPlain {
			f.plain = map[plainKey]*listing{}
		}
		f.plain[key] = l
		f.plainMu.Unlock()
	}
	return l
}

func (f *Frontend) recall(ctx context.Context, query string) ([]RecallHit, error) {
	ctx, cancel := context.WithTimeout(ctx, f.opt.RecallBudget)
	defer cancel()
	type result struct {
		hits []RecallHit
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		h, err := f.opt.Recall.Recall(ctx, query, 20)
		ch <- result{h, err}
	}()
	select {
	case r := <-ch:
		return r.hits, r.err
	case <-ctx.Done():
		return nil, fmt.Errorf("GBrain recall took longer than %s", f.opt.RecallBudget)
	}
}

// applyWorkspace marks the project that contains the workspace ("self") and
// the ones related to it (same repository, or named in its hint file), puts
// relatives first in a plain listing, and the workspace itself last: the
// caller already has it. It returns a new listing; l is not changed.
func (f *Frontend) applyWorkspace(l *listing, ws string, plain bool) *listing {
	if ws == "" {
		return l
	}
	cat := f.cat
	self := f.selfProject(ws)
	if self == nil {
		return l
	}
	related := func(p *local.Project) bool {
		g, sg := p.Meta.Git, self.Meta.Git
		if sg.Remote != "" && g.Remote == sg.Remote {
			return true
		}
		if sg.CommonDir != "" && (g.CommonDir == sg.CommonDir || pathid.Same(p.Root, strings.TrimSuffix(sg.CommonDir, "/.git"))) {
			return true
		}
		for _, r := range self.Meta.Related {
			if strings.EqualFold(r, p.Meta.Name) || slices.ContainsFunc(p.Meta.Packages, func(pk string) bool { return strings.EqualFold(pk, r) }) {
				return true
			}
		}
		return false
	}
	var rel, rest []int // positions in l
	selfAt := -1
	marks := make([]string, len(l.ids))
	for i, id := range l.ids {
		if id == self.ID {
			marks[i], selfAt = "self", i
			continue
		}
		if p := cat.Get(id); p != nil && related(p) {
			marks[i] = "related"
			if plain {
				rel = append(rel, i)
				continue
			}
		}
		rest = append(rest, i)
	}
	// A plain listing puts relatives first, order otherwise kept; a
	// search keeps its relevance order. The workspace's own project goes
	// last.
	order := append(rel, rest...)
	if selfAt >= 0 {
		order = append(order, selfAt)
	}
	out := &listing{ids: make([]string, len(order)), reasons: make([][]string, len(order)), workspace: make([]string, len(order))}
	for j, i := range order {
		out.ids[j], out.workspace[j] = l.ids[i], marks[i]
		r := l.reasonsAt(i)
		switch marks[i] {
		case "self":
			r = append(slices.Clone(r), "this is the workspace's own project")
		case "related":
			r = append(slices.Clone(r), "related to the workspace project")
		}
		if len(r) > 0 {
			out.reasons[j] = r
		}
	}
	return out
}

// selfProject is the visible project that contains the workspace (the
// innermost one), or nil; looked up once per catalog revision.
func (f *Frontend) selfProject(ws string) *local.Project {
	rev := f.cat.Revision()
	key := plainKey{rev: rev, ws: pathid.Key(ws)}
	f.plainMu.Lock()
	id, ok := f.self[key]
	f.plainMu.Unlock()
	if ok {
		if id == "" {
			return nil
		}
		return f.cat.Get(id)
	}
	canon, err := pathid.Canonical(ws)
	if err != nil {
		canon = ws
	}
	var self *local.Project
	for _, id := range f.plainListing("").ids {
		p := f.cat.Get(id)
		if p != nil && pathid.Within(p.Root, canon) && (self == nil || len(p.Root) > len(self.Root)) {
			self = p
		}
	}
	if f.cat.Revision() == rev {
		f.plainMu.Lock()
		if f.self == nil || len(f.self) >= maxPlain {
			f.self = map[plainKey]string{}
		}
		f.self[key] = ""
		if self != nil {
			f.self[key] = self.ID
		}
		f.plainMu.Unlock()
	}
	return self
}

// project renders one record after its live re-check. The handoff is built
// from the checked root only, never from metadata.
func (f *Frontend) project(p *local.Project, ck catalog.Check, reasons []string, ws string, withHandoff bool) Project {
	out := Project{
		ProjectID:              p.ID,
		RecordRevision:         p.RecordRevision,
		Name:                   dataText(p.Meta.Name, 120),
		Description:            dataText(firstNonEmpty(p.Meta.Description, p.Meta.Readme), 300),
		Reason:                 reasons,
		Availability:           string(ck.Availability),
		IndexState:             string(ck.IndexState),
		Freshness:              local.FreshnessUnknown,
		ValidatedAt:            ck.At.UTC().Format(time.RFC3339),
		RevalidateAfterSeconds: RevalidateAfter,
		Packages:               capList(p.Meta.Packages, 8, 200),
		Branch:                 dataText(p.Meta.Git.Branch, 120),
		Worktree:               p.Meta.Git.Worktree,
		Workspace:              ws,
	}
	if out.Reason == nil {
		out.Reason = []string{}
	}
	switch {
	case !ck.OK:
		out.Why = ck.Why
	case !f.pol.ExposePaths:
		out.Why = "browse-only: this catalog is configured not to expose absolute paths (sharing.exposeAbsolutePaths is false), so this project cannot be queried from here"
	case hasControl(p.Root) || !utf8.ValidString(p.Root):
		// JSON would carry such a path changed (invalid bytes become
		// U+FFFD), and a changed path points somewhere else.
		out.Why = "the project's path contains control characters or bytes that are not UTF-8, so it cannot be handed out unchanged"
	default:
		root := p.Root
		out.ProjectPath = &root
		if withHandoff {
			out.Handoff = &Handoff{
				MCPServerHint:     cmp.Or(f.opt.CodeGraphServer, "codegraph"),
				ToolName:          "codegraph_explore",
				Arguments:         map[string]string{"projectPath": root},
				RequiredFromAgent: []string{"query"},
			}
		}
	}
	return out
}

// dataText bounds a metadata string for output: it is data, never an
// instruction, so control characters go and the length is capped.
func dataText(s string, n int) string { return meta.Clean(s, n) }

func capList(xs []string, n, each int) []string {
	var out []string
	for _, x := range xs {
		if len(out) == n {
			break
		}
		out = append(out, dataText(x, each))
	}
	return out
}

func firstNonEmpty(xs ...string) string {
	for _, x := range xs {
		if strings.TrimSpace(x) != "" {
			return x
		}
	}
	return ""
}

func hasControl(s string) bool {
	return strings.ContainsFunc(s, unicode.IsControl)
}

// Resolve answers local_codegraph_resolve (R21): the current record of an
// id from an earlier answer. It never takes a path.
func (f *Frontend) Resolve(ctx context.Context, a ResolveArgs) (*Envelope, error) {
	return f.warn(f.resolve(ctx, a))
}

func (f *Frontend) resolve(ctx context.Context, a ResolveArgs) (*Envelope, error) {
	cat, early, err := f.current(ctx)
	if cat == nil {
		return early, err
	}
	var p *local.Project
	if store.ValidProjectID(a.ProjectID) {
		p = cat.Get(a.ProjectID)
		if p == nil {
			// Maybe a record another process committed a moment ago;
			// never wait long for a busy store to find out.
			fctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			_ = cat.ForceSync(fctx)
			cancel()
			p = cat.Get(a.ProjectID)
		}
	}
	if p == nil {
		e := f.base(StatusUnknownProject)
		e.Message = "No project with this id is known on this machine. It may come from another machine or an old catalog: search again with local_codegraph_projects."
		if !store.ValidProjectID(a.ProjectID) {
			e.Message = "This is not a projectId issued by this catalog (ids look like cg_ followed by 16 letters and digits; a path is never an id). Search with local_codegraph_projects instead."
		}
		return e, nil
	}
	if !f.pol.Allows(p.Root) {
		e := f.base(StatusNotAvailable)
		e.Message = "This project is not shared with this frontend."
		return e, nil
	}
	ck := catalog.Recheck(p, f.pol)
	if !ck.Allowed {
		e := f.base(StatusNotAvailable)
		e.Message = "This project is not shared with this frontend."
		return e, nil
	}
	if a.ExpectedRecordRevision != 0 && a.ExpectedRecordRevision != p.RecordRevision {
		e := f.base(StatusRecordChanged)
		e.Message = fmt.Sprintf("The record changed since revision %d (now %d). Check that it is still the project you mean, then resolve again with the new revision or search again.", a.ExpectedRecordRevision, p.RecordRevision)
		rec := f.project(p, ck, []string{"record changed"}, "", false)
		rec.ProjectPath, rec.Handoff = nil, nil
		rec.Why = "the record changed since the revision you hold; check it is still the project you mean, then resolve again"
		e.Projects = append(e.Projects, rec)
		return e, nil
	}
	e := f.base(StatusOK)
	if !ck.OK {
		e.Status = StatusMissing
		e.Message = "The project's root or its CodeGraph index is not there any more: " + ck.Why + ". Search again with local_codegraph_projects."
		if ck.Availability == local.Inaccessible {
			// Not gone: unreadable right now (permissions, an offline volume).
			e.Message = "The project's root cannot be checked right now: " + ck.Why + ". It may be on an offline volume or need permissions; try again later, or search again with local_codegraph_projects."
		}
	}
	e.Projects = append(e.Projects, f.project(p, ck, []string{"resolved by projectId"}, "", true))
	return e, nil
}
