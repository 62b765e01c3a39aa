//go:build linux

package lifecycle

// The invariants, checked on every answer of the long-running serve, of
// the other serves and of the CLI twins, after every step and after every
// settle.

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
)

// ---- GBrain ------------------------------------------------------------------

// gbModel is the fake GBrain's switch and what each serve may say about it.
type gbModel struct {
	enabled bool
	mode    string // "up", "down" or "hung"
	// converged: serves whose answers were seen to follow the switch since
	// it last changed; until then a serve's answers without a recall in the
	// call may still show the state of its last connection check.
	converged map[string]bool
	// hungEnd: when the last hang of the fake ended. A gbrain process that
	// cgcat started during the hang still sleeps out the hang's start delay
	// (hungStart) after it: until it answers, GBrain has not answered that
	// connection, and degraded is the truth (R36).
	hungEnd time.Time
}

// hungStart is the start delay of a gbrain process started while the fake
// hangs (gbraintest.Control.StartDelayMs in setFake).
const hungStart = 30 * time.Second

func (g *gbModel) expected() string {
	switch {
	case !g.enabled:
		return "disabled"
	case g.mode == "up":
		return "ok"
	}
	return "degraded" // down or hung"
}

func (g *gbModel) switched()               { g.converged = map[string]bool{} }
func (g *gbModel) unconverged(name string) { delete(g.converged, name) }

// recallBudget is gbrain.recallBudgetMs in the config the test writes.
const recallBudget = 2 * time.Second

// allowed lists the gbrainState values an answer may carry (invariant f).
// GBrain is off the query path (issue 16): gbrainState is one shared
// record of the last connection check, which the process holding the
// projector lease makes at each round. So disabled is exact everywhere (the
// config is live); right after the fake is switched, any process — a serve
// or a CLI twin — may still tell the last check; a serve once seen to
// follow the switch must keep to it, and every serve must come round by the
// next settle.
func (g *gbModel) allowed(serve string, query bool) []string {
	want := g.expected()
	if want == "disabled" || serve != "" && g.converged[serve] {
		return []string{want}
	}
	return []string{"ok", "degraded"}
}

// ---- running processes ----------------------------------------------------

// cli runs a one-shot command with the config; long is for scans.
func (r *run) cli(long bool, args ...string) cliResult {
	r.stats.cli++
	timeout := 30 * time.Second
	if long {
		timeout = 120 * time.Second
	}
	if r.frozen() {
		// A new process must answer while another one is frozen (issue 11
		// asks 5 s of a new serve); past this bound it is killed and the
		// step goes on.
		timeout = 6 * time.Second
	}
	res := runCLI(cgcatBin, r.w.env, timeout, append(args, "--config", r.w.cfgPath)...)
	r.stats.cliTime += res.elapsed
	if strings.Contains(res.stderr, "panic:") || strings.Contains(res.stdout, "panic:") {
		r.fail("R39", "cli panicked: "+args[0], "%s", res)
	}
	return res
}

// cliAnswer runs `cgcat projects`/`resolve` with --json inside a lease
// watch and decodes the envelope.
func (r *run) cliAnswer(args ...string) (cliResult, answer, bool) {
	var res cliResult
	quiet := r.watch.quietCall(func() { res = r.cli(false, args...) })
	a := answer{who: "cli " + strings.Join(args, " "), raw: res.stdout + res.stderr, quiet: quiet, elapsed: res.elapsed}
	if r.frozen() {
		r.stats.frozenCLI = append(r.stats.frozenCLI, res.elapsed.Round(time.Millisecond))
	}
	env, ok := r.decodeCLI(res)
	a.env = env
	return res, a, ok
}

func (r *run) decodeCLI(res cliResult) (envelope, bool) {
	var env envelope
	if res.timedOut {
		what := "R22"
		if r.frozen() {
			what = "R39"
		}
		r.fail(what, "cli no answer: "+res.args[0], "the command did not answer in time (another process frozen: %v):\n%s", r.frozen(), res)
		return env, false
	}
	if err := json.Unmarshal([]byte(res.stdout), &env); err != nil {
		kind := "cli failed: " + res.args[0]
		if strings.Contains(res.stderr, "busy") {
			kind += " (store busy)"
		}
		r.fail("R22", kind, "`cgcat %s` gave no envelope (another process frozen: %v):\n%s", strings.Join(res.args, " "), r.frozen(), res)
		return env, false
	}
	return env, true
}

// checkCLIAnswer checks the envelope of an already run CLI twin.
func (r *run) checkCLIAnswer(res cliResult, query bool) {
	env, ok := r.decodeCLI(res)
	if !ok {
		return
	}
	a := answer{who: "cli " + strings.Join(res.args, " "), env: env, raw: res.stdout, query: query, elapsed: res.elapsed}
	r.checkAnswer(&a, false)
}

// serveCall calls a serve inside a lease watch; a failed call is a
// violation, and a dead main serve is restarted.
func (r *run) serveCall(s *serveProc, tool string, args map[string]any) (answer, bool) {
	var a answer
	var err error
	t0 := time.Now()
	quiet := r.watch.quietCall(func() { a, err = s.call(tool, args) })
	r.stats.serveTime += time.Since(t0)
	a.quiet, a.elapsed = quiet, time.Since(t0)
	_, a.query = args["query"]
	if err == nil {
		return a, true
	}
	if !s.alive() {
		r.fail("R22", "serve died", "serve %s exited (%v):\n%s", s.name, s.waitErr, s.stderr.String())
		if s == r.main {
			r.startMain()
		} else {
			r.extra = slices.DeleteFunc(r.extra, func(p *serveProc) bool { return p == s })
		}
		return a, false
	}
	kind := "call failed: " + tool
	if strings.Contains(err.Error(), "busy") {
		kind += " (store busy)"
	}
	if strings.Contains(err.Error(), "Retrying will not help") {
		kind += " (gave up)"
	}
	r.fail("R22", kind, "%v (another process frozen: %v)\nstderr tail:\n%.2000s", err, r.frozen(), s.stderr.String())
	return a, false
}

// ---- every answer -----------------------------------------------------------

var statuses = []string{"ok", "setup_required", "no_matches", "cursor_expired", "unknown_project", "record_changed", "missing", "not_available"}

func (r *run) serveName(a *answer) string {
	if rest, ok := strings.CutPrefix(a.who, "serve "); ok {
		return strings.Fields(rest)[0]
	}
	return ""
}

