package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cgcat/cgcat/cmd/cgcat/doctor"
	"github.com/cgcat/cgcat/gbrain"
	"github.com/cgcat/cgcat/gbrain/gbraintest"
	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/config"
	"github.com/cgcat/cgcat/local/store"
	"github.com/cgcat/cgcat/outbox"
)

const gbSource = "codegraph-catalog"

type gbEnv struct {
	*testEnv
	t    *testing.T
	fake *gbraintest.Fake
	ids  []string
}

// newGBEnv makes n projects, a config with GBrain on (the fake), and scans.
func newGBEnv(t *testing.T, n int) *gbEnv {
	t.Helper()
	// The fake is built before HOME and the XDG dirs move (a build under a
	// fresh HOME would start from an empty module cache).
	fake := gbraintest.New(t, gbSource)
	e := &gbEnv{testEnv: newTestEnv(t), t: t, fake: fake}
	for i := range n {
		fakeProject(t, filepath.Join(e.root, fmt.Sprintf("p%03d", i)), fmt.Sprintf("pkg-%03d", i))
	}
	cfg, err := config.AdHoc([]string{e.root}, e.dataDir)
	if err != nil {
		t.Fatal(err)
	}
	fc := e.fake.Connection()
	cfg.GBrain.Enabled = true
	cfg.GBrain.ConnectionRef = "fake-gbrain"
	cfg.Connections = map[string]config.Connection{"fake-gbrain": {Command: fc.Command, Args: fc.Args, Env: fc.Env}}
	b, err := config.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, e.cfgPath, string(b))
	if err := runScan(context.Background(), e.globals(), &scanOptions{}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	st := e.store()
	_ = st.View(context.Background(), func(r *store.Reader) error {
		return r.Projects(func(p *local.Project) error { e.ids = append(e.ids, p.ID); return nil })
	})
	if len(e.ids) != n {
		t.Fatalf("scanned %d projects, want %d", len(e.ids), n)
	}
	return e
}

func (e *gbEnv) store() *store.Store {
	st, err := store.Open(context.Background(), e.dataDir)
	if err != nil {
		e.t.Fatal(err)
	}
	return st
}

func (e *gbEnv) sync(o gbrainSyncOptions) (string, string, int) {
	if o.stall == 0 {
		o.stall = time.Minute
	}
	return runCmd(func(out, errOut *bytes.Buffer) error {
		return runGBrainSync(context.Background(), e.globals(), &o, out, errOut)
	})
}

func (e *gbEnv) status() *gbrainStatus {
	out, errOut, code := runCmd(func(out, errOut *bytes.Buffer) error {
		return runGBrainStatus(context.Background(), e.globals(), &gbrainStatusOptions{json: true}, out, errOut)
	})
	var s gbrainStatus
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		e.t.Fatalf("status json: %v\n%s", err, out)
	}
	// Exit 1 exactly when the connection failed.
	if want := map[bool]int{true: 0, false: 1}[s.Connected]; code != want {
		e.t.Fatalf("status exit code %d with connected=%v (want %d): %s", code, s.Connected, want, errOut)
	}
	return &s
}

func (e *gbEnv) slug(id string) string { return "catalog/codegraph/" + id }

// cards lists our cards with a fresh client.
func (e *gbEnv) cards() []string {
	c := e.fake.Dial(e.t, gbrain.Options{ExpectedSource: gbSource})
	var slugs []string
	for off := 0; ; off += 100 {
		refs, err := c.ListPages(context.Background(), gbrain.ListOptions{Tag: gbrain.CardTag, Sort: gbrain.SortSlug, Limit: 100, Offset: off})
		if err != nil {
			e.t.Fatal(err)
		}
		for _, r := range refs {
			slugs = append(slugs, r.Slug)
		}
		if len(refs) < 100 {
			return slugs
		}
	}
}

