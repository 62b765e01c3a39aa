package server

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/catalog"
	"github.com/cgcat/cgcat/local/ids"
	"github.com/cgcat/cgcat/local/pathid"
	"github.com/cgcat/cgcat/local/search"
	"github.com/zeebo/xxh3"
)

// listing is one ordered result. It is read-only once built: plain
// listings are cached per catalog revision and shared by every snapshot
// (and cursor) taken from them, so a 100k-project catalog is not copied per
// call.
type listing struct {
	// approximate: the best hit only comes close to the query (a
	// misspelling): suggestions help.
	approximate bool
	ids         []string
	reasons     [][]string // parallel to ids: why each matched; nil when none did
	workspace   []string   // parallel to ids: "self", "related" or ""; nil without a hint
	// beyond counts the matches past the kept ones (a search keeps the best
	// maxHits): the listing's total is len(ids) + beyond.
	beyond int
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

// plainKey names a cached plain listing: the catalog revision and view it
// was built from and the workspace hint it was ranked for.
type plainKey struct {
	// store and rev name the catalog state: a data dir made anew starts
	// its revisions again, so the store id must be part of the name.
	store string
	rev   uint64
	view  uint64
	ws    string
	hour  int64 // records leave plain listings after retainMissingDays
}

// maxPlain bounds the cached plain listings (one per workspace hint seen).
const maxPlain = 8

// maxHits bounds the hits a search keeps for paging (20 pages of 50). A
// search's result is the top matches, never the catalog (a plain listing,
// shared between snapshots, pages through everything); without a bound,
// each kept snapshot of a query matching most of a 100k catalog would hold
// 100k entries.
const maxHits = 1000

// Projects answers local_codegraph_projects.
func (f *Frontend) Projects(ctx context.Context, a ProjectsArgs) (*Envelope, error) {
	return f.onSoundView(func() (*Envelope, error) { return f.projects(ctx, a) })
}

func (f *Frontend) projects(ctx context.Context, a ProjectsArgs) (*Envelope, error) {
	c, early, err := f.begin(ctx)
	if c == nil {
		return early, err
	}
	f.discoverFirst(ctx, c, a)
	ws := a.WorkspacePath
	if ws == "" {
		ws = f.opt.Workspace
	}
	binding := f.binding(c, a.Query, ws, a.Limit)
	var (
		snap   *snapshot
		offset int
	)
	if a.Cursor != "" {
		var err error
		snap, offset, err = f.cursors.open(a.Cursor, binding, f.opt.Now())
		if err != nil {
			e := f.envelope(c, StatusCursorExpired)
			e.Message = strings.TrimSpace("This cursor no longer applies (the arguments, the sharing view or the listing changed, or it expired). Call again without cursor to start a fresh listing. " + e.Message)
			if f.opt.Face == FaceCLI {
				e.Message = strings.TrimSpace("The listing expired while it was being paged. Run the command again. " + e.Message)
			}
			return e, nil
		}
	} else {
		list := f.rank(ctx, c, a.Query, ws)
		if len(list.ids) == 0 && a.RefreshBudget > 0 && !c.refreshed && c.ref != nil && !f.follows(c.cfg) {
			// A miss, and no process follows the disk: look before saying
			// so (a project made a moment ago is found now).
			c.refreshed = c.ref.RefreshNow(ctx, a.RefreshBudget)
			list = f.rank(ctx, c, a.Query, ws)
		}
		snap = &snapshot{binding: binding, list: list, revision: c.cat.Revision(), created: f.opt.Now()}
		offset = a.Offset
	}
	e := f.envelope(c, StatusOK)
	ids := snap.list.ids
	if c.coverWhy != "" && !f.quietCoverage(c, len(ids)) {
		e.Message = strings.TrimSpace(e.Message + " " + c.coverWhy)
	}
	if a.Query != "" && a.Cursor == "" && (len(ids) == 0 || snap.list.approximate) {
		e.DidYouMean = c.cat.Suggest(a.Query, c.pol, 5)
	}
	e.Total = len(ids) + snap.list.beyond
	if len(ids) == 0 {
		e.Status = StatusNoMatches
		msg := "No catalogued project matches. This says nothing about code that exists elsewhere"
		if e.Coverage != string(local.CoverageComplete) {
			msg += "; a matching project may still exist where discovery has not looked"
		}
		e.Message = strings.TrimSpace(msg + ". " + e.Message)
		return e, nil
	}
	end := min(offset+a.Limit, len(ids))
	f.fillPage(c, e, snap.list, offset, end)
	if end < len(ids) {
		if snap.id == "" {
			f.cursors.keep(snap)
		}
		cur := f.cursors.encode(snap, end)
		e.NextCursor = &cur
	}
	return e, nil
}

// discoverFirst moves discovery on before a listing: the refresh the
// caller asked for (walked now within its budget, or asked of whichever
// process walks), and one slice for an empty catalog (R11).
func (f *Frontend) discoverFirst(ctx context.Context, c *call, a ProjectsArgs) {
	if c.ref == nil {
		return
	}
	if a.Refresh {
		if a.RefreshBudget > 0 {
			c.refreshed = c.ref.RefreshNow(ctx, a.RefreshBudget)
		} else {
			c.ref.Kick()
		}
	}
	if c.cat.Len() == 0 && c.cat.State().LastCompleted.IsZero() {
		c.ref.SliceNow(ctx, f.opt.SliceBudget)
		c.sliced = true
		_ = c.cat.ForceSync(ctx)
	}
}

// fillPage puts the listing's entries [offset, end) into e: each record
// re-checked live (one outside this view is left out without trace, R19),
// each card only when it may be shown as historical; look-alikes marked.
func (f *Frontend) fillPage(c *call, e *Envelope, list *listing, offset, end int) {
	var recs []*local.Project // parallel to e.Projects: nil for a card
	for i := offset; i < end; i++ {
		if slug, ok := isCardRef(list.ids[i]); ok {
			if cd := c.cat.Card(slug); cd != nil && f.historicalCard(c, cd) {
				e.Projects = append(e.Projects, f.cardProject(cd, list.reasonsAt(i), AvailabilityHistorical))
				recs = append(recs, nil)
			}
			continue
		}
		p := c.cat.Get(list.ids[i])
		if p == nil {
			continue
		}
		ck := catalog.Recheck(p, c.pol)
		if !ck.Allowed {
			continue // outside this view: omitted without trace (R19)
		}
		e.Projects = append(e.Projects, f.project(c, p, ck, list.reasonsAt(i), list.workspaceAt(i), true))
		recs = append(recs, p)
	}
	markLookalikes(e.Projects, recs, c.pol)
}

// binding names what a cursor is bound to: the view, the arguments, and
// the store (a data dir made anew is another listing).
func (f *Frontend) binding(c *call, query, ws string, limit int) uint64 {
	h := xxh3.New()
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], c.pol.ViewKey())
	h.Write(b[:])
	fmt.Fprintf(h, "%q|%q|%d|%s", query, pathid.Key(ws), limit, c.cat.StoreID())
	return h.Sum64()
}