// checkAnswer holds for every answer, settled or not.
func (r *run) checkAnswer(a *answer, settled bool) {
	r.stats.answers++
	e := a.env
	if !slices.Contains(statuses, e.Status) {
		r.fail("R22", "unknown status", "%s: status %q%s", a.who, e.Status, r.staleNote(a.who))
	}
	// (f) gbrainState is the fake's switch. Degraded while the fake is up
	// can be honest: a recall or check that ran out of its budget on a
	// loaded machine. A CLI twin that took the whole recall budget may say
	// so; a serve that says so is no longer taken as following the switch,
	// and the next settle requires it to come back to ok within 15 s.
	serve := r.serveName(a)
	slowOK := e.GBrainState == "degraded" && r.gb.expected() == "ok"
	switch {
	case slowOK && serve != "" && r.gb.converged[serve]:
		r.gb.unconverged(serve)
	case slowOK && serve == "" && a.elapsed >= recallBudget:
		r.stats.slowDegraded++
	case !slices.Contains(r.gb.allowed(serve, a.query), e.GBrainState):
		allowed := r.gb.allowed(serve, a.query)
		kind := fmt.Sprintf("gbrainState %s while GBrain is %s on %s", e.GBrainState, r.gb.expected(), strings.Fields(a.who)[0])
		if a.query {
			kind += " query"
		} else {
			kind += " listing/resolve"
		}
		r.fail("f", kind, "%s (query %v, %s): gbrainState %q, want one of %v (GBrain enabled %v, fake %s)%s", a.who, a.query, a.elapsed.Round(time.Millisecond), e.GBrainState, allowed, r.gb.enabled, r.gb.mode, r.staleNote(a.who))
	}
	// catalogRevision never goes back in one serve's answers (R14: it grows
	// when the catalog changes; a serve follows what writers published).
	if serve != "" && e.CatalogRevision > 0 {
		switch last := r.lastRev[serve]; {
		case e.CatalogRevision < last.rev:
			r.fail("R14", "catalogRevision went back on "+strings.Fields(a.who)[0], "%s answers catalogRevision %d after answering %d at step %d%s", a.who, e.CatalogRevision, last.rev, last.step, r.staleNote(a.who))
		case e.CatalogRevision > last.rev:
			r.lastRev[serve] = revSeen{e.CatalogRevision, r.step}
		}
	}
	// (e) running only while a pass is in progress.
	if a.quiet {
		r.stats.quiet++
		if e.ScanState == "running" {
			r.fail("e", "running with no lease holder on "+strings.Fields(a.who)[0], "%s says scanState running, but no process held, took or tried to take dataDir/scan.lease during the call (coverage %q, message %q)%s", a.who, e.Coverage, e.Message, r.staleNote(a.who))
		}
	}
	// Words of a project that was never visible appear nowhere, unless a
	// record left at a place it had them is visible.
	for _, p := range r.m.projects {
		if p.everVisible {
			continue
		}
		for _, w := range p.words {
			if !p.mayShow(w) && strings.Contains(a.raw, w) {
				r.fail("a", "hidden project's words in an answer", "%s shows %q, a word of project #%d at %s that was never visible (hidden by %s): its name/description leaked%s\n%.1500s",
					a.who, w, p.key, r.rel(p.path), r.hiddenBy(p.path), r.staleNote(a.who)+r.cliNote(a.who), a.raw)
			}
		}
	}
	for _, p := range e.Projects {
		r.checkEntry(a, p)
		// R17: the text content shows each project's id and root, the
		// root byte for byte as projectPath.
		if a.text != "" && (!strings.Contains(a.text, p.ProjectID) || p.path() != "" && !strings.Contains(a.text, p.path())) {
			r.fail("R17", "text content differs from structured", "%s: the text content does not show %s with its projectPath %q byte for byte:\n%.1500s", a.who, p.ProjectID, p.path(), a.text)
		}
	}
}

func (r *run) hiddenBy(path string) string {
	if d := deniedBy(r.w.denySpelled(r.c), path); d != "" {
		return "deny root " + r.rel(d)
	}
	if !underAny(r.w.roots(r.c), path) {
		return "not under a discovery root"
	}
	if !underAny(r.w.shareRoots(r.c), path) {
		return "not under a sharing root"
	}
	return "a deny root through a symlink or alias"
}

// checkEntry holds for every project object of every answer.
func (r *run) checkEntry(a *answer, p project) {
	if how, gone := r.m.forgotten[p.ProjectID]; gone {
		r.fail("12.7", "removed id came back", "%s shows %s, removed by `cgcat %s` (root %s)%s", a.who, p.ProjectID, how, r.rel(r.m.idRoot[p.ProjectID]), r.staleNote(a.who))
	}
	path := p.path()
	if path == "" {
		if p.Handoff != nil {
			r.fail("R18", "handoff without path", "%s: %s has a handoff but no projectPath%s", a.who, p.ProjectID, r.staleNote(a.who))
		}
		if b := r.m.byID[p.ProjectID]; b != nil {
			vis, certain := r.visible(b.root)
			if certain && !vis {
				r.fail("R19", "hidden record shown without path", "%s shows %s (%q, %s) whose root %s is hidden from this view (%s): hidden records must be omitted entirely%s",
					a.who, p.ProjectID, p.Name, p.Availability, r.rel(b.root), r.hiddenBy(b.root), r.staleNote(a.who))
			}
			if certain && vis && hasMarker(b.root) && isCanonical(b.root) && a.env.Status != "record_changed" {
				r.fail("R19", "present project shown without path", "%s shows %s without projectPath (%s, why %q) although its root %s is visible, canonical and has its marker%s",
					a.who, p.ProjectID, p.Availability, p.Why, r.rel(b.root), r.staleNote(a.who))
			}
		}
		return
	}
	// (a) every path handed out.
	if !isCanonical(path) {
		r.fail("a", "path not canonical", "%s hands out %q for %s: not canonical%s", a.who, path, p.ProjectID, r.staleNote(a.who))
	}
	if !hasMarker(path) {
		r.fail("a", "path without marker", "%s hands out %s for %s: no .codegraph/codegraph.db there%s", a.who, r.rel(path), p.ProjectID, r.staleNote(a.who))
	}
	if vis, certain := r.visible(path); certain && !vis {
		r.fail("a", "path outside policy: "+r.hiddenByKind(path), "%s hands out %s for %s (%q): %s%s", a.who, r.rel(path), p.ProjectID, p.Name, r.hiddenBy(path), r.staleNote(a.who))
	}
	if p.Availability != "present" {
		r.fail("R19", "path with availability "+p.Availability, "%s: %s has projectPath %s but availability %q%s", a.who, p.ProjectID, r.rel(path), p.Availability, r.staleNote(a.who))
	}
	if p.Handoff != nil && p.Handoff.Arguments["projectPath"] != path {
		r.fail("R18", "handoff path differs", "%s: %s handoff %v, projectPath %s%s", a.who, p.ProjectID, p.Handoff.Arguments, path, r.staleNote(a.who))
	}
	if q := r.m.at(path); q != nil && !q.reached && r.rootOf(path) != "" {
		r.fail("R9", "project below maxDepth discovered", "%s lists %s at %s (depth %d), deeper than every maxDepth in force since it got there (now %d): a walk went past maxDepth, or used a stale one (R37)%s",
			a.who, p.ProjectID, r.rel(path), depthIn(r.rootOf(path), path), r.c.maxDepth, r.staleNote(a.who)+r.cliNote(a.who))
	}
	r.observe(a, p.ProjectID, path)
}