func TestGBrainDisabledSaysHowToEnable(t *testing.T) {
	e := newTestEnv(t)
	e.writeConfig(t)
	_, errOut, code := runCmd(func(out, errOut *bytes.Buffer) error {
		return runGBrainSync(context.Background(), e.globals(), &gbrainSyncOptions{}, out, errOut)
	})
	if code != 2 {
		t.Fatalf("sync with GBrain off: exit %d", code)
	}
	mustContain(t, errOut, "not enabled", `"enabled": true`, "connectionRef", `"connections"`, e.cfgPath)
	out, _, code := runCmd(func(out, errOut *bytes.Buffer) error {
		return runGBrainStatus(context.Background(), e.globals(), &gbrainStatusOptions{}, out, errOut)
	})
	if code != 0 {
		t.Fatalf("status with GBrain off: exit %d", code)
	}
	mustContain(t, out, "GBrain: off", "gbrain sources add")
	cfg, _ := config.Load(e.cfgPath)
	if cs := gbrainDoctorChecks(context.Background(), cfg); len(cs) != 1 || cs[0].Status != doctor.Info {
		t.Fatalf("doctor with GBrain off: %+v", cs)
	}
}

func TestGBrainSyncDryRunStatusConflictsOrphans(t *testing.T) {
	e := newGBEnv(t, 3)

	out, errOut, code := e.sync(gbrainSyncOptions{dryRun: true})
	if code != 0 {
		t.Fatalf("dry run: %d %s", code, errOut)
	}
	mustContain(t, out, "would write catalog/codegraph/", "new card", "3 of 3 queued cards would be written; nothing was written")
	if c := e.fake.Calls(t); c["put_page"] != 0 {
		t.Fatalf("dry run wrote: %v", c)
	}
	if s := e.status(); s.Store.OutboxDepth != 3 || !s.Connected || !s.SourceOK {
		t.Fatalf("status after dry run: %+v", s)
	}

	out, errOut, code = e.sync(gbrainSyncOptions{})
	if code != 0 {
		t.Fatalf("sync: %d %s", code, errOut)
	}
	mustContain(t, out, "gbrain sync: 3 written, 0 unchanged; 0 left in the outbox")
	if got := e.cards(); len(got) != 3 {
		t.Fatalf("cards: %v", got)
	}
	s := e.status()
	if s.Store.OutboxDepth != 0 || s.Store.Cards != 3 || s.Store.LastSync == nil || s.Store.LastSync.Report.Written != 3 || s.Server != "gbrain 0.46.28.0" {
		t.Fatalf("status after sync: %+v %+v", s, s.Store)
	}

	// A person edits one card; the project changes; the card is not
	// overwritten and the conflict shows in status and doctor.
	id := e.ids[1]
	e.fake.Edit(t, gbSource, e.slug(id), func(p *gbraintest.Page) { p.Body += "\n\nEdited by hand." })
	edited := e.fake.Content(t, gbSource, e.slug(id))
	var root string
	_ = e.store().View(context.Background(), func(r *store.Reader) error {
		p, _ := r.Project(id)
		root = p.Root
		return nil
	})
	writeTestFile(t, filepath.Join(root, "package.json"), `{"name": "renamed-pkg", "description": "renamed"}`)
	if err := runScan(context.Background(), e.globals(), &scanOptions{}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	// Another machine's card (never an orphan), and an orphan: this
	// machine's card of a project id it does not know any more.
	other, _ := gbrain.Encode(gbrain.Card{ProjectID: "cg_2222222222222222", MachineID: "m_elsewhere", Name: "elsewhere"}, gbrain.EncodeOptions{})
	e.fake.Put(t, gbSource, e.slug("cg_2222222222222222"), other)
	orphan, _ := gbrain.Encode(gbrain.Card{ProjectID: "cg_3333333333333333", MachineID: e.store().MachineID(), Name: "forgotten here"}, gbrain.EncodeOptions{})
	e.fake.Put(t, gbSource, e.slug("cg_3333333333333333"), orphan)

	out, errOut, code = e.sync(gbrainSyncOptions{full: true})
	if code != 0 {
		t.Fatalf("sync --full: %d %s", code, errOut)
	}
	mustContain(t, out, "reconcile: 5 cards in GBrain, 3 shared projects here", "orphan: catalog/codegraph/cg_3333333333333333",
		"1 other machines' cards", "1 conflicts (edited in GBrain, not overwritten")
	if strings.Contains(out, "orphan: catalog/codegraph/cg_2222222222222222") {
		t.Fatalf("another machine's card called an orphan:\n%s", out)
	}
	if got := e.fake.Content(t, gbSource, e.slug(id)); got != edited {
		t.Fatal("the edited card was overwritten")
	}
	text, _, _ := runCmd(func(out, errOut *bytes.Buffer) error {
		return runGBrainStatus(context.Background(), e.globals(), &gbrainStatusOptions{}, out, errOut)
	})
	mustContain(t, text, "connection: ok (gbrain 0.46.28.0)", "source: codegraph-catalog is registered", "outbox: 0 cards waiting",
		"conflicts: 1", e.slug(id)+": edited in GBrain", "orphans: 1")
	cfg, _ := config.Load(e.cfgPath)
	var fails, warns int
	var all []string
	for _, c := range gbrainDoctorChecks(context.Background(), cfg) {
		all = append(all, c.What)
		switch c.Status {
		case doctor.Fail:
			fails++
		case doctor.Warn:
			warns++
		}
	}
	if fails != 0 || warns != 2 || !strings.Contains(strings.Join(all, "\n"), "GBrain conflicts: 1") {
		t.Fatalf("doctor: %d fails %d warns\n%s", fails, warns, strings.Join(all, "\n"))
	}
	if !strings.Contains(strings.Join(all, "\n"), `GBrain brain "host", pinned`) {
		t.Fatalf("doctor does not say how the brain is checked:\n%s", strings.Join(all, "\n"))
	}

	// --prune: this machine's orphan goes (a dry run first changes
	// nothing); another machine's card and the edited card stay.
	e.fake.ResetCalls(t)
	out, errOut, code = e.sync(gbrainSyncOptions{prune: true, dryRun: true})
	if code != 0 {
		t.Fatalf("sync --prune --dry-run: %d %s", code, errOut)
	}
	mustContain(t, out, "prune: 1 of this machine's cards name no project here (would delete them)", "would delete catalog/codegraph/cg_3333333333333333", "1 other machines' cards (never touched)")
	if c := e.fake.Calls(t); c["delete_page"] != 0 || c["put_page"] != 0 {
		t.Fatalf("a dry run changed GBrain: %v", c)
	}
	out, errOut, code = e.sync(gbrainSyncOptions{prune: true})
	if code != 0 {
		t.Fatalf("sync --prune: %d %s", code, errOut)
	}
	mustContain(t, out, "1 deleted from GBrain")
	if pg := e.fake.Page(t, gbSource, e.slug("cg_3333333333333333")); pg == nil || pg.DeletedAt == "" {
		t.Fatalf("the orphan is still there: %+v", pg)
	}
	for _, keep := range []string{"cg_2222222222222222", id} {
		if pg := e.fake.Page(t, gbSource, e.slug(keep)); pg == nil || pg.DeletedAt != "" {
			t.Fatalf("%s was deleted", keep)
		}
	}
}

func TestGBrainSyncWithGBrainDownKeepsTheOutbox(t *testing.T) {
	e := newGBEnv(t, 2)
	e.fake.SetControl(t, gbraintest.Control{ExitAtStart: "pglite"})
	_, errOut, code := e.sync(gbrainSyncOptions{})
	if code == 0 {
		t.Fatal("sync with GBrain down must fail")
	}
	mustContain(t, errOut, "cannot reach GBrain", "2 cards wait in the outbox", "serve --http",
		// What GBrain said, shown as it said it.
		"gbrain: [gbrain] Error: GBrain's local database is already open")
	s := e.status()
	if s.Connected || s.Store.OutboxDepth != 2 || !strings.Contains(s.ConnectError, "already open") {
		t.Fatalf("status with GBrain down: %+v", s)
	}
	cfg, _ := config.Load(e.cfgPath)
	if cs := gbrainDoctorChecks(context.Background(), cfg); cs[0].Status != doctor.Fail {
		t.Fatalf("doctor with GBrain down: %+v", cs)
	}
	// retire starts the same way and says its own consequence.
	_, errOut, code = runCmd(func(out, errOut *bytes.Buffer) error {
		return runGBrainRetire(context.Background(), e.globals(), &gbrainRetireOptions{}, "cg-machine-elsewhere", out, errOut)
	})
	if code != 1 {
		t.Fatalf("retire with GBrain down: exit %d, want 1\n%s", code, errOut)
	}
	mustContain(t, errOut, "cannot reach GBrain", "nothing was retired", "already open")
}

// TestGBrainHelperProcess is `cgcat gbrain sync` in a child process when the
// built binary does not have the command yet (see gbrainChild).
func TestGBrainHelperProcess(t *testing.T) {
	if os.Getenv("CGCAT_GBRAIN_HELPER") != "1" {
		t.Skip("helper process for the crash test")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	err := runGBrainSync(ctx, &globalOptions{configPath: os.Getenv("CGCAT_CONFIG")}, &gbrainSyncOptions{stall: time.Minute}, os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cgcat:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// gbrainChild starts `cgcat gbrain sync` as a real process: this test
// binary re-executed as TestGBrainHelperProcess, which runs runGBrainSync —
// the command's own code — in a process of its own that can be SIGKILLed.
// (It needs no build, so it works before the command is registered in
// root.go and while other packages are being edited.)
func gbrainChild(t *testing.T, e *gbEnv) (*exec.Cmd, <-chan string) {
	t.Helper()
	bin, args := os.Args[0], []string{"-test.run=^TestGBrainHelperProcess$"}
	env := append(os.Environ(), "CGCAT_CONFIG="+e.cfgPath, "CGCAT_PROGRESS=lines", "CGCAT_GBRAIN_HELPER=1")
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	ownGroup(cmd)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := make(chan string, 1000)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	return cmd, lines
}

var progressRE = regexp.MustCompile(`^progress done=(\d+)`)

// waitProgress reads the child's stderr until it reports n cards done.
func waitProgress(t *testing.T, lines <-chan string, n int) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	var seen []string
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("the child ended before %d cards:\n%s", n, strings.Join(seen, "\n"))
			}
			seen = append(seen, l)
			if m := progressRE.FindStringSubmatch(l); m != nil {
				if d, _ := strconv.Atoi(m[1]); d >= n {
					return
				}
			}
		case <-deadline:
			t.Fatalf("no progress to %d cards:\n%s", n, strings.Join(seen, "\n"))
		}
	}
}

