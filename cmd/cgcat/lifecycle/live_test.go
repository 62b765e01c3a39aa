//go:build linux

package lifecycle

// The catalog follows the disk (issue 22, R42): after every step that
// made, deleted, moved or re-indexed projects, each change that is certain
// to be visible under the config in force must show in the answers of
// every serve and of a CLI run within liveDeadline, with no refresh asked
// (the config's refreshIntervalSeconds is an hour: only file events can
// bring it). The deadline is one the test polls against, generous for a
// loaded 2-core machine; the latencies go to the log and the benchmark.
// Bulk creations (an archive unpacked) and event storms past the watcher's
// bound (CGCAT_WATCH_QUEUE, set small in the world's environment, so the
// watcher overflows and walks everything again) come at random steps.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/cgcat/cgcat/local/config"
	"github.com/cgcat/cgcat/local/refresh"
)

// liveDeadline bounds how long a change may take to show everywhere.
const liveDeadline = 30 * time.Second

// watchQueue is CGCAT_WATCH_QUEUE in the world: a storm of more new
// directories than this overflows the watcher.
const watchQueue = 24

// placeState is where a project stands, for the live oracle.
type placeState struct {
	path    string
	indexed bool
}

// liveSnapshot is every live project's place.
func (r *run) liveSnapshot() map[int]placeState {
	out := map[int]placeState{}
	for _, p := range r.m.live() {
		out[p.key] = placeState{p.path, p.indexed}
	}
	return out
}

// liveExpect is one change every answer must show.
type liveExpect struct {
	word    string // the project's unique word: the query
	path    string
	present bool // present at path, or not present there
	what    string
}

// certain reports whether path is shown under the config in force, for
// sure (visible, within the walk's limits).
func (r *run) certainlyShown(path string) bool {
	vis, certain := r.visible(path)
	return vis && certain && r.withinLimits(path)
}

// checkLive derives what the step changed from the snapshot taken before
// it and waits until every answer shows it.
func (r *run) checkLive(op string, before map[int]placeState) {
	var exp []liveExpect
	for _, p := range r.m.projects {
		was, had := before[p.key]
		now := placeState{p.path, p.indexed && !p.gone}
		if had && was == now {
			continue
		}
		if had && was.indexed && (p.gone || was.path != p.path || !p.indexed) && r.certainlyShown(was.path) {
			exp = append(exp, liveExpect{word: p.word(), path: was.path, present: false, what: fmt.Sprintf("#%d left %s", p.key, r.rel(was.path))})
		}
		if !p.gone && p.indexed && (!had || was != now) && r.certainlyShown(p.path) {
			exp = append(exp, liveExpect{word: p.word(), path: p.path, present: true, what: fmt.Sprintf("#%d at %s", p.key, r.rel(p.path))})
		}
	}
	r.stormOverflowed()
	if len(exp) == 0 || r.frozen() {
		return
	}
	r.awaitLive(op, exp)
}