func (r *run) hiddenByKind(path string) string {
	s := r.hiddenBy(path)
	if strings.HasPrefix(s, "deny root ") {
		for _, d := range r.w.deny {
			if r.c.deny[d.key] && deniedBy([]string{d.spelled}, path) != "" {
				how := d.how
				if !within(resolveDeny(d.spelled), path) {
					how = "alias (bind mount) of " + d.key
				}
				return "deny root (" + how + ")"
			}
		}
	}
	return s
}

// staleServes names the serves started before the config last changed:
// their refreshes write the shared catalog that every answer, the CLI's
// too, shows.
func (r *run) staleServes() string {
	var stale []string
	for _, s := range append([]*serveProc{r.main}, r.extra...) {
		if s.started < r.lastConfig {
			stale = append(stale, fmt.Sprintf("%s (started at step %d)", s.name, s.started))
		}
	}
	if len(stale) == 0 {
		return ""
	}
	return fmt.Sprintf(" [serves started before the config last changed (step %d), whose refreshes write the shared catalog: %s]", r.lastConfig, strings.Join(stale, ", "))
}

// cliNote is staleServes for a CLI answer ("" for a serve's).
func (r *run) cliNote(who string) string {
	if strings.HasPrefix(who, "cli ") {
		return r.staleServes()
	}
	return ""
}

// staleNote says when the answering serve was started before the config
// file last changed: a serve must apply a changed config before its next
// answer (R37), and many symptoms of one that does not follow.
func (r *run) staleNote(who string) string {
	name := ""
	if rest, ok := strings.CutPrefix(who, "serve "); ok {
		name = strings.Fields(rest)[0]
	}
	if name == "" {
		return ""
	}
	for _, s := range append([]*serveProc{r.main}, r.extra...) {
		if s.name == name && s.started < r.lastConfig {
			return fmt.Sprintf(" [serve %s started at step %d; the config file changed since, last at step %d]", name, s.started, r.lastConfig)
		}
	}
	return ""
}

// observe checks id ↔ root against what is known and learns new bindings
// (invariants c and d).
func (r *run) observe(a *answer, id, path string) {
	if old, ok := r.m.idRoot[id]; ok && old != path {
		r.fail("c", "id changed its root", "%s hands out %s for %s, but that id was bound to %s%s", a.who, r.rel(path), id, r.rel(old), r.staleNote(a.who))
		return
	}
	if b := r.m.byRoot[path]; b != nil && b.id != id {
		r.fail("d", "two ids for one root", "%s hands out %s for root %s, which has id %s (learnt at step %d)%s", a.who, id, r.rel(path), b.id, b.created, r.staleNote(a.who))
		return
	}
	r.m.idRoot[id] = path
	if r.m.byRoot[path] == nil && !r.m.uncertain[id] {
		b := &binding{root: path, id: id, proj: -1, created: r.step}
		if q := r.m.at(path); q != nil {
			b.proj = q.key
		}
		r.m.byRoot[path] = b
		r.m.byID[id] = b
	}
}

// ---- the step's checks ----------------------------------------------------------

type listing struct {
	first   envelope
	entries []project
	byID    map[string]project
	ok      bool
}

// listAll pages through the plain listing of a serve.
func (r *run) listAll(s *serveProc, settled bool) listing {
	l := listing{byID: map[string]project{}}
	args := map[string]any{"limit": 50}
	paths := map[string]string{}
	for page := 0; page < 20; page++ {
		a, ok := r.serveCall(s, "local_codegraph_projects", args)
		if !ok {
			return l
		}
		r.checkAnswer(&a, settled)
		if page == 0 {
			l.first = a.env
		}
		for _, p := range a.env.Projects {
			if _, dup := l.byID[p.ProjectID]; dup {
				r.fail("d", "id twice in one listing", "serve %s lists %s twice", s.name, p.ProjectID)
			}
			if path := p.path(); path != "" {
				if other, dup := paths[path]; dup && other != p.ProjectID {
					r.fail("d", "root twice in one listing", "serve %s lists root %s as %s and %s", s.name, r.rel(path), other, p.ProjectID)
				}
				paths[path] = p.ProjectID
			}
			l.byID[p.ProjectID] = p
			l.entries = append(l.entries, p)
		}
		if a.env.NextCursor == nil {
			l.ok = true
			return l
		}
		args = map[string]any{"limit": 50, "cursor": *a.env.NextCursor}
	}
	r.fail("R20", "listing never ends", "serve %s: more than 20 pages of 50", s.name)
	return l
}

func (r *run) checkStep(settled bool) {
	if !r.main.alive() {
		r.fail("R22", "serve died", "main serve %s exited (%v):\n%s", r.main.name, r.main.waitErr, r.main.stderr.String())
		r.startMain()
	}
	l := r.listAll(r.main, settled)
	if l.ok {
		r.checkComplete(l, "serve "+r.main.name)
		if settled {
			r.checkSettledListing(l, "serve "+r.main.name)
		}
	}
	r.checkQuery(settled)
	r.checkResolves(settled)
	r.checkHeldCursor(settled)

	// The CLI twins.
	res, a, ok := r.cliAnswer("projects", "--json", "--limit", "50")
	if ok {
		r.checkAnswer(&a, settled)
		if res.code != 0 {
			r.fail("R22", "cli projects exit code", "%s", res)
		}
		cl := listing{first: a.env, entries: a.env.Projects, byID: map[string]project{}, ok: a.env.NextCursor == nil}
		for _, p := range a.env.Projects {
			cl.byID[p.ProjectID] = p
		}
		if cl.ok {
			r.checkComplete(cl, "cli projects")
			if settled {
				r.checkSettledListing(cl, "cli projects")
				if l.ok {
					r.sameListing(l, cl, "serve "+r.main.name, "cli projects")
				}
			}
		}
	}
	if settled {
		for _, s := range slices.Clone(r.extra) {
			el := r.listAll(s, true)
			if el.ok && l.ok {
				r.checkSettledListing(el, "serve "+s.name)
				r.sameListing(l, el, "serve "+r.main.name, "serve "+s.name)
			}
		}
		r.checkMoves()
		r.checkFakeCards()
	}
}

// heldCursor is a nextCursor taken from the main serve at one step and
// used at the next (R20).
type heldCursor struct {
	serve, cursor, view string
	first               []string // ids of the first page
	step                int
}