// rank orders the visible records for a query: exact tiers, lexical
// relevance, then GBrain recall (R16); among equal matches a present
// project comes before one that is not; the workspace hint marks the
// caller's own project and its relatives (R5).
func (f *Frontend) rank(ctx context.Context, c *call, query, ws string) *listing {
	if strings.TrimSpace(query) == "" {
		return f.plainListing(c, ws)
	}
	hits, total := c.cat.SearchTop(query, c.pol, maxHits)
	if len(hits) > maxHits {
		hits = hits[:maxHits]
	}
	// Among equal scores a present project comes first (a moved project's
	// ghost never ranks before its new record); the sort is stable, so only
	// equal scores trade places.
	type ranked struct {
		search.Hit
		present bool
	}
	rs := make([]ranked, len(hits))
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	present := c.cat.PresentAll(ids)
	for i, h := range hits {
		rs[i] = ranked{h, present[i]}
	}
	slices.SortStableFunc(rs, func(a, b ranked) int {
		switch {
		case a.Score != b.Score:
			return cmp.Compare(b.Score, a.Score) // as ranked: best first
		case a.present == b.present:
			return 0
		case a.present:
			return -1
		}
		return 1
	})
	for i := range rs {
		hits[i] = rs[i].Hit
	}
	l := &listing{ids: make([]string, len(hits)), reasons: make([][]string, len(hits)), beyond: max(0, total-len(hits))}
	l.approximate = len(hits) > 0 && hits[0].Tier == search.TierFuzzy
	for i, h := range hits {
		l.ids[i], l.reasons[i] = h.ID, h.Reasons
	}
	movedLast(c, l)
	if f.opt.Recall != nil && c.cfg.GBrain.Enabled && c.cfg.GBrain.SemanticSearch {
		f.addRecall(ctx, c, l, query)
	}
	f.addHistorical(c, l, query)
	return f.applyWorkspace(c, l, ws, false)
}

// addRecall appends GBrain recall hits that name records bound here and
// visible in this view.
func (f *Frontend) addRecall(ctx context.Context, c *call, l *listing, query string) {
	// Recall only adds: its success does not outvote the shared GBrain
	// contact (gbrainState stays the same truth on every answer); its
	// failure says degraded for this answer.
	hits, err := f.recall(ctx, query)
	switch {
	case errors.Is(err, local.ErrRecallNotReady):
		// Its own connection is being made: no news of GBrain, whose
		// state stays the shared truth on this answer as on every other.
		c.notes = append(c.notes, "GBrain recall is still connecting; its matches join the next searches.")
	case err != nil:
		c.gstate = GBrainDegraded
		f.opt.Log.Warn("GBrain recall failed; answering from the local catalog", "err", err)
	}
	seen := make(map[string]bool, len(l.ids))
	for _, id := range l.ids {
		seen[id] = true
	}
	me := c.cat.MachineID()
	for _, h := range hits {
		if seen[h.ProjectID] || h.MachineID != me || !ids.ValidProjectID(h.ProjectID) {
			continue
		}
		if !c.cat.Visible(h.ProjectID, c.pol) {
			continue
		}
		seen[h.ProjectID] = true
		l.ids = append(l.ids, h.ProjectID)
		l.reasons = append(l.reasons, []string{"GBrain recall: its project card matches the query"})
	}
}

