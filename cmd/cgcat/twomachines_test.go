package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cgcat/cgcat/gbrain"
	"github.com/cgcat/cgcat/gbrain/gbraintest"
	"github.com/cgcat/cgcat/local/config"
	"github.com/cgcat/cgcat/local/store"
	"github.com/cgcat/cgcat/server"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// sharedBrain is one GBrain served over HTTP that several machines use:
// register gives a machine its own OAuth client bound to the catalog's
// source (id and secret in environment variables it names).
type sharedBrain struct {
	url      string
	source   string
	register func(name string) (id, secret string)
}

// machine is one cgcat install: its own code, data dir and config, and the
// real cgcat binary run as a person (or a host) would.
type machine struct {
	t       *testing.T
	name    string
	root    string
	dataDir string
	cfgPath string
}

func newMachine(t *testing.T, b sharedBrain, name string, projects map[string]string) *machine {
	t.Helper()
	base := canonTemp(t)
	m := &machine{t: t, name: name, root: filepath.Join(base, "code"), dataDir: filepath.Join(base, "data"), cfgPath: filepath.Join(base, "cgcat.json")}
	for dir, pkg := range projects {
		cliProject(t, filepath.Join(m.root, dir), pkg)
	}
	id, secret := b.register("cgcat-" + name)
	idEnv, secretEnv := "CGCAT_TWO_MACHINES_"+strings.ToUpper(name)+"_ID", "CGCAT_TWO_MACHINES_"+strings.ToUpper(name)+"_SECRET"
	t.Setenv(idEnv, id)
	t.Setenv(secretEnv, secret)
	cfg, err := config.AdHoc([]string{m.root}, m.dataDir)
	if err != nil {
		t.Fatal(err)
	}
	cfg.GBrain.Enabled = true
	cfg.GBrain.ConnectionRef = "team-brain"
	cfg.GBrain.ExpectedSource = b.source
	cfg.Connections = map[string]config.Connection{"team-brain": {URL: b.url, ClientIDEnv: idEnv, ClientSecretEnv: secretEnv}}
	out, err := config.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, m.cfgPath, string(out))
	return m
}

// run runs the cgcat binary with this machine's config.
func (m *machine) run(args ...string) (string, string, int) {
	m.t.Helper()
	cmd := exec.Command(cgcatBin(m.t), append([]string{"--config", m.cfgPath}, args...)...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		m.t.Fatal(err)
	}
	return out.String(), errOut.String(), code
}

func (m *machine) must(args ...string) string {
	m.t.Helper()
	out, errOut, code := m.run(args...)
	if code != 0 {
		m.t.Fatalf("%s: cgcat %s: exit %d\n%s\n%s", m.name, strings.Join(args, " "), code, out, errOut)
	}
	return out
}

func (m *machine) envelope(args ...string) *server.Envelope {
	m.t.Helper()
	out, errOut, _ := m.run(append(args, "--json")...)
	var e server.Envelope
	if err := json.Unmarshal([]byte(out), &e); err != nil {
		m.t.Fatalf("%s: cgcat %s: %v\n%s\n%s", m.name, strings.Join(args, " "), err, out, errOut)
	}
	return &e
}

// ids maps project names to ids as `cgcat projects` lists them.
func (m *machine) ids() map[string]string {
	m.t.Helper()
	out := map[string]string{}
	for _, p := range m.envelope("projects", "--limit", "50").Projects {
		if p.Availability != server.AvailabilityHistorical {
			out[p.Name] = p.ProjectID
		}
	}
	return out
}

// loseCatalog deletes everything in the data dir but the identity file.
func (m *machine) loseCatalog() {
	m.t.Helper()
	ents, err := os.ReadDir(m.dataDir)
	if err != nil {
		m.t.Fatal(err)
	}
	for _, de := range ents {
		if de.Name() != filepath.Base(store.IdentityFile(m.dataDir)) {
			if err := os.RemoveAll(filepath.Join(m.dataDir, de.Name())); err != nil {
				m.t.Fatal(err)
			}
		}
	}
}

// twoMachinesFigures are what the two-machines run measured.
type twoMachinesFigures struct {
	syncA, syncB, syncAfterLoss time.Duration
	idsKept, ids                int
	cards, projects             int
}