// viewKey names the caller's view as the config spells it: discovery roots,
// sharing roots, deny roots.
func (r *run) viewKey() string {
	return fmt.Sprintf("%q|%q|%q", r.w.roots(r.c), r.w.shareRoots(r.c), r.denyKeys())
}

// checkHeldCursor uses the cursor held since the last step, then takes a
// new one: a cursor from another process (the main serve restarted) or
// from before the caller's view changed answers cursor_expired (R20); a
// cursor that still applies continues its own snapshot (no id of the first
// page again).
func (r *run) checkHeldCursor(settled bool) {
	if h := r.held; h != nil {
		r.held = nil
		a, ok := r.serveCall(r.main, "local_codegraph_projects", map[string]any{"limit": 2, "cursor": h.cursor})
		if !ok {
			return
		}
		r.checkAnswer(&a, settled)
		r.stats.cursorsUsed++
		switch {
		case h.serve != r.main.name && a.env.Status != "cursor_expired":
			r.fail("R20", "cursor of another process accepted", "serve %s accepted a cursor of serve %s (taken at step %d): status %s with %d projects", r.main.name, h.serve, h.step, a.env.Status, len(a.env.Projects))
		case h.view != r.viewKey() && a.env.Status != "cursor_expired":
			r.fail("R20", "cursor accepted after the view changed", "serve %s accepted a cursor taken at step %d although the sharing view changed since (%s → %s): status %s with %d projects", r.main.name, h.step, h.view, r.viewKey(), a.env.Status, len(a.env.Projects))
		case a.env.Status == "ok":
			for _, p := range a.env.Projects {
				if slices.Contains(h.first, p.ProjectID) {
					r.fail("R20", "cursor page repeats the first page", "serve %s: the page after a cursor taken at step %d repeats %s of the first page %v: pages of one listing mix snapshots", r.main.name, h.step, p.ProjectID, h.first)
				}
			}
		}
	}
	a, ok := r.serveCall(r.main, "local_codegraph_projects", map[string]any{"limit": 2})
	if !ok {
		return
	}
	r.checkAnswer(&a, settled)
	if a.env.NextCursor == nil {
		return
	}
	h := &heldCursor{serve: r.main.name, cursor: *a.env.NextCursor, view: r.viewKey(), step: r.step}
	for _, p := range a.env.Projects {
		h.first = append(h.first, p.ProjectID)
	}
	r.held = h
}

// checkComplete: coverage "complete" ⇒ every project that stood unchanged,
// visible and within the limits since before the walk settings in force
// were first used is listed with its path (invariant b).
func (r *run) checkComplete(l listing, who string) {
	if l.first.Coverage != "complete" {
		return
	}
	r.stats.completeClaims++
	checked := false
	for _, p := range r.m.live() {
		since := r.firstKey[rootWalkKey(r.rootOf(p.path), r.c.maxDepth)]
		if !p.indexed || p.stableSince >= since || !r.withinLimits(p.path) {
			continue
		}
		if vis, certain := r.visible(p.path); !vis || !certain {
			continue
		}
		checked = true
		if !listedAt(l, p.path) {
			r.fail("b", "complete but a project is not listed", "%s says coverage complete, but project #%d at %s (depth %d, maxDepth %d), unchanged since step %d, before the walk settings in force were first used (step %d), is not listed (scanState %s, %d entries)%s",
				who, p.key, r.rel(p.path), depthIn(r.rootOf(p.path), p.path), r.c.maxDepth, p.stableSince, since, l.first.ScanState, len(l.entries), r.staleNote(who))
		}
	}
	if checked {
		r.stats.completeChecked++
	}
}

func listedAt(l listing, path string) bool {
	return slices.ContainsFunc(l.entries, func(p project) bool { return p.path() == path })
}

// checkSettledListing: after a settle, everything present and reachable is
// listed with its manifest's metadata, visible records whose marker went are
// listed as missing, and coverage says whether maxDepth cut something.
func (r *run) checkSettledListing(l listing, who string) {
	r.stats.checksAfterSettle++
	for _, p := range r.m.live() {
		if !p.indexed || !r.withinLimits(p.path) {
			continue
		}
		if vis, certain := r.visible(p.path); !vis || !certain {
			continue
		}
		r.stats.listedAfterSettle++
		i := slices.IndexFunc(l.entries, func(e project) bool { return e.path() == p.path })
		if i < 0 {
			r.fail("b", "settled: present project not listed", "%s after a settle does not list project #%d at %s (depth %d, maxDepth %d, %q)%s", who, p.key, r.rel(p.path), depthIn(r.rootOf(p.path), p.path), r.c.maxDepth, p.name, r.staleNote(who))
			continue
		}
		e := l.entries[i]
		if e.Name != p.name || e.Description != p.desc {
			r.fail("12.9", "settled: stale metadata", "%s after a settle shows #%d at %s as %q %q; its package.json says %q %q%s", who, p.key, r.rel(p.path), e.Name, e.Description, p.name, p.desc, r.staleNote(who))
		}
		// R6, issue 12 item 8: a hint file that does not parse is shown
		// with the project, and no more once it is mended.
		shown := slices.ContainsFunc(e.Warnings, func(w string) bool { return strings.Contains(w, "project.json") })
		if p.badHint || shown {
			r.stats.hintsChecked++
		}
		if shown != p.badHint {
			r.fail("12.8", fmt.Sprintf("settled: hint problem shown %v, want %v", shown, p.badHint), "%s after a settle shows #%d at %s with warnings %q; its codegraph/project.json parses: %v%s", who, p.key, r.rel(p.path), e.Warnings, !p.badHint, r.staleNote(who))
		}
	}
	for _, b := range r.m.bindings() {
		if hasMarker(b.root) {
			continue
		}
		if vis, certain := r.visible(b.root); !vis || !certain {
			continue
		}
		e, ok := l.byID[b.id]
		switch {
		case !ok:
			r.fail("R13", "settled: missing record not listed", "%s after a settle does not list %s, whose root %s lost its marker (a missing record stays listed for discovery.retainMissingDays)%s", who, b.id, r.rel(b.root), r.staleNote(who))
		case e.Availability != "missing" || e.ProjectPath != nil:
			r.fail("R13", "settled: gone project not missing", "%s after a settle shows %s (root %s, no marker) as %s with path %q%s", who, b.id, r.rel(b.root), e.Availability, e.path(), r.staleNote(who))
		}
	}
	want, certain, counted := r.expectedCoverage()
	if certain && l.first.Coverage != want {
		kind := "settled: coverage " + l.first.Coverage + " want " + want
		r.fail("12.2", kind, "%s after a settle says coverage %q; want %q (maxDepth %d cuts %d shared, undenied directories: %v)%s", who, l.first.Coverage, want, r.c.maxDepth, len(counted), rels(r.w, head(counted, 5)), r.staleNote(who))
	}
}

