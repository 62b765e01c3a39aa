package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cgcat/cgcat/gbrain"
	"github.com/cgcat/cgcat/gbrain/gbraintest"
	"github.com/cgcat/cgcat/local/config"
	"github.com/cgcat/cgcat/server"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// fleetFigures are what a fleet run measured.
type fleetFigures struct {
	idsKept, ids    int
	cards, projects int
	writesAfterLoss int
}

// runFleet: machines A, B and C on one brain over HTTP, as people use
// them. A loses its whole data dir (identity file and all) and keeps its
// machine id and every project id, writing no card; A moves a project and
// B shows one candidate for it, resolving the old id with movedTo; C is
// gone and B retires it, after which A's search no longer shows C's
// projects.
func runFleet(t *testing.T, b sharedBrain, listCards func() int, seed func(pages map[string]string)) fleetFigures {
	var fig fleetFigures
	a := newMachine(t, b, "fa", map[string]string{
		"quasar": `{"name":"quasar-ingest","description":"ingests quasar telemetry streams"}`,
		"lib":    `{"name":"shared-lib","description":"helpers shared by the team"}`,
		"moving": `{"name":"moving-svc","description":"the moving billing service"}`,
	})
	bm := newMachine(t, b, "fb", map[string]string{"zircon": `{"name":"zircon-ui","description":"zircon design system"}`})
	cm := newMachine(t, b, "fc", map[string]string{"nebula": `{"name":"nebula-render","description":"renders nebula frames"}`})
	for _, m := range []*machine{a, bm, cm} {
		m.must("scan")
		m.must("gbrain", "sync")
	}
	idsA := a.ids()
	machineA := a.envelope("projects", "quasar").MachineID
	// Hundreds of other machines' cards on the brain.
	foreign := map[string]string{}
	for i := range foreignCards {
		id := fmt.Sprintf("cg_%016d", i)
		c := gbrain.Card{ProjectID: id, MachineID: fmt.Sprintf("m_%016d", i%9), Name: fmt.Sprintf("svc-%03d", i), Description: "another machine's service", RecordRevision: 1}
		content, err := gbrain.Encode(c, gbrain.EncodeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		foreign["catalog/codegraph/"+id] = content
	}
	seed(foreign)

	// A loses its whole data dir, and scans again with every core busy.
	if err := os.RemoveAll(a.dataDir); err != nil {
		t.Fatal(err)
	}
	stop := busyLoops()
	_, scanErr, _ := a.run("scan")
	stop()
	if !strings.Contains(scanErr, "3 of this machine's GBrain cards read before the first scan") {
		t.Fatalf("A's first scan after losing its data dir:\n%s", scanErr)
	}
	if got := a.envelope("projects", "quasar").MachineID; got != machineA {
		t.Fatalf("A's machine id after losing its data dir: %s, want %s", got, machineA)
	}
	after := a.ids()
	fig.ids = len(idsA)
	for name, id := range idsA {
		if after[name] == id {
			fig.idsKept++
		}
	}
	out := a.must("gbrain", "sync")
	fig.cards, fig.projects = listCards(), 5+foreignCards
	if m := regexp.MustCompile(`gbrain sync: (\d+) written`).FindStringSubmatch(out); m != nil {
		fmt.Sscan(m[1], &fig.writesAfterLoss)
	}
	if fig.idsKept != fig.ids || fig.cards != fig.projects || fig.writesAfterLoss != 0 {
		t.Fatalf("after losing the whole data dir: %d of %d ids kept, %d cards for %d projects, %d written\n%s", fig.idsKept, fig.ids, fig.cards, fig.projects, fig.writesAfterLoss, out)
	}

	// A moves a project.
	if err := os.Rename(filepath.Join(a.root, "moving"), filepath.Join(a.root, "moved")); err != nil {
		t.Fatal(err)
	}
	a.must("scan")
	a.must("gbrain", "sync")
	oldID := idsA["moving-svc"]
	newID := ""
	if r := a.envelope("resolve", oldID); len(r.Projects) == 1 {
		newID = r.Projects[0].MovedTo
	}
	if newID == "" || newID == oldID {
		t.Fatalf("A after the move: %v", a.ids())
	}
	bm.must("gbrain", "sync")
	e := bm.envelope("projects", "moving billing")
	if len(e.Projects) != 1 || e.Projects[0].ProjectID != newID || e.Projects[0].Availability != server.AvailabilityHistorical {
		t.Fatalf("B's candidates for A's moved project (want %s only, folded from %s): %+v", newID, oldID, e.Projects)
	}
	if r := bm.envelope("resolve", oldID); len(r.Projects) != 1 || r.Projects[0].MovedTo != newID {
		t.Fatalf("B resolving A's old id: %+v", r)
	}

	// C is gone; B retires it (a dry run first), and A stops showing it.
	if e := a.envelope("projects", "nebula frames"); len(e.Projects) != 1 {
		t.Fatalf("A's search for C's project before: %+v", e.Projects)
	}
	machineC := cm.envelope("projects", "nebula").MachineID
	if out := bm.must("gbrain", "retire", machineC, "--dry-run"); !strings.Contains(out, "would be retired") || listCards() != fig.projects+1 {
		t.Fatalf("a dry run changed something:\n%s", out)
	}
	if out := bm.must("gbrain", "retire", machineC); !strings.Contains(out, "1 deleted from GBrain") {
		t.Fatalf("retire:\n%s", out)
	}
	a.must("gbrain", "sync")
	if e := a.envelope("projects", "nebula frames"); len(e.Projects) != 0 {
		t.Fatalf("A still shows the retired machine's project: %+v", e.Projects)
	}
	return fig
}

// foreignCards is how many cards of other machines the fleet's brain holds
// when a machine loses its data dir.
const foreignCards = 300

// busyLoops keeps every core busy (two loops a core) until stop.
func busyLoops() (stop func()) {
	done := make(chan struct{})
	for range 2 * runtime.GOMAXPROCS(0) {
		go func() {
			x := 0
			for {
				select {
				case <-done:
					return
				default:
				}
				for i := range 100000 {
					x += i
				}
			}
		}()
	}
	return func() { close(done) }
}

// The fleet on one fake GBrain over HTTP.
func TestFleetOneBrainOverHTTP(t *testing.T) {
	fake := gbraintest.New(t, gbSource)
	srv := fake.ServeHTTP(t, gbraintest.HTTPOptions{})
	b := sharedBrain{url: srv.MCP, source: gbSource, register: func(name string) (string, string) {
		return fake.RegisterClient(t, name, gbSource, nil, 0)
	}}
	fig := runFleet(t, b, func() int { return fakeCards(t, fake) }, func(pages map[string]string) { fake.PutMany(t, gbSource, pages) })
	t.Logf("fake GBrain over HTTP: whole data dir lost: ids kept %d/%d, %d cards for %d projects, %d written", fig.idsKept, fig.ids, fig.cards, fig.projects, fig.writesAfterLoss)
}

// The fleet on a real GBrain (Postgres, serve --http); skipped without one.
func TestFleetOneRealBrainOverHTTP(t *testing.T) {
	g := gbraintest.NewReal(t)
	url := g.ServeHTTP()
	b := sharedBrain{url: url, source: g.Source, register: func(name string) (string, string) {
		return g.RegisterClient(fmt.Sprintf("%s-%s", name, g.Source), g.Source)
	}}
	fig := runFleet(t, b, realCardCounter(t, g, url), realSeeder(t, g, url))
	t.Logf("real GBrain: whole data dir lost: ids kept %d/%d, %d cards for %d projects, %d written", fig.idsKept, fig.ids, fig.cards, fig.projects, fig.writesAfterLoss)
}

// realSeeder writes pages into a real GBrain as another client would.
func realSeeder(t *testing.T, g *gbraintest.Real, url string) func(map[string]string) {
	id, secret := g.RegisterClient("seeder-"+g.Source, g.Source)
	return func(pages map[string]string) {
		t.Setenv("CGCAT_FLEET_SEEDER_ID", id)
		t.Setenv("CGCAT_FLEET_SEEDER_SECRET", secret)
		c, err := gbrain.Dial(context.Background(), gbrain.Connection{URL: url, ClientIDEnv: "CGCAT_FLEET_SEEDER_ID", ClientSecretEnv: "CGCAT_FLEET_SEEDER_SECRET"},
			gbrain.Options{ExpectedSource: g.Source})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		for slug, content := range pages {
			if _, err := c.PutPage(context.Background(), slug, content); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func fakeCards(t *testing.T, fake *gbraintest.Fake) int {
	n := 0
	for _, p := range fake.Pages(t) {
		if strings.HasPrefix(p.Slug, "catalog/codegraph/") && !strings.HasPrefix(p.Slug, "catalog/codegraph/machines/") && p.DeletedAt == "" && p.Source == gbSource {
			n++
		}
	}
	return n
}

// realCardCounter counts the cards in a real GBrain (list_pages by tag).
func realCardCounter(t *testing.T, g *gbraintest.Real, url string) func() int {
	id, secret := g.RegisterClient("lister-"+g.Source, g.Source)
	return func() int {
		t.Setenv("CGCAT_FLEET_LISTER_ID", id)
		t.Setenv("CGCAT_FLEET_LISTER_SECRET", secret)
		c, err := gbrain.Dial(context.Background(), gbrain.Connection{URL: url, ClientIDEnv: "CGCAT_FLEET_LISTER_ID", ClientSecretEnv: "CGCAT_FLEET_LISTER_SECRET"},
			gbrain.Options{ExpectedSource: g.Source})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		n := 0
		for off := 0; ; off += 100 {
			refs, err := c.ListPages(context.Background(), gbrain.ListOptions{Tag: gbrain.CardTag, Sort: gbrain.SortSlug, Limit: 100, Offset: off})
			if err != nil {
				t.Fatal(err)
			}
			n += len(refs)
			if len(refs) < 100 {
				return n
			}
		}
	}
}

// Two `cgcat gbrain sync` at once on one data dir, and the one writing
// killed (SIGKILL) part way: the other takes the projector lease over and
// writes the rest; every project ends with exactly one card, none lost.
func TestConcurrentSyncWithAMidSyncKill(t *testing.T) {
	const n = 24
	fake := gbraintest.New(t, gbSource)
	srv := fake.ServeHTTP(t, gbraintest.HTTPOptions{})
	b := sharedBrain{url: srv.MCP, source: gbSource, register: func(name string) (string, string) {
		return fake.RegisterClient(t, name, gbSource, nil, 0)
	}}
	projects := map[string]string{}
	for i := range n {
		projects[fmt.Sprintf("p%02d", i)] = fmt.Sprintf(`{"name":"svc-%02d","description":"service %d"}`, i, i)
	}
	m := newMachine(t, b, "ks", projects)
	m.must("scan")
	// Slow writes: the kill lands while cards are in flight.
	fake.SetControl(t, gbraintest.Control{DelayMs: 150, DelayTools: []string{"put_page"}})
	start := func() (*exec.Cmd, *bufio.Scanner) {
		cmd := exec.Command(cgcatBin(t), "--config", m.cfgPath, "gbrain", "sync")
		cmd.Env = append(append(os.Environ(), m.env...), "CGCAT_PROGRESS=lines")
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd, bufio.NewScanner(stderr)
	}
	first, firstErr := start()
	// Wait for the first one's progress: it holds the lease and writes.
	for firstErr.Scan() {
		if strings.HasPrefix(firstErr.Text(), "progress done=4 ") {
			break
		}
	}
	second, secondErr := start()
	// The second one waits for the first (it holds the projector lease).
	for secondErr.Scan() {
		if strings.HasPrefix(secondErr.Text(), "waiting pid=") {
			break
		}
	}
	go func() {
		for secondErr.Scan() {
		}
	}()
	go func() {
		for firstErr.Scan() {
		}
	}()
	if err := first.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()
	done := make(chan error, 1)
	go func() { done <- second.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the second sync: %v", err)
		}
	case <-time.After(3 * time.Minute):
		t.Fatal("the second sync did not finish")
	}
	fake.SetControl(t, gbraintest.Control{})
	if got := fakeCards(t, fake); got != n {
		t.Fatalf("%d cards for %d projects after a killed sync and a concurrent one", got, n)
	}
	seen := map[string]bool{}
	for _, p := range fake.Pages(t) {
		c, err := gbrain.Decode(fakeContent(t, fake, p.Slug))
		if p.DeletedAt != "" || strings.HasPrefix(p.Slug, "catalog/codegraph/machines/") {
			continue
		}
		if err != nil || seen[c.ProjectID] {
			t.Fatalf("card %s: %+v %v (duplicate or unreadable)", p.Slug, c, err)
		}
		seen[c.ProjectID] = true
	}
	if out := m.must("gbrain", "status", "--json"); !strings.Contains(out, `"outboxDepth": 0`) {
		t.Fatalf("cards left in the outbox:\n%s", out)
	}
}

func fakeContent(t *testing.T, fake *gbraintest.Fake, slug string) string {
	return fake.Content(t, gbSource, slug)
}

// A host's `cgcat serve` that does not hold the projector lease (another
// serve on the same data dir does) recalls over GBrain's stdio connection
// too, and says gbrainState ok.
func TestRecallOverStdioWithoutTheLease(t *testing.T) {
	e := newGBEnv(t, 3)
	if _, errOut, code := e.sync(gbrainSyncOptions{}); code != 0 {
		t.Fatalf("sync: %s", errOut)
	}
	cfg, err := config.Load(e.cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	cfg.GBrain.SemanticSearch = true
	raw, err := config.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, e.cfgPath, string(raw))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	serve := func() *client.Client {
		c, err := client.NewStdioMCPClient(cgcatBin(t), os.Environ(), "serve", "--config", e.cfgPath)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		ini := mcp.InitializeRequest{}
		ini.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
		if _, err := c.Initialize(ctx, ini); err != nil {
			t.Fatal(err)
		}
		return c
	}
	search := func(c *client.Client) *server.Envelope {
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = "local_codegraph_projects", map[string]any{"query": "reference"}
		res, err := c.CallTool(ctx, req)
		if err != nil || res.IsError {
			t.Fatalf("search: %v %+v", err, res)
		}
		var env server.Envelope
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, &env); err != nil {
			t.Fatal(err)
		}
		return &env
	}
	holder := serve()
	waitUntil(t, "the first serve to take the projector lease", time.Minute, func() bool {
		st := e.status()
		return st.Store != nil && st.Store.LeaseHeld
	})
	other := serve()
	for _, c := range []*client.Client{other, holder} {
		waitUntil(t, "recall over stdio", time.Minute, func() bool {
			env := search(c)
			return len(env.Projects) == 3 && strings.Contains(strings.Join(env.Projects[0].Reason, " "), "GBrain recall") && env.GBrainState == server.GBrainOK
		})
	}
}

func waitUntil(t *testing.T, what string, d time.Duration, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