// awaitLive polls every serve and a CLI run until each shows exp.
func (r *run) awaitLive(op string, exp []liveExpect) {
	start := time.Now()
	deadline := start.Add(liveDeadline)
	done := map[string]bool{} // who + expectation index
	whos := []*serveProc{r.main}
	for _, p := range r.extra {
		if !p.frozen && p.alive() {
			whos = append(whos, p)
		}
	}
	for {
		pending := 0
		var last string
		for i, e := range exp {
			for _, p := range whos {
				key := fmt.Sprintf("%s/%d", p.name, i)
				if done[key] {
					continue
				}
				a, err := p.call("local_codegraph_projects", map[string]any{"query": e.word, "limit": 50})
				if err == nil && shows(a.env, e) {
					done[key] = true
					r.stats.liveLatency = append(r.stats.liveLatency, time.Since(start))
					continue
				}
				pending++
				last = fmt.Sprintf("serve %s: %s", p.name, brief(a.env))
			}
			key := fmt.Sprintf("cli/%d", i)
			if done[key] {
				continue
			}
			res := runCLI(cgcatBin, r.w.env, 30*time.Second, "projects", e.word, "--json", "--limit", "50", "--config", r.w.cfgPath)
			if env, ok := r.decodeCLI(res); ok && shows(env, e) {
				done[key] = true
				r.stats.liveLatency = append(r.stats.liveLatency, time.Since(start))
				continue
			} else if ok {
				last = "cli: " + brief(env)
			}
			pending++
		}
		if pending == 0 {
			r.stats.liveChecked += len(exp)
			r.log("live: %s shown everywhere after %s (%d changes)", op, time.Since(start).Round(time.Millisecond), len(exp))
			return
		}
		if time.Now().After(deadline) {
			var what []string
			for _, e := range exp {
				what = append(what, e.what)
			}
			r.fail("R42", "a change did not show within the deadline without refresh",
				"after %s (%s), %d answer(s) still did not show it within %s (refreshIntervalSeconds is an hour: file events must bring it); last: %s\nwatch state: %s",
				op, strings.Join(what, ", "), pending, liveDeadline, last, r.watchState())
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// shows reports whether an answer for e's word shows e.
func shows(env envelope, e liveExpect) bool {
	for _, p := range env.Projects {
		if p.path() == e.path && p.Availability == "present" {
			return e.present
		}
	}
	return !e.present
}

func brief(env envelope) string {
	var ps []string
	for _, p := range env.Projects {
		ps = append(ps, fmt.Sprintf("%s %s %q", p.ProjectID, p.Availability, p.path()))
	}
	return fmt.Sprintf("%s coverage %s [%s] %q", env.Status, env.Coverage, strings.Join(ps, "; "), env.Message)
}

func (r *run) watchState() string {
	b, err := os.ReadFile(filepath.Join(r.w.data, "watch.state"))
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// opBulkCreate unpacks an "archive": several indexed projects in one new
// directory at once.
func (r *run) opBulkCreate() {
	n := min(3+r.rng.IntN(6), maxLive-len(r.m.live()))
	if n <= 0 {
		return
	}
	as := []string{relCode, relTeam, relLibs}
	parent := r.w.abs(as[r.rng.IntN(len(as))])
	archive := filepath.Join(parent, fmt.Sprintf("unpacked-%d", r.step))
	staging := filepath.Join(r.w.base, fmt.Sprintf("staging-%d", r.step))
	var made []*proj
	for i := range n {
		made = append(made, r.create(staging, fmt.Sprintf("pkg-%d", i), false, r.step))
	}
	// Appear all at once, as an archive renamed into place.
	must(r, os.Rename(staging, archive))
	for _, p := range made {
		rel, _ := filepath.Rel(staging, p.path)
		p.path = filepath.Join(archive, rel)
		p.held = nil
		p.hold()
	}
	r.log("bulk create: %d projects appear at once at %s", n, r.rel(archive))
}

// opEventStorm makes more new directories at once than the watcher's bound
// (one project among them), so its events overflow and everything is
// walked again; the project must still show.
func (r *run) opEventStorm() {
	if len(r.m.live()) >= maxLive {
		return
	}
	dir := filepath.Join(r.w.abs(relCode), fmt.Sprintf("storm-%d", r.step))
	made := time.Now()
	must(r, os.MkdirAll(dir, 0o755))
	// Let the watcher apply that (and so watch dir) before the storm.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if ws := r.readWatch(); ws.Live && !ws.Pending && ws.Updated.After(made) {
			break
		}
	}
	before := r.readWatch()
	for i := range 4 * watchQueue {
		must(r, os.Mkdir(filepath.Join(dir, fmt.Sprintf("d%03d", i)), 0o755))
	}
	r.create(dir, "in the storm", false, r.step)
	r.stats.storms++
	r.storm = &before
	r.log("event storm: %d directories at once in %s (bound %d)", 4*watchQueue, r.rel(dir), watchQueue)
}

// watchFile is the part of dataDir/watch.state the test reads.
type watchFile struct {
	Pid       int       `json:"pid"`
	Live      bool      `json:"live"`
	Pending   bool      `json:"pending"`
	Overflows uint64    `json:"overflows"`
	Updated   time.Time `json:"updated"`
}

func (r *run) readWatch() watchFile {
	var w watchFile
	b, _ := os.ReadFile(filepath.Join(r.w.data, "watch.state"))
	_ = json.Unmarshal(b, &w)
	return w
}

// stormOverflowed checks, after an event storm, that it did overflow the
// watcher (the forcing worked) and that the watcher follows the disk again
// within the deadline, when the same process watched throughout.
func (r *run) stormOverflowed() {
	before := r.storm
	r.storm = nil
	if before == nil || before.Pid == 0 {
		return
	}
	deadline := time.Now().Add(liveDeadline)
	for {
		after := r.readWatch()
		switch {
		case after.Pid != before.Pid:
			r.log("event storm: the watcher changed (%d → %d); overflow not checked", before.Pid, after.Pid)
			return
		case after.Overflows > before.Overflows && after.Live && !after.Pending:
			r.stats.overflowed++
			return
		case time.Now().After(deadline):
			r.fail("R42", "an event storm did not overflow the watcher, or it did not follow the disk again", "watcher before the storm %+v, %s later %+v (CGCAT_WATCH_QUEUE=%d)", *before, liveDeadline, after, watchQueue)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// awaitFollowing waits, in a settle, until one serve follows the disk
// again (its watches set up after a restart, a takeover or a change of the
// walk settings): only then may an answer say coverage complete.
func (r *run) awaitFollowing() {
	deadline := time.Now().Add(liveDeadline)
	for {
		// Live for the config in force: a watcher still on the walk
		// settings or roots of the config before the last edit (a
		// maxDepth raised) is rightly partial until it caught up, which
		// is the product's own rule (refresh.Follows).
		cfg, err := config.Load(r.w.cfgPath)
		if err == nil && refresh.Follows(cfg).OK {
			return
		}
		if time.Now().After(deadline) {
			r.fail("R42", "no serve follows the disk after a settle", "%s after the settle's scans the watch state is %s", liveDeadline, r.watchState())
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// liveReport logs the latencies and checks that a storm did overflow.
func (r *run) liveReport() {
	l := slices.Clone(r.stats.liveLatency)
	if len(l) == 0 {
		return
	}
	sort.Slice(l, func(i, j int) bool { return l[i] < l[j] })
	q := func(f float64) time.Duration { return l[min(len(l)-1, int(f*float64(len(l))))].Round(time.Millisecond) }
	r.t.Logf("lifecycle: watch state at the end: %s", r.watchState())
	r.t.Logf("lifecycle: %d live changes shown everywhere without refresh; latency over %d answers p50 %s p90 %s max %s; %d event storms, %d seen to overflow the watcher and converge",
		r.stats.liveChecked, len(l), q(0.5), q(0.9), l[len(l)-1].Round(time.Millisecond), r.stats.storms, r.stats.overflowed)
}