func head(xs []string, n int) []string {
	if len(xs) > n {
		return xs[:n]
	}
	return xs
}

// expectedCoverage is what a finished pass over the config in force must
// report: partial when maxDepth cut a shared, undenied directory, complete
// when it cut none; unknown when it cut only unshared ones.
func (r *run) expectedCoverage() (want string, certain bool, counted []string) {
	c, unc := depthGaps(r.w.roots(r.c), r.w.shareRoots(r.c), r.w.denySpelled(r.c), r.c.maxDepth)
	for _, g := range c {
		if _, sure := r.visible(g); sure {
			counted = append(counted, g)
		} else {
			unc = append(unc, g)
		}
	}
	switch {
	case len(counted) > 0:
		return "partial", true, counted
	case len(unc) > 0:
		return "", false, nil
	}
	return "complete", true, nil
}

// sameListing: after a settle two answerers agree on every visible record.
func (r *run) sameListing(a, b listing, wa, wb string) {
	key := func(p project) string { return p.ProjectID + " " + p.path() + " " + p.Availability }
	var ka, kb []string
	for _, p := range a.entries {
		ka = append(ka, key(p))
	}
	for _, p := range b.entries {
		kb = append(kb, key(p))
	}
	slices.Sort(ka)
	slices.Sort(kb)
	if !slices.Equal(ka, kb) {
		r.fail("R27", "settled: processes disagree", "after a settle %s and %s list different records:\n%s: %v\n%s: %v", wa, wb, wa, ka, wb, kb)
	}
}

// checkQuery searches the word of one project; after a settle a visible,
// present, reachable one must be found.
func (r *run) checkQuery(settled bool) {
	ps := r.m.live()
	if len(ps) == 0 {
		return
	}
	p := ps[r.crng.IntN(len(ps))]
	// Half the time probe a project that was never visible: its words must
	// not come back.
	var hidden []*proj
	for _, q := range ps {
		if !q.mayShow(q.word()) {
			hidden = append(hidden, q)
		}
	}
	if len(hidden) > 0 && r.crng.IntN(2) == 0 {
		p = hidden[r.crng.IntN(len(hidden))]
	}
	a, ok := r.serveCall(r.main, "local_codegraph_projects", map[string]any{"query": p.word(), "limit": 10})
	if !ok {
		return
	}
	r.checkAnswer(&a, settled)
	vis, certain := r.visible(p.path)
	if settled && vis && certain && p.indexed && r.withinLimits(p.path) &&
		!slices.ContainsFunc(a.env.Projects, func(e project) bool { return e.path() == p.path }) {
		r.fail("R16", "settled: search misses a project", "after a settle a search for %q (the description of #%d at %s) does not find it: status %s, %d results%s", p.word(), p.key, r.rel(p.path), a.env.Status, len(a.env.Projects), r.staleNote(a.who))
	}
}

// checkResolves resolves known ids on the main serve (a sample, or all
// after a settle) and one on the CLI.
func (r *run) checkResolves(settled bool) {
	bs := r.m.bindings()
	r.crng.Shuffle(len(bs), func(i, j int) { bs[i], bs[j] = bs[j], bs[i] })
	n := min(len(bs), 4)
	if settled {
		n = len(bs)
	}
	for _, b := range bs[:n] {
		a, ok := r.serveCall(r.main, "local_codegraph_resolve", map[string]any{"projectId": b.id})
		if ok {
			r.checkResolve(&a, b.id, settled)
			if settled {
				r.checkRevision(b, &a)
			}
		}
	}
	var gone []string
	for id := range r.m.forgotten {
		gone = append(gone, id)
	}
	for id := range r.m.uncertain {
		gone = append(gone, id)
	}
	slices.Sort(gone)
	if len(gone) > 0 {
		id := gone[r.crng.IntN(len(gone))]
		if a, ok := r.serveCall(r.main, "local_codegraph_resolve", map[string]any{"projectId": id}); ok {
			r.checkResolve(&a, id, settled)
		}
	}
	cliN := 1
	if settled {
		cliN = 3
	}
	if r.frozen() {
		cliN = 0 // one CLI answer per frozen step (the listing) is enough
	}
	for i := 0; i < cliN && i < len(bs); i++ {
		id := bs[r.crng.IntN(len(bs))].id
		if i == 0 && len(gone) > 0 && r.crng.IntN(3) == 0 {
			id = gone[r.crng.IntN(len(gone))]
		}
		res, a, ok := r.cliAnswer("resolve", id, "--json")
		if !ok {
			continue
		}
		if (a.env.Status == "ok") != (res.code == 0) {
			r.fail("R21", "cli resolve exit code", "status %s but exit %d", a.env.Status, res.code)
		}
		r.checkResolve(&a, id, settled)
	}
}

// checkResolve: resolve is exact at every step, because it re-checks the
// root live (R19, R21).
func (r *run) checkResolve(a *answer, id string, settled bool) {
	r.stats.resolves++
	r.checkAnswer(a, settled)
	e := a.env
	if how, gone := r.m.forgotten[id]; gone {
		if e.Status != "unknown_project" || len(e.Projects) != 0 {
			r.fail("12.7", "removed id resolves", "%s: %s was removed by `cgcat %s` but resolves %s with %d projects%s", a.who, id, how, e.Status, len(e.Projects), r.staleNote(a.who))
		}
		return
	}
	b := r.m.byID[id]
	if b == nil { // uncertain: pruned or not
		return
	}
	vis, certain := r.visible(b.root)
	var want string
	switch {
	case !certain:
		return
	case !vis:
		want = "not_available"
	case hasMarker(b.root) && isCanonical(b.root):
		want = "ok"
	default:
		want = "missing"
	}
	if e.Status != want {
		r.fail("R21", "resolve "+e.Status+" want "+want, "%s: %s (root %s, marker %v, visible %v) resolves %q, want %q: %s%s", a.who, id, r.rel(b.root), hasMarker(b.root), vis, e.Status, want, e.Message, r.staleNote(a.who))
		return
	}
	switch want {
	case "not_available":
		if len(e.Projects) != 0 {
			r.fail("R21", "not_available leaks the record", "%s: %s not_available but shows %d projects%s", a.who, id, len(e.Projects), r.staleNote(a.who))
		}
	case "ok":
		if len(e.Projects) != 1 || e.Projects[0].ProjectID != id || e.Projects[0].path() != b.root {
			r.fail("R21", "resolve ok with wrong record", "%s: %s resolves ok but %+v (want root %s)%s", a.who, id, e.Projects, r.rel(b.root), r.staleNote(a.who))
		}
	case "missing":
		if len(e.Projects) != 1 || e.Projects[0].ProjectID != id || e.Projects[0].ProjectPath != nil {
			r.fail("R21", "resolve missing with wrong record", "%s: %s resolves missing but %+v%s", a.who, id, e.Projects, r.staleNote(a.who))
		}
	}
}

