package projection

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/cgcat/cgcat/gbrain"
	"github.com/cgcat/cgcat/gbrain/gbraintest"
	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/catalog"
	"github.com/cgcat/cgcat/local/config"
	"github.com/cgcat/cgcat/local/scan"
	"github.com/cgcat/cgcat/local/store"
	"github.com/cgcat/cgcat/outbox"
)

func TestMain(m *testing.M) { os.Exit(gbraintest.Main(m)) }

const testSource = "codegraph-catalog"

// env is one catalog (temp tree, scanned store) and one fake GBrain, in
// process by default (newEnv) or as a process over stdio (newProcessEnv,
// for the tests of what a child process does: its lifetime, its start).
type env struct {
	t    testing.TB
	ctx  context.Context
	root string
	cfg  *config.Config
	st   *store.Store
	fake *gbraintest.Fake
	conn *Conn
	opts gbrain.Options // of conn's dials
	// reconnect makes a new conn like the env's (HTTP once overHTTP ran).
	reconnect func() *Conn
	set       Settings
	pol       catalog.Policy
}

// mkProject makes dir a CodeGraph project with a package.json.
func mkProject(t testing.TB, dir, name, desc string, keywords ...string) {
	t.Helper()
	cg := filepath.Join(dir, ".codegraph")
	if err := os.MkdirAll(cg, 0o755); err != nil {
		t.Fatal(err)
	}
	db := append([]byte("SQLite format 3\x00"), make([]byte, 200)...)
	if err := os.WriteFile(filepath.Join(cg, "codegraph.db"), db, 0o644); err != nil {
		t.Fatal(err)
	}
	writePkg(t, dir, name, desc, keywords...)
}

func writePkg(t testing.TB, dir, name, desc string, keywords ...string) {
	t.Helper()
	pj, _ := json.Marshal(map[string]any{"name": name, "description": desc, "keywords": keywords})
	if err := os.WriteFile(filepath.Join(dir, "package.json"), pj, 0o644); err != nil {
		t.Fatal(err)
	}
}

// envCallTimeout bounds each GBrain call of an env's connection.
const envCallTimeout = 5 * time.Second

// newEnv makes n projects under a temp root (root/pNNN, named pkg-NNN) and
// scans them; deny lists sub-directories of root to put in sharing.denyRoots.
// Its GBrain is the in-process fake.
func newEnv(t testing.TB, n int, deny ...string) *env {
	t.Helper()
	return newEnvWith(t, gbraintest.NewInProcess(t, testSource), n, deny...)
}

// newProcessEnv is newEnv with the fake GBrain run as a stdio child.
func newProcessEnv(t testing.TB, n int, deny ...string) *env {
	t.Helper()
	return newEnvWith(t, gbraintest.New(t, testSource), n, deny...)
}