// runTwoMachines: machines A and B project into one brain over HTTP. B
// finds A's project as historical (search over a real `cgcat serve` on
// stdio, and resolve), A's ids resolve normally on A, and A's lost catalog
// gets its ids back with no duplicate card.
func runTwoMachines(t *testing.T, b sharedBrain, listCards func() int) twoMachinesFigures {
	var fig twoMachinesFigures
	a := newMachine(t, b, "a", map[string]string{
		"quasar": `{"name":"quasar-ingest","description":"ingests quasar telemetry streams"}`,
		"lib":    `{"name":"shared-lib","description":"helpers shared by the team"}`,
		"ui":     `{"name":"atlas-ui","description":"the atlas dashboard"}`,
	})
	bm := newMachine(t, b, "b", map[string]string{
		"zircon": `{"name":"zircon-ui","description":"zircon design system"}`,
	})
	a.must("scan")
	start := time.Now()
	a.must("gbrain", "sync")
	fig.syncA = time.Since(start)
	bm.must("scan")
	start = time.Now()
	out := bm.must("gbrain", "sync")
	fig.syncB = time.Since(start)
	if !strings.Contains(out, "mirror: 4 cards in GBrain") {
		t.Fatalf("B's mirror after its sync:\n%s", out)
	}
	idsA := a.ids()
	machineA := a.envelope("projects", "quasar").MachineID
	if len(idsA) != 3 || machineA == "" {
		t.Fatalf("A's catalog: %v %q", idsA, machineA)
	}

	// B: a real `cgcat serve` over stdio, as a host starts it.
	c, err := client.NewStdioMCPClient(cgcatBin(t), os.Environ(), "serve", "--config", bm.cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ini := mcp.InitializeRequest{}
	ini.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	if _, err := c.Initialize(ctx, ini); err != nil {
		t.Fatal(err)
	}
	call := func(tool string, args map[string]any) *server.Envelope {
		t.Helper()
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = tool, args
		res, err := c.CallTool(ctx, req)
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", tool, err, res)
		}
		var e server.Envelope
		raw, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(raw, &e); err != nil {
			t.Fatal(err)
		}
		return &e
	}
	e := call("local_codegraph_projects", map[string]any{"query": "quasar telemetry"})
	if e.Status != server.StatusOK || len(e.Projects) != 1 {
		t.Fatalf("B searching A's project: %+v", e)
	}
	h := e.Projects[0]
	if h.Availability != server.AvailabilityHistorical || h.MachineID != machineA || h.ProjectID != idsA["quasar-ingest"] || h.ProjectPath != nil || h.Handoff != nil {
		t.Fatalf("A's project on B: %+v", h)
	}
	if e.GBrainState != server.GBrainOK {
		t.Fatalf("B's gbrainState after its sync: %s", e.GBrainState)
	}
	if own := call("local_codegraph_projects", map[string]any{"query": "zircon"}); len(own.Projects) != 1 || own.Projects[0].ProjectPath == nil {
		t.Fatalf("B's own project: %+v", own)
	}
	r := call("local_codegraph_resolve", map[string]any{"projectId": idsA["quasar-ingest"]})
	if r.Status != server.StatusOK || len(r.Projects) != 1 || r.Projects[0].Availability != server.AvailabilityHistorical || r.Projects[0].MachineID != machineA || r.Projects[0].ProjectPath != nil {
		t.Fatalf("B resolving A's id: %+v", r)
	}
	// B's serve ends (a host closed): the next `cgcat gbrain sync` on B
	// holds the projector lease itself and refreshes the mirror.
	c.Close()
	// The CLI twin answers the same on B.
	if tw := bm.envelope("resolve", idsA["quasar-ingest"]); tw.Projects[0].Availability != server.AvailabilityHistorical || tw.Projects[0].MachineID != machineA {
		t.Fatalf("B's cgcat resolve of A's id: %+v", tw)
	}
	// Not here: exit 3, as the README's table says.
	if _, _, code := bm.run("resolve", idsA["quasar-ingest"]); code != exitNotFound {
		t.Fatalf("B's cgcat resolve of A's id: exit %d, want %d", code, exitNotFound)
	}
	// A's own ids resolve normally on A, with their path.
	if own := a.envelope("resolve", idsA["quasar-ingest"]); own.Status != server.StatusOK || own.Projects[0].ProjectPath == nil ||
		!strings.HasPrefix(*own.Projects[0].ProjectPath, a.root) {
		t.Fatalf("A resolving its own id: %+v", own)
	}

	// A loses its catalog (the identity file stays): the next scan reads
	// the cards first and every id comes back; the sync adds no card.
	a.loseCatalog()
	_, scanErr, _ := a.run("scan")
	if !strings.Contains(scanErr, "GBrain cards mirrored before the first scan") {
		t.Fatalf("A's first scan after the loss did not read the cards first:\n%s", scanErr)
	}
	after := a.ids()
	fig.ids = len(idsA)
	for name, id := range idsA {
		if after[name] == id {
			fig.idsKept++
		}
	}
	start = time.Now()
	a.must("gbrain", "sync")
	fig.syncAfterLoss = time.Since(start)
	fig.cards, fig.projects = listCards(), 4
	if fig.idsKept != fig.ids || fig.cards != fig.projects {
		t.Fatalf("after a lost catalog: %d of %d ids kept, %d cards for %d projects", fig.idsKept, fig.ids, fig.cards, fig.projects)
	}

	// A denies one of its projects after it was projected: A's next sync
	// takes the card back (delete_page), and B stops finding it.
	cfg, err := config.Load(a.cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Sharing.DenyRoots = []string{filepath.Join(a.root, "ui")}
	raw, err := config.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, a.cfgPath, string(raw))
	if out := a.must("gbrain", "sync"); !strings.Contains(out, "1 deleted from GBrain") {
		t.Fatalf("A's sync after the deny:\n%s", out)
	}
	if n := listCards(); n != fig.projects-1 {
		t.Fatalf("cards after the deny: %d", n)
	}
	bm.must("gbrain", "sync")
	if e := bm.envelope("projects", "atlas dashboard"); len(e.Projects) != 0 {
		t.Fatalf("B still finds A's denied project: %+v", e.Projects)
	}
	return fig
}