// checkRevision: after a settle, a present record whose stable metadata
// (its manifest's name or description) changed since the last settle has
// a greater recordRevision (R14), and a resolve that expects the old
// revision answers record_changed with the current record, without path
// or handoff (R21). a is the settled resolve of b.id on the main serve.
func (r *run) checkRevision(b *binding, a *answer) {
	e := a.env
	if e.Status != "ok" || len(e.Projects) != 1 || e.Projects[0].ProjectID != b.id {
		return
	}
	p := e.Projects[0]
	prev, prevName, prevDesc := b.rev, b.revName, b.revDesc
	b.rev, b.revName, b.revDesc, b.revSettle = p.RecordRevision, p.Name, p.Description, r.step
	if prev == 0 || p.Name == prevName && p.Description == prevDesc {
		return
	}
	r.stats.revChecked++
	if p.RecordRevision <= prev {
		r.fail("R14", "metadata changed, recordRevision did not grow", "%s: %s (root %s) was %q %q at revision %d; after a settle it is %q %q at revision %d: recordRevision must grow when stable metadata changes%s",
			a.who, b.id, r.rel(b.root), prevName, prevDesc, prev, p.Name, p.Description, p.RecordRevision, r.staleNote(a.who))
		return
	}
	c, ok := r.serveCall(r.main, "local_codegraph_resolve", map[string]any{"projectId": b.id, "expectedRecordRevision": prev})
	if !ok {
		return
	}
	r.checkAnswer(&c, true)
	if c.env.Status != "record_changed" || len(c.env.Projects) != 1 || c.env.Projects[0].ProjectID != b.id ||
		c.env.Projects[0].ProjectPath != nil || c.env.Projects[0].Handoff != nil || c.env.Projects[0].RecordRevision != p.RecordRevision {
		r.fail("R21", "stale expectedRecordRevision not record_changed", "%s: resolve of %s with expectedRecordRevision %d (now %d) answers %s with %+v; want record_changed with the current record, no path, no handoff%s",
			c.who, b.id, prev, p.RecordRevision, c.env.Status, c.env.Projects, r.staleNote(c.who))
	}
	c, ok = r.serveCall(r.main, "local_codegraph_resolve", map[string]any{"projectId": b.id, "expectedRecordRevision": p.RecordRevision})
	if !ok {
		return
	}
	r.checkAnswer(&c, true)
	if c.env.Status != "ok" || len(c.env.Projects) != 1 || c.env.Projects[0].path() != b.root {
		r.fail("R21", "current expectedRecordRevision not ok", "%s: resolve of %s with its current expectedRecordRevision %d answers %s with %+v; want ok with root %s%s",
			c.who, b.id, p.RecordRevision, c.env.Status, c.env.Projects, r.rel(b.root), r.staleNote(c.who))
	}
}

// checkMoves: after a settle, the old id of a moved project resolves
// missing with movedTo leading to its new id (invariant c, issue 12 item
// 6), and a search ranks the present record before the ghost (item 7).
func (r *run) checkMoves() {
	for _, b := range r.m.bindings() {
		p := r.m.projects[b.proj]
		if b.proj < 0 || p == nil || p.gone || !p.indexed || p.path == b.root || hasMarker(b.root) || !b.seen {
			continue
		}
		if vis, certain := r.visible(b.root); !vis || !certain {
			continue
		}
		if vis, certain := r.visible(p.path); !vis || !certain || !r.withinLimits(p.path) {
			continue
		}
		nb := r.m.byRoot[p.path]
		if nb == nil || nb.proj != p.key || nb.created < p.arrivedAt {
			continue // the new place had a record before (a move back): movedTo is not specified
		}
		if id, ok := markerID(p.path); !ok || id != b.markerID {
			continue // re-indexed since: another database file
		}
		r.stats.movedChecked++
		chain := []string{b.id}
		cur := b.id
		alias := false
		for hop := 0; hop < 8 && cur != nb.id; hop++ {
			a, ok := r.serveCall(r.main, "local_codegraph_resolve", map[string]any{"projectId": cur})
			if !ok {
				return
			}
			r.checkAnswer(&a, true)
			// A bind mount shows the directory the project moved into
			// under a second path as well (code/mirrorN is code/private):
			// each path is a root holding the moved index, and a record of
			// its own (R14: one record per canonical root), and movedTo
			// may lead to either (R38: a new root with the identity of a
			// missing record). The one it leads to must be that very
			// directory, present.
			if hop > 0 && a.env.Status == "ok" && len(a.env.Projects) == 1 && sameDir(a.env.Projects[0].path(), p.path) {
				alias = true
				r.stats.movedToAlias++
				break
			}
			if hop == 0 && a.env.Status != "missing" {
				r.fail("c", "moved: old id not missing", "%s moved from %s to %s; its old id %s resolves %s%s", fmt.Sprintf("#%d", p.key), r.rel(b.root), r.rel(p.path), b.id, a.env.Status, r.staleNote(a.who))
				break
			}
			if len(a.env.Projects) != 1 || a.env.Projects[0].MovedTo == "" {
				r.fail("c", "moved: no movedTo", "project #%d moved from %s to %s (new id %s); resolve of %s answers %s without movedTo (chain %v)%s", p.key, r.rel(b.root), r.rel(p.path), nb.id, cur, a.env.Status, chain, r.chainNote(chain))
				break
			}
			cur = a.env.Projects[0].MovedTo
			chain = append(chain, cur)
		}
		if cur != nb.id && !alias && len(chain) > 1 {
			r.fail("c", "moved: movedTo leads elsewhere", "project #%d moved from %s to %s: movedTo chain %v does not reach its new id %s%s", p.key, r.rel(b.root), r.rel(p.path), chain, nb.id, r.chainNote(chain))
		}
		// Among equal matches, present ranks first.
		a, ok := r.serveCall(r.main, "local_codegraph_projects", map[string]any{"query": p.word(), "limit": 10})
		if !ok {
			continue
		}
		r.checkAnswer(&a, true)
		iNew := slices.IndexFunc(a.env.Projects, func(e project) bool { return e.ProjectID == nb.id })
		iOld := slices.IndexFunc(a.env.Projects, func(e project) bool { return e.ProjectID == b.id })
		switch {
		case iNew < 0:
			r.fail("R16", "settled: search misses a moved project", "after a settle a search for %q (#%d, moved from %s to %s) does not find its present record %s (the old one is at %d)%s", p.word(), p.key, r.rel(b.root), r.rel(p.path), nb.id, iOld, r.staleNote(a.who))
		case iOld >= 0 && iOld < iNew:
			r.fail("12.7", "ghost ranks before the moved project", "search %q: the missing old record %s at position %d, the present one %s at %d (equal matches: present first)", p.word(), b.id, iOld, nb.id, iNew)
		}
	}
}