func newEnvWith(t testing.TB, fake *gbraintest.Fake, n int, deny ...string) *env {
	t.Helper()
	ctx := context.Background()
	base := t.TempDir()
	root := filepath.Join(base, "code")
	for i := range n {
		mkProject(t, filepath.Join(root, fmt.Sprintf("p%04d", i)), fmt.Sprintf("pkg-%04d", i),
			fmt.Sprintf("widget service number %d for the billing team", i), "widget", fmt.Sprintf("kw%04d", i))
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.AdHoc([]string{root}, filepath.Join(base, "data"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range deny {
		cfg.Sharing.DenyRoots = append(cfg.Sharing.DenyRoots, filepath.Join(root, d))
	}
	cfg.GBrain.Enabled = true
	cfg.GBrain.ConnectionRef = "fake"
	// An in-process fake has no command: anything that dials from the
	// config instead of the test's dialer fails at once.
	cc := config.Connection{Command: "/nonexistent/in-process-fake-gbrain"}
	if !fake.InProcess() {
		fc := fake.Connection()
		cc = config.Connection{Command: fc.Command, Args: fc.Args, Env: fc.Env}
	}
	cfg.Connections = map[string]config.Connection{"fake": cc}
	st, err := store.Open(ctx, cfg.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, ctx: ctx, root: root, cfg: cfg, st: st, fake: fake}
	e.rescan()
	e.opts = gbrain.Options{ExpectedSource: testSource, HandshakeTimeout: 10 * time.Second, CallTimeout: envCallTimeout}
	e.conn = e.newConn(e.opts)
	e.set = SettingsFrom(cfg, st)
	e.pol = catalog.PolicyFrom(cfg)
	return e
}

// dialer dials the env's fake with opts.
func (e *env) dialer(opts gbrain.Options) Dialer {
	d := e.fake.Dialer(opts)
	return func(ctx context.Context) (gbrain.Brain, error) {
		c, err := d(ctx)
		if err != nil {
			return nil, err
		}
		return c, nil
	}
}

// newConn is a connection to the env's fake (closed at cleanup).
func (e *env) newConn(opts gbrain.Options) *Conn {
	c := NewConnDialer(e.dialer(opts), false)
	e.t.Cleanup(func() { c.Close() })
	return c
}

// service returns opt dialing the env's fake.
func (e *env) service(opt ServiceOptions) ServiceOptions {
	if e.fake.InProcess() && e.cfg.Connections["fake"].URL == "" {
		opt.Dial = e.dialer(gbrain.Options{ExpectedSource: e.cfg.GBrain.ExpectedSource, HandshakeTimeout: opt.HandshakeTimeout, CallTimeout: opt.CallTimeout})
	}
	return opt
}

func (e *env) rescan() {
	e.t.Helper()
	s, err := scan.Start(e.ctx, e.st, scan.OptionsFrom(e.cfg))
	if err != nil {
		e.t.Fatal(err)
	}
	defer s.Close()
	for {
		r, err := s.RunRound(e.ctx)
		if err != nil {
			e.t.Fatal(err)
		}
		if r.Finished {
			return
		}
	}
}

// projector returns a projector holding the lease (released at cleanup).
func (e *env) projector() *Projector {
	e.t.Helper()
	p := NewProjector(e.st, e.pol, e.set, e.conn, nil)
	p.RetryBudget = 500 * time.Millisecond
	if err := p.TryAcquire(e.ctx); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(p.Release)
	return p
}

func (e *env) drain(p *Projector) Report {
	e.t.Helper()
	rep, err := p.Drain(e.ctx)
	if err != nil {
		e.t.Fatalf("drain: %v (report %+v)", err, rep)
	}
	return rep
}

func (e *env) records() []*local.Project {
	e.t.Helper()
	var out []*local.Project
	err := e.st.View(e.ctx, func(r *store.Reader) error {
		return r.Projects(func(p *local.Project) error { out = append(out, p); return nil })
	})
	if err != nil {
		e.t.Fatal(err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Meta.Name < out[j].Meta.Name })
	return out
}

func (e *env) record(name string) *local.Project {
	e.t.Helper()
	for _, p := range e.records() {
		if p.Meta.Name == name {
			return p
		}
	}
	e.t.Fatalf("no record named %s", name)
	return nil
}

func (e *env) depth() int {
	e.t.Helper()
	n := 0
	if err := e.st.View(e.ctx, func(r *store.Reader) error { n = outbox.Depth(r); return nil }); err != nil {
		e.t.Fatal(err)
	}
	return n
}

func (e *env) state(id string) *State {
	e.t.Helper()
	var s *State
	if err := e.st.View(e.ctx, func(r *store.Reader) error {
		var err error
		s, err = readState(r, id)
		return err
	}); err != nil {
		e.t.Fatal(err)
	}
	return s
}

func (e *env) enqueue(ids ...string) {
	e.t.Helper()
	err := e.st.Update(e.ctx, func(tx *store.Tx) error {
		for _, id := range ids {
			p, err := tx.Project(id)
			if err != nil {
				return err
			}
			outbox.Enqueue(tx, id, p.RecordRevision)
		}
		return nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) slug(id string) string {
	s, err := gbrain.CardSlug(e.set.SlugPrefix, id)
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

// listed returns our cards as list_pages shows them (a fresh client).
func (e *env) listed() []string {
	e.t.Helper()
	c := e.fake.Dial(e.t, gbrain.Options{ExpectedSource: testSource})
	defer c.Close() // no process of the test's own outlives the look
	var slugs []string
	for off := 0; ; off += 100 {
		refs, err := c.ListPages(e.ctx, gbrain.ListOptions{Tag: gbrain.CardTag, Sort: gbrain.SortSlug, Limit: 100, Offset: off})
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

// calls returns get_page and put_page counts since the last reset.
func (e *env) calls() (get, put int) {
	e.t.Helper()
	c := e.fake.Calls(e.t)
	return c["get_page"], c["put_page"]
}

// snapshotRecords is every record and the policy, for "nothing local changed".
func (e *env) snapshotRecords() string {
	e.t.Helper()
	b, _ := json.Marshal(struct {
		R []*local.Project
		P uint64
	}{e.records(), e.pol.ViewKey()})
	return string(b)
}

// clientOf is the *gbrain.Client behind a Conn's Brain.
func clientOf(b gbrain.Brain) *gbrain.Client {
	if c, ok := b.(counted); ok {
		b = c.Brain
	}
	return b.(*gbrain.Client)
}
