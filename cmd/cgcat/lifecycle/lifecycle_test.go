//go:build linux

// Package lifecycle holds the model-based lifecycle test of issue 12: a
// seeded random sequence of changes to a real tree, to the config file and
// to real cgcat processes, checked after every step (and after every settle)
// against a model of what must be visible. It has no code of its own.
//
//	go test ./cmd/cgcat/lifecycle                         # CI: fixed seed, 300 steps
//	CGCAT_LIFECYCLE_STEPS=5000 go test ./cmd/cgcat/lifecycle -timeout 2h   # random seed
//	CGCAT_LIFECYCLE_SEED=42 CGCAT_LIFECYCLE_STEPS=300 go test ./cmd/cgcat/lifecycle
//	CGCAT_LIFECYCLE_FAILFAST=1 ...                        # stop at the first violation
package lifecycle

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cgcat/cgcat/gbrain/gbraintest"
)

var cgcatBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "cgcat-lifecycle-")
	if err != nil {
		panic(err)
	}
	if cgcatBin, err = buildCgcat(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	code := gbraintest.Main(m)
	os.RemoveAll(dir)
	os.Exit(code)
}

// ciSeed is the fixed seed CI runs.
const ciSeed = 20261201

func TestLifecycle(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	steps, seed := 300, uint64(ciSeed)
	if v := os.Getenv("CGCAT_LIFECYCLE_STEPS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("CGCAT_LIFECYCLE_STEPS=%q is not a positive number", v)
		}
		steps, seed = n, rand.Uint64()%1_000_000_000
	}
	if v := os.Getenv("CGCAT_LIFECYCLE_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("CGCAT_LIFECYCLE_SEED=%q is not a number", v)
		}
		seed = n
	}
	failFast := os.Getenv("CGCAT_LIFECYCLE_FAILFAST") == "1"
	r := newRun(t, seed, failFast)
	t.Logf("lifecycle: seed %d, %d steps (CGCAT_LIFECYCLE_SEED=%d CGCAT_LIFECYCLE_STEPS=%d to repeat)", seed, steps, seed, steps)
	start := time.Now()
	defer r.cleanup()
	r.setup()
	for r.step = 1; r.step <= steps && !r.stopped(); r.step++ {
		r.doStep()
	}
	r.step = steps + 1
	if !r.stopped() {
		r.log("final settle")
		r.settle()
	}
	elapsed := time.Since(start)
	r.report(elapsed, steps)
}

// violation is one invariant that did not hold.
type violation struct {
	step  int
	inv   string // "a", "b", ... or a requirement id
	kind  string // de-duplication key
	msg   string
	count int
}

type revSeen struct {
	rev  uint64
	step int
}

type run struct {
	t        *testing.T
	seed     uint64
	rng      *rand.Rand // the operations: same seed, same sequence of operations
	crng     *rand.Rand // what the checks sample (their number depends on answers)
	hrng     *rand.Rand // hint-file edits: drawn apart, so adding them kept every seed's operations
	failFast bool
	w        *world
	c        cfg
	gbConf   map[string]any
	fake     *gbraintest.Fake
	gb       gbModel
	m        model
	main     *serveProc
	extra    []*serveProc
	scans    []*bgScan
	watch    *leaseWatch
	serveN   int

	step       int
	stepLog    []string
	firstKey   map[string]int      // walk key → first step it was in force
	resSince   map[string][]string // deny key → its resolutions since the config file was last written (first: at the write)
	isRoot     bool
	lastSettle int
	lastConfig int // step the config file was last written

	held    *heldCursor        // a cursor of the main serve, used at the next step
	storm   *watchFile         // the watcher before the last event storm (live_test.go)
	lastRev map[string]revSeen // serve name → the greatest catalogRevision it answered

	viols  []*violation
	byKind map[string]*violation
	stats  stats
}

type stats struct {
	ops               map[string]int
	answers, quiet    int
	resolves, cli     int
	settles           int
	frozenCLI         []time.Duration
	gbConverge        []time.Duration
	checksAfterSettle int
	listedAfterSettle int
	movedChecked      int
	movedToAlias      int // movedTo chains that ended at a bind-mount alias of the new root
	completeClaims    int
	completeChecked   int
	slowDegraded      int             // CLI answers that said degraded after a whole recall budget
	revChecked        int             // records whose metadata changed between settles, revision checked
	hintsChecked      int             // settled listings of a project whose hint file was checked
	doctors           int             // doctor reports checked after a settle
	cursorsUsed       int             // cursors held over a step and used
	retractChecks     int             // settles that checked GBrain for cards of hidden or forgotten records
	liveChecked       int             // changes shown everywhere without refresh (live_test.go)
	liveLatency       []time.Duration // per answer, from the end of the step's change
	storms            int             // event storms past the watcher's bound
	overflowed        int             // of them, seen to overflow the watcher
	// where the time went
	cliTime, serveTime, settleTime, opTime time.Duration
}