// chainNote says, for each id of a movedTo chain, what the model learnt of
// it and what resolve answers for it now (for a violation's message).
func (r *run) chainNote(chain []string) string {
	var b strings.Builder
	for _, id := range chain {
		fmt.Fprintf(&b, "\n  %s: ", id)
		if root, ok := r.m.idRoot[id]; ok {
			fmt.Fprintf(&b, "seen with path %s", r.rel(root))
		} else {
			b.WriteString("never seen with a path")
		}
		if bd := r.m.byID[id]; bd != nil {
			fmt.Fprintf(&b, ", bound to %s (project #%d, learnt at step %d)", r.rel(bd.root), bd.proj, bd.created)
		}
		if q := r.m.at(r.m.idRoot[id]); q != nil {
			fmt.Fprintf(&b, ", project #%d stands there now", q.key)
		}
		if a, err := r.main.call("local_codegraph_resolve", map[string]any{"projectId": id}); err == nil && len(a.env.Projects) == 1 {
			e := a.env.Projects[0]
			fmt.Fprintf(&b, "; resolves %s: path %q, availability %s, movedTo %q, why %q", a.env.Status, e.path(), e.Availability, e.MovedTo, e.Why)
		}
	}
	return b.String()
}

// checkFakeCards: no card in the fake GBrain carries a word of a project
// that was never visible.
func (r *run) checkFakeCards() {
	b, err := os.ReadFile(r.fake.StatePath)
	if err != nil {
		return
	}
	for _, p := range r.m.projects {
		if p.everVisible {
			continue
		}
		for _, w := range p.words {
			if !p.mayShow(w) && strings.Contains(string(b), w) {
				r.fail("a", "hidden project in a GBrain card", "the fake GBrain holds %q, a word of project #%d at %s that was never visible (%s)", w, p.key, r.rel(p.path), r.hiddenBy(p.path))
			}
		}
	}
}