func TestGBrainSyncCrashLosesNoCardAndDuplicatesNone(t *testing.T) {
	const n = 40
	e := newGBEnv(t, n)
	// 8 cards in flight, 400 ms a write: 25 cards take about 1.6 s.
	e.fake.SetControl(t, gbraintest.Control{DelayMs: 400, DelayTools: []string{"put_page"}})
	child, lines := gbrainChild(t, e)
	waitProgress(t, lines, 25) // past the first 1 s batch, within the second
	// Writes sent from now on are held: the projector cannot finish, however
	// long this test takes to kill it. Those in flight land.
	e.fake.SetControl(t, gbraintest.Control{DelayMs: 400, DelayTools: []string{"put_page"}, HoldTools: []string{"put_page"}})
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	st := e.store()
	var before int
	_ = st.View(context.Background(), func(r *store.Reader) error { before = outbox.Depth(r); return nil })
	if before == 0 || before == n {
		t.Fatalf("the kill should land mid-drain: outbox %d of %d", before, n)
	}
	// The killed projector's lease is free again; a new sync finishes,
	// while the dead one's GBrain child lands the writes it held (as a real
	// server finishes what it was sent).
	e.fake.SetControl(t, gbraintest.Control{})
	out, errOut, code := e.sync(gbrainSyncOptions{})
	if code != 0 {
		t.Fatalf("sync after the crash: %d %s %s", code, out, errOut)
	}
	waitGroupGone(t, child.Process.Pid)
	// Typically some cards were written but not yet recorded when the
	// process died: those are found in GBrain and adopted (one read each).
	t.Logf("killed with %d of %d cards still queued; the next sync: %s", before, n, strings.TrimSpace(out))
	got := e.cards()
	seen := map[string]bool{}
	for _, s := range got {
		if seen[s] {
			t.Fatalf("duplicate card %s", s)
		}
		seen[s] = true
	}
	if len(got) != n {
		t.Fatalf("%d cards after the crash, want exactly %d", len(got), n)
	}
	for _, id := range e.ids {
		if !seen[e.slug(id)] {
			t.Fatalf("card of %s lost", id)
		}
	}
	s := e.status()
	if s.Store.OutboxDepth != 0 || s.Store.Cards != n || len(s.Store.Conflicts) != 0 {
		t.Fatalf("after the crash: %+v", s.Store)
	}
	// Every state matches its page, the dead one's late writes (the same
	// cards, skipped by GBrain) included: a sync of everything is reads only.
	e.fake.ResetCalls(t)
	out, _, code = e.sync(gbrainSyncOptions{full: true})
	if c := e.fake.Calls(t); code != 0 || c["put_page"] != 0 || c["get_page"] != 0 {
		t.Fatalf("after recovery a full sync must find nothing to do: %v\n%s", c, out)
	}
}