// Two cgcat data dirs (two machine ids) on one fake GBrain over HTTP.
func TestTwoMachinesOneBrainOverHTTP(t *testing.T) {
	fake := gbraintest.New(t, gbSource)
	srv := fake.ServeHTTP(t, gbraintest.HTTPOptions{})
	b := sharedBrain{url: srv.MCP, source: gbSource, register: func(name string) (string, string) {
		return fake.RegisterClient(t, name, gbSource, nil, 0)
	}}
	fig := runTwoMachines(t, b, func() int {
		n := 0
		for _, p := range fake.Pages(t) {
			if strings.HasPrefix(p.Slug, "catalog/codegraph/") && p.DeletedAt == "" && p.Source == gbSource {
				n++
			}
		}
		return n
	})
	t.Logf("fake GBrain over HTTP: sync A %s, sync B %s, sync after A's loss %s; ids kept %d/%d; %d cards for %d projects",
		fig.syncA, fig.syncB, fig.syncAfterLoss, fig.idsKept, fig.ids, fig.cards, fig.projects)
}

// The same against a real GBrain on Postgres served with `gbrain serve
// --http` (skipped, saying why, without one).
func TestTwoMachinesOneRealBrainOverHTTP(t *testing.T) {
	g := gbraintest.NewReal(t)
	url := g.ServeHTTP()
	b := sharedBrain{url: url, source: g.Source, register: func(name string) (string, string) {
		return g.RegisterClient(fmt.Sprintf("%s-%s", name, g.Source), g.Source)
	}}
	var lister struct{ id, secret string }
	lister.id, lister.secret = g.RegisterClient("lister-"+g.Source, g.Source)
	fig := runTwoMachines(t, b, func() int {
		t.Setenv("CGCAT_TWO_MACHINES_LISTER_ID", lister.id)
		t.Setenv("CGCAT_TWO_MACHINES_LISTER_SECRET", lister.secret)
		c, err := gbrain.Dial(context.Background(), gbrain.Connection{URL: url, ClientIDEnv: "CGCAT_TWO_MACHINES_LISTER_ID", ClientSecretEnv: "CGCAT_TWO_MACHINES_LISTER_SECRET"},
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
	})
	t.Logf("real GBrain (Postgres, serve --http): sync A %s, sync B %s, sync after A's loss %s; ids kept %d/%d; %d cards for %d projects",
		fig.syncA, fig.syncB, fig.syncAfterLoss, fig.idsKept, fig.ids, fig.cards, fig.projects)
}