// plainListing is the no-query listing for a workspace hint, built once
// per catalog revision and view. Records missing for longer than
// retainMissingDays leave it (they still resolve).
func (f *Frontend) plainListing(c *call, ws string) *listing {
	rev := c.cat.Revision()
	retain := time.Duration(c.cfg.Discovery.RetainMissingDays) * 24 * time.Hour
	now := f.opt.Now()
	key := plainKey{store: c.cat.StoreID(), rev: rev, view: c.pol.ViewKey(), ws: pathid.Key(ws), hour: now.Unix() / 3600}
	f.plainMu.Lock()
	l := f.plain[key]
	f.plainMu.Unlock()
	if l != nil {
		return l
	}
	if ws == "" {
		kept := c.cat.ListWhere(c.pol, func(a local.Availability, since time.Time) bool {
			return a != local.Missing || since.IsZero() || now.Sub(since) <= retain
		})
		l = &listing{ids: kept}
		movedLast(c, l)
	} else {
		l = f.applyWorkspace(c, f.plainListing(c, ""), ws, true)
	}
	if c.cat.Revision() == rev { // no reload ran meanwhile
		f.plainMu.Lock()
		if f.plain == nil || len(f.plain) >= maxPlain {
			f.plain = map[plainKey]*listing{}
		}
		f.plain[key] = l
		f.plainMu.Unlock()
	}
	return l
}

func (f *Frontend) recall(ctx context.Context, query string) ([]local.RecallHit, error) {
	ctx, cancel := context.WithTimeout(ctx, f.opt.RecallBudget)
	defer cancel()
	type result struct {
		hits []local.RecallHit
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
		if rr, ok := f.opt.Recall.(interface{ Ready() bool }); ok && !rr.Ready() {
			return nil, local.ErrRecallNotReady
		}
		return nil, fmt.Errorf("GBrain recall took longer than %s", f.opt.RecallBudget)
	}
}

// applyWorkspace marks the project that contains the workspace ("self") and
// the ones related to it (same repository, or named in its hint file), puts
// relatives first in a plain listing, and the workspace itself last: the
// caller already has it. It returns a new listing; l is not changed.
func (f *Frontend) applyWorkspace(c *call, l *listing, ws string, plain bool) *listing {
	if ws == "" {
		return l
	}
	self := f.selfProject(c, ws)
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
		if p := c.cat.GetLite(id); p != nil && related(p) {
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
	out := &listing{ids: make([]string, len(order)), reasons: make([][]string, len(order)), workspace: make([]string, len(order)), beyond: l.beyond}
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
func (f *Frontend) selfProject(c *call, ws string) *local.Project {
	rev := c.cat.Revision()
	key := plainKey{store: c.cat.StoreID(), rev: rev, view: c.pol.ViewKey(), ws: pathid.Key(ws)}
	f.plainMu.Lock()
	id, ok := f.self[key]
	f.plainMu.Unlock()
	if ok {
		if id == "" {
			return nil
		}
		return c.cat.Get(id)
	}
	canon, err := pathid.Canonical(ws)
	if err != nil {
		canon = ws
	}
	// The innermost project holding the workspace that this view may see:
	// walk up from the workspace, one lookup per folder.
	var self *local.Project
	for d := canon; ; {
		p := c.cat.Containing(d)
		if p == nil {
			break
		}
		if c.cat.Visible(p.ID, c.pol) {
			self = p
			break
		}
		parent := filepath.Dir(p.Root)
		if parent == p.Root {
			break
		}
		d = parent
	}
	if c.cat.Revision() == rev {
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

// movedLast puts every record whose index moved to a project that is
// present after all the others (R42): the live project is what an agent
// should take, whatever the old record's words match. The old record stays
// in the listing, last, with its movedTo, so an id held from before still
// leads somewhere; folding it away would hide that id and change totals
// and cursors. The order is otherwise kept.
func movedLast(c *call, l *listing) {
	var moved []int
	for i, id := range l.ids {
		if a, _, ok := c.cat.Listed(id); !ok || a == local.Present {
			continue
		}
		if p := c.cat.GetLite(id); p != nil && p.MovedTo != "" && c.cat.Present(p.MovedTo) {
			moved = append(moved, i)
		}
	}
	if len(moved) == 0 {
		return
	}
	isMoved := make([]bool, len(l.ids))
	for _, i := range moved {
		isMoved[i] = true
	}
	order := make([]int, 0, len(l.ids))
	for i := range l.ids {
		if !isMoved[i] {
			order = append(order, i)
		}
	}
	order = append(order, moved...)
	ids := make([]string, len(order))
	var reasons [][]string
	if l.reasons != nil {
		reasons = make([][]string, len(order))
	}
	for j, i := range order {
		ids[j] = l.ids[i]
		if reasons != nil {
			reasons[j] = l.reasons[i]
		}
	}
	l.ids, l.reasons = ids, reasons
}