func TestGBrainSyncWaitsForTheProjectorThatHoldsTheLease(t *testing.T) {
	const n = 25 // 8 in flight, 800 ms a write: ~3 s, for the holder to commit a batch or two meanwhile
	e := newGBEnv(t, n)
	e.fake.SetControl(t, gbraintest.Control{DelayMs: 800, DelayTools: []string{"put_page"}})
	child, lines := gbrainChild(t, e)
	waitProgress(t, lines, 1)
	t.Setenv("CGCAT_PROGRESS", "lines")
	out, errOut, code := e.sync(gbrainSyncOptions{})
	if code != 0 {
		t.Fatalf("waiting sync: %d %s", code, errOut)
	}
	mustContain(t, errOut, "is writing GBrain cards; waiting for it")
	mustContain(t, out, "the outbox is empty: pid")
	var depths []int
	for _, m := range regexp.MustCompile(`waiting pid=\d+ depth=(\d+)`).FindAllStringSubmatch(errOut, -1) {
		d, _ := strconv.Atoi(m[1])
		depths = append(depths, d)
	}
	if len(depths) < 2 || depths[len(depths)-1] >= depths[0] {
		t.Fatalf("the wait should show the depth going down: %v\n%s", depths, errOut)
	}
	if err := child.Wait(); err != nil {
		t.Fatalf("the projector child: %v", err)
	}
	if got := e.cards(); len(got) != n {
		t.Fatalf("cards: %d", len(got))
	}
}

// A GBrain that waits in silence before it answers (its brain held by
// another gbrain command) is explained after a few seconds, not waited on
// without a word; the sync then goes on.
func TestGBrainSyncExplainsASilentStart(t *testing.T) {
	e := newGBEnv(t, 1)
	e.fake.SetControl(t, gbraintest.Control{StartDelayMs: 1500})
	old := cliSlowDial
	cliSlowDial = 300 * time.Millisecond
	t.Cleanup(func() { cliSlowDial = old })
	out, errOut, code := e.sync(gbrainSyncOptions{})
	if code != 0 {
		t.Fatalf("sync: %d %s", code, errOut)
	}
	mustContain(t, errOut, "GBrain has not answered for 300ms; its brain may be held by another gbrain command")
	mustContain(t, out, "gbrain sync: 1 written")
}