// checkDoctor: after a settle, `cgcat doctor --json` finds nothing broken in
// the config, roots, data dir, store and leases (R26, R39: kills never
// leave a damaged store), tells the same coverage as the answers (R36),
// and prints no gap inside a deny root (issue 11 item 10).
func (r *run) checkDoctor() {
	res := r.cli(false, "doctor", "--json")
	var rep struct {
		Sections []struct {
			Title  string `json:"title"`
			Checks []struct {
				Status string   `json:"status"`
				What   string   `json:"what"`
				Notes  []string `json:"notes"`
			} `json:"checks"`
		} `json:"sections"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &rep); err != nil {
		r.fail("R26", "doctor --json unreadable", "%v\n%s", err, res)
		return
	}
	r.stats.doctors++
	want, certain, _ := r.expectedCoverage()
	local := map[string]bool{"config": true, "roots": true, "data dir": true, "published catalog": true, "store": true, "leases": true}
	for _, s := range rep.Sections {
		if !local[s.Title] {
			continue
		}
		for _, c := range s.Checks {
			if c.Status == "fail" {
				r.fail("R26", "doctor fails after a settle: "+s.Title, "`cgcat doctor` after a settle: %s: %s %s", s.Title, c.Status, c.What)
			}
			if s.Title != "store" || !strings.HasPrefix(c.What, "last scan pass finished") {
				continue
			}
			if certain && !strings.Contains(c.What, "coverage "+want) {
				r.fail("12.2", "doctor coverage differs", "`cgcat doctor` after a settle says %q; want coverage %s", c.What, want)
			}
			for _, n := range c.Notes {
				if path, ok := strings.CutPrefix(n, "not covered: "); ok {
					if d := deniedBy(r.w.denySpelled(r.c), path[:max(0, strings.Index(path, " ("))]); d != "" {
						r.fail("11.10", "doctor prints a gap inside a deny root", "`cgcat doctor` prints %q, inside deny root %s", n, r.rel(d))
					}
				}
			}
		}
	}
}

// retractBound is how long after a settle the projector's lease holder may
// take to retract the cards of hidden or forgotten records: a full round
// runs every gbrain.checkSeconds (3 s here), and a round that failed while
// GBrain was down retries with a backoff.
const retractBound = 30 * time.Second

// checkRetracted: after a settle, with GBrain enabled and up, no live card
// in the fake GBrain belongs to a record that is forgotten or whose root
// is hidden for certain (denied, unshared, outside the discovery roots)
// under the config in force (R38, R40, issue 11 item 7: hidden projects'
// cards are retracted on the next sync).
func (r *run) checkRetracted() {
	if !r.gb.enabled || r.gb.mode != "up" {
		return
	}
	want := map[string]string{} // lower-case id → why its card must go
	for id, how := range r.m.forgotten {
		want[strings.ToLower(id)] = "removed by `cgcat " + how + "`"
	}
	for _, b := range r.m.bindings() {
		if vis, certain := r.visible(b.root); certain && !vis {
			want[strings.ToLower(b.id)] = "root " + r.rel(b.root) + " hidden: " + r.hiddenBy(b.root)
		}
	}
	if len(want) == 0 {
		return
	}
	live := func() []string {
		var out []string
		for _, pg := range r.fake.Pages(r.t) {
			if pg.DeletedAt != "" {
				continue
			}
			slug := strings.ToLower(pg.Slug)
			id := slug[strings.LastIndex(slug, "/")+1:]
			if why, ok := want[id]; ok {
				out = append(out, fmt.Sprintf("%s (%s)", pg.Slug, why))
			}
		}
		slices.Sort(out)
		return out
	}
	// The bound counts from when GBrain answers again: calls the fake
	// received during its last hang sleep out the hang's delay after it
	// ended (uncancellable, as a slow real server's would), and a stdio
	// server busy with them answers nothing else meanwhile.
	from := time.Now()
	if free := r.gb.hungEnd.Add(hungStart); free.After(from) {
		from = free
	}
	left := live()
	for len(left) > 0 && time.Since(from) < retractBound {
		time.Sleep(250 * time.Millisecond)
		left = live()
	}
	r.stats.retractChecks++
	if len(left) > 0 {
		// What cgcat itself says of GBrain and of those cards.
		status := r.cli(false, "gbrain", "status", "--json")
		plan := r.cli(false, "gbrain", "sync", "--full", "--dry-run", "--json")
		errTail := r.main.stderr.String()
		if len(errTail) > 3000 {
			errTail = errTail[len(errTail)-3000:]
		}
		r.fail("R40", "hidden or forgotten record's card not retracted", "%s after a settle with GBrain up (and answering again after its last hang), %d cards of hidden or forgotten records are still live in GBrain: %v%s\n`cgcat gbrain status --json`:\n%.3000s\n`cgcat gbrain sync --full --dry-run --json`:\n%.4000s\nmain serve %s stderr tail:\n%s",
			retractBound, len(left), head(left, 6), r.staleServes(), status.stdout+status.stderr, plan.stdout+plan.stderr, r.main.name, errTail)
	}
}

// checkWord is a word of some project, sampled for a check.
func (r *run) checkWord() string {
	ps := r.m.live()
	if len(ps) == 0 {
		return "nothing"
	}
	return ps[r.crng.IntN(len(ps))].word()
}

// ---- settle ----------------------------------------------------------------

type scanSummary struct {
	Finished bool   `json:"finished"`
	Coverage string `json:"coverage"`
	Gaps     []struct {
		Path string `json:"path"`
		Why  string `json:"why"`
	} `json:"gaps"`
	GapCount int `json:"gapCount"`
}

// settle lets every process run, then runs two full passes (the first may
// finish a pass begun before the last change) and checks everything that
// must hold once the catalog has caught up.
func (r *run) settle() {
	t0 := time.Now()
	defer func() { r.stats.settleTime += time.Since(t0) }()
	r.stats.settles++
	r.lastSettle = r.step
	r.thaw()
	for _, s := range r.scans {
		select {
		case <-s.done:
		case <-time.After(60 * time.Second):
			r.fail("R10", "background scan never finished", "a cgcat scan ran for over 60 s on a tree of %d projects:\n%s", len(r.m.live()), s.out.String())
			s.kill()
		}
	}
	r.reapScans()
	var sum scanSummary
	for i := 0; i < 2; i++ {
		res := r.cli(true, "scan", "--json")
		if res.code != 0 {
			r.fail("R10", "settle scan failed", "%s", res)
			r.checkStep(false)
			return
		}
		if err := json.Unmarshal([]byte(res.stdout), &sum); err != nil {
			r.fail("R10", "scan --json unreadable", "%v\n%s", err, res)
		}
	}
	r.log("settled: scan says coverage %s, %d gaps", sum.Coverage, sum.GapCount)
	if !sum.Finished {
		r.fail("R10", "scan did not finish a pass", "`cgcat scan` returned with finished=false")
	}
	want, certain, counted := r.expectedCoverage()
	if certain && sum.Coverage != want {
		r.fail("12.2", "scan coverage "+sum.Coverage+" want "+want, "`cgcat scan --json` says coverage %q, want %q (maxDepth %d cuts %v)", sum.Coverage, want, r.c.maxDepth, rels(r.w, head(counted, 5)))
	}
	if certain && want == "partial" && !slices.ContainsFunc(sum.Gaps, func(g struct {
		Path string `json:"path"`
		Why  string `json:"why"`
	}) bool {
		return strings.Contains(g.Why, "maxDepth")
	}) {
		r.fail("12.2", "depth gap not named", "maxDepth %d cuts %d directories (%v) but no gap's why names maxDepth: %+v", r.c.maxDepth, len(counted), rels(r.w, head(counted, 3)), sum.Gaps)
	}
	for _, g := range sum.Gaps {
		if d := deniedBy(r.w.denySpelled(r.c), g.Path); d != "" {
			r.fail("11.10", "gap inside a deny root printed", "`cgcat scan --json` reports a gap %s inside deny root %s (%s)", r.rel(g.Path), r.rel(d), g.Why)
		}
	}
	r.gbConverge()
	r.awaitFollowing() // coverage complete also needs the watcher to follow the disk (live_test.go)
	r.checkStep(true)
	r.checkDoctor()
	r.checkRetracted()
	// What the store now knows of each present record: its marker's file.
	// Only a root the settle's passes walked had its database read again: a
	// record outside the discovery roots or below maxDepth keeps the
	// identity it was last scanned with.
	for _, b := range r.m.bindings() {
		if p := r.m.at(b.root); p != nil && p.key == b.proj && p.indexed && r.withinLimits(b.root) {
			if id, ok := markerID(b.root); ok {
				b.markerID, b.seen = id, true
			}
		}
	}
}

// gbConverge: each serve not yet seen to follow the GBrain switch must,
// within 15 s, say the switch's state on a query and on a plain listing.
func (r *run) gbConverge() {
	serves := append([]*serveProc{r.main}, r.extra...)
	if r.gb.converged == nil {
		r.gb.converged = map[string]bool{}
	}
	for _, s := range serves {
		if r.gb.converged[s.name] {
			continue
		}
		want := r.gb.expected()
		t0 := time.Now()
		bound := 15 * time.Second
		// A gbrain process started during the last hang answers only once
		// its start delay is over: the 15 s count from then.
		if late := time.Until(r.gb.hungEnd.Add(hungStart + 15*time.Second)); late > bound {
			bound = late
		}
		if r.byKind["f|serve never follows gbrain switch to "+want] != nil {
			bound = 2 * time.Second // already reported: do not wait the full bound again
		}
		// Both a query (its recall checks the connection) and a plain
		// listing must come to say the switch's state.
		gotQ, gotL := "", ""
		for time.Since(t0) < bound {
			q, errQ := s.call("local_codegraph_projects", map[string]any{"query": r.checkWord(), "limit": 1})
			l, errL := s.call("local_codegraph_projects", map[string]any{"limit": 1})
			if errQ != nil || errL != nil {
				break
			}
			if gotQ, gotL = q.env.GBrainState, l.env.GBrainState; gotQ == want && gotL == want {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if gotQ != want || gotL != want {
			errTail := s.stderr.String()
			if len(errTail) > 1500 {
				errTail = errTail[len(errTail)-1500:]
			}
			r.fail("f", "serve never follows gbrain switch to "+want, "serve %s: %s after GBrain became %s, a query says gbrainState %q and the plain listing %q%s\nstderr tail:\n%s",
				s.name, bound, want, gotQ, gotL, r.staleNote("serve "+s.name), errTail)
		} else {
			r.stats.gbConverge = append(r.stats.gbConverge, time.Since(t0).Round(time.Millisecond))
		}
		r.gb.converged[s.name] = true
	}
	// The CLI twins read the same shared record: once the serves follow
	// the switch, a new process says the same.
	if _, a, ok := r.cliAnswer("projects", "--json", "--limit", "1"); ok && a.env.GBrainState != r.gb.expected() {
		r.fail("f", "cli does not follow gbrain switch to "+r.gb.expected(), "cli projects after the serves followed the switch: gbrainState %q, want %q", a.env.GBrainState, r.gb.expected())
	}
}