func newRun(t *testing.T, seed uint64, failFast bool) *run {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w, err := newWorld(base)
	if err != nil {
		t.Fatal(err)
	}
	r := &run{
		t: t, seed: seed, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), crng: rand.New(rand.NewPCG(seed, 1)), hrng: rand.New(rand.NewPCG(seed, 3)), failFast: failFast,
		w: w, m: newModel(), firstKey: map[string]int{}, resSince: map[string][]string{},
		byKind: map[string]*violation{}, lastRev: map[string]revSeen{}, isRoot: os.Geteuid() == 0,
	}
	r.stats.ops = map[string]int{}
	r.fake = gbraintest.New(t, "codegraph-catalog")
	fc := r.fake.Connection()
	r.gbConf = map[string]any{
		"connectionRef":  "fake-gbrain",
		"expectedSource": "codegraph-catalog",
		"recallBudgetMs": 2000,
		// GBrain is checked by the projector's rounds; often enough that
		// a switch of the fake shows within the convergence bound.
		"checkSeconds": 3,
		"connections":  map[string]any{"fake-gbrain": map[string]any{"command": fc.Command, "args": fc.Args, "env": fc.Env}},
	}
	if r.watch, err = newLeaseWatch(w.data); err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *run) stopped() bool { return r.failFast && len(r.viols) > 0 }

func (r *run) log(format string, a ...any) {
	s := fmt.Sprintf("%4d  ", r.step) + fmt.Sprintf(format, a...)
	r.stepLog = append(r.stepLog, s)
}

// fail records a violation of invariant inv; kind de-duplicates repeats.
func (r *run) fail(inv, kind, format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	key := inv + "|" + kind
	if v := r.byKind[key]; v != nil {
		v.count++
		return
	}
	v := &violation{step: r.step, inv: inv, kind: kind, msg: msg, count: 1}
	r.byKind[key] = v
	r.viols = append(r.viols, v)
	r.log("VIOLATION (%s) %s", inv, kind)
}

func (r *run) cleanup() {
	for _, s := range r.scans {
		if !s.finished() {
			s.kill()
		}
	}
	for _, p := range r.extra {
		p.kill()
	}
	if r.main != nil {
		r.main.kill()
	}
	for i := len(r.w.mounts) - 1; i >= 0; i-- {
		unmount(r.w.mounts[i])
	}
	r.watch.close()
}

func (r *run) report(elapsed time.Duration, steps int) {
	t := r.t
	sps := float64(r.step-1) / elapsed.Seconds()
	var ops []string
	for k, v := range r.stats.ops {
		ops = append(ops, fmt.Sprintf("%s=%d", k, v))
	}
	sort.Strings(ops)
	t.Logf("lifecycle: %d steps in %s = %.2f steps/s; %d settles; %d answers checked (%d with the scan lease provably free), %d resolves, %d CLI runs",
		r.step-1, elapsed.Round(time.Millisecond), sps, r.stats.settles, r.stats.answers, r.stats.quiet, r.stats.resolves, r.stats.cli)
	t.Logf("lifecycle: ops %s", strings.Join(ops, " "))
	t.Logf("lifecycle: time in CLI runs %s, in serve calls %s, in settles (all included) %s, in operations %s",
		r.stats.cliTime.Round(time.Millisecond), r.stats.serveTime.Round(time.Millisecond), r.stats.settleTime.Round(time.Millisecond), r.stats.opTime.Round(time.Millisecond))
	t.Logf("lifecycle: after settles %d listings checked for completeness (%d projects required), %d moves followed (%d to a bind-mount alias of the new root); %d coverage-complete claims, %d with projects to check",
		r.stats.checksAfterSettle, r.stats.listedAfterSettle, r.stats.movedChecked, r.stats.movedToAlias, r.stats.completeClaims, r.stats.completeChecked)
	t.Logf("lifecycle: %d hint-file states checked after settles", r.stats.hintsChecked)
	t.Logf("lifecycle: %d cursors used a step after they were taken; %d doctor reports checked", r.stats.cursorsUsed, r.stats.doctors)
	t.Logf("lifecycle: %d metadata changes checked for a greater recordRevision and record_changed", r.stats.revChecked)
	if r.stats.retractChecks > 0 {
		t.Logf("lifecycle: %d settles checked that GBrain holds no live card of a hidden or forgotten record", r.stats.retractChecks)
	}
	if r.stats.slowDegraded > 0 {
		t.Logf("lifecycle: %d CLI answers said degraded while GBrain was up after using their whole recall budget (accepted)", r.stats.slowDegraded)
	}
	if len(r.stats.frozenCLI) > 0 {
		t.Logf("lifecycle: CLI answer while another process was frozen: %v", r.stats.frozenCLI)
	}
	if len(r.stats.gbConverge) > 0 {
		t.Logf("lifecycle: serve gbrainState convergence after a switch: %v", r.stats.gbConverge)
	}
	r.liveReport()
	if len(r.viols) == 0 {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "lifecycle: %d distinct violations (seed %d, %d steps; repeat with CGCAT_LIFECYCLE_SEED=%d CGCAT_LIFECYCLE_STEPS=%d):\n", len(r.viols), r.seed, steps, r.seed, steps)
	for _, v := range r.viols {
		fmt.Fprintf(&b, "\n[%s] step %d (%d times) %s\n    %s\n", v.inv, v.step, v.count, v.kind, strings.ReplaceAll(v.msg, "\n", "\n    "))
	}
	logPath := filepath.Join(os.TempDir(), fmt.Sprintf("cgcat-lifecycle-steps-%d.txt", r.seed))
	_ = os.WriteFile(logPath, []byte(strings.Join(r.stepLog, "\n")+"\n"), 0o644)
	lines := r.stepLog
	if len(lines) > 400 {
		fmt.Fprintf(&b, "\nsteps (last 400 of %d; all in %s):\n", len(lines), logPath)
		lines = lines[len(lines)-400:]
	} else {
		fmt.Fprintf(&b, "\nsteps (also in %s):\n", logPath)
	}
	b.WriteString(strings.Join(lines, "\n"))
	t.Error(b.String())
}
