package server

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/catalog"
	"github.com/cgcat/cgcat/local/config"
	"github.com/cgcat/cgcat/local/ids"
	"github.com/cgcat/cgcat/local/store"
)

// fixture is a small catalog on disk with two frontends over it: "open"
// sees everything, "deny" has the secret tree under a deny root.
type fixture struct {
	root, secretRoot string
	dataDir          string
	open, deny       *Frontend
	secrets          []string // names, paths and ids that deny must never show
}

func newFixture(tb testing.TB, now func() time.Time) *fixture {
	tb.Helper()
	dir, err := filepath.EvalSymlinks(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	fx := &fixture{root: filepath.Join(dir, "code"), secretRoot: filepath.Join(dir, "code", "secret")}
	type rec struct{ rel, name, desc string }
	recs := []rec{
		{"alpha", "alpha-svc", "alpha service for orders"},
		{"beta", "beta-lib", "订单 客户端 library"},
		{"gamma", "gamma", "gamma tools"},
		{"nested/delta", "delta", "delta worker"},
		{"secret/zebracorn", "zebracorn-vault", "quokka classified ledger"},
		{"secret/zebracorn/inner", "okapi-inner", "okapi hidden"},
	}
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(dir, "data"))
	if err != nil {
		tb.Fatal(err)
	}
	err = st.Update(ctx, func(tx *store.Tx) error {
		for _, r := range recs {
			p := filepath.Join(fx.root, r.rel)
			MakeProjectDir(tb, p)
			m := local.Metadata{Name: r.name, Description: r.desc, Packages: []string{"@fx/" + r.name}}
			rec := &local.Project{ID: ids.NewProjectID(), Root: p, RecordRevision: 1, Meta: m,
				Availability: local.Present, IndexState: local.MarkerPresent}
			if err := tx.PutProject(rec); err != nil {
				return err
			}
			if strings.HasPrefix(r.rel, "secret/") {
				fx.secrets = append(fx.secrets, r.name, rec.ID, p, "@fx/"+r.name)
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	fx.secrets = append(fx.secrets, fx.secretRoot, "zebracorn", "quokka", "okapi")
	fx.dataDir = filepath.Join(dir, "data")
	fx.open = fx.frontend(tb, Options{Now: now})
	fx.deny = fx.frontend(tb, Options{Now: now}, fx.secretRoot)
	return fx
}

// frontend opens another frontend over the fixture's catalog.
func (fx *fixture) frontend(tb testing.TB, opt Options, deny ...string) *Frontend {
	tb.Helper()
	cfg := config.Default()
	cfg.DataDir = fx.dataDir
	cfg.Discovery.Roots = []string{fx.root}
	cfg.Sharing.Roots = []string{fx.root}
	cfg.Sharing.DenyRoots = deny
	cfg.GBrain.Enabled = opt.Recall != nil        // recall is wired only when GBrain is on
	cfg.GBrain.SemanticSearch = opt.Recall != nil // and asked only with gbrain.semanticSearch
	opt.Config = config.Fixed(&cfg)
	opt.Open = func(ctx context.Context, _ *config.Config) (*catalog.Catalog, Discovery, error) {
		st, err := store.Open(ctx, cfg.DataDir)
		if err != nil {
			return nil, nil, err
		}
		cat, err := catalog.Load(ctx, st)
		return cat, nil, err
	}
	f := NewFrontend(opt)
	if err := f.Ready(context.Background()); err != nil {
		tb.Fatal(err)
	}
	return f
}

// leak reports the first secret an answer shows. A secret the caller wrote
// itself (in the query, say) may be echoed back and is not a leak.
func (fx *fixture) leak(e *Envelope, asked ...string) string {
	b, _ := json.Marshal(e)
	text := Text(e)
	for _, s := range fx.secrets {
		echo := false
		for _, a := range asked {
			if strings.Contains(strings.ToLower(a), strings.ToLower(s)) {
				echo = true
			}
		}
		if !echo && (strings.Contains(string(b), s) || strings.Contains(text, s)) {
			return s
		}
	}
	return ""
}

// FuzzAnswers: whatever typed arguments pass Validate, the denying
// frontend's answers never show what it hides (the JSON decoding of a
// tool call's arguments is fuzzed in package protocol).
func FuzzAnswers(f *testing.F) {
	f.Add("订单 客户端", "", 50, "", "cg_aaaaaaaaaaaaaaaa", uint64(3))
	f.Add("zebracorn", "/abs", 5, "", "", uint64(0))
	f.Add("quokka okapi", "rel/dir", 0, "x", "zebracorn", uint64(1))
	f.Add(strings.Repeat("a", 1001), "", 51, "eyJ9.AA", "\x00", uint64(1<<60))
	fx := newFixture(f, nil)
	f.Fuzz(func(t *testing.T, query, ws string, limit int, cursor, id string, rev uint64) {
		pa := ProjectsArgs{Query: query, WorkspacePath: ws, Limit: limit, Cursor: cursor}
		if err := pa.Validate(); err != nil {
			checkArgError(t, err)
		} else {
			if pa.Limit < 1 || pa.Limit > MaxLimit || utf8.RuneCountInString(pa.Query) > MaxQuery || utf8.RuneCountInString(pa.Cursor) > MaxCursor {
				t.Fatalf("out-of-range arguments accepted: %+v", pa)
			}
			if pa.WorkspacePath != "" && !filepath.IsAbs(pa.WorkspacePath) {
				t.Fatalf("relative workspacePath accepted: %q", pa.WorkspacePath)
			}
			e, err := fx.deny.Projects(context.Background(), pa)
			if err != nil {
				t.Fatalf("Projects: %v", err)
			}
			if s := fx.leak(e, pa.Query, pa.WorkspacePath); s != "" {
				t.Fatalf("answer shows %q", s)
			}
		}
		ra := ResolveArgs{ProjectID: id, ExpectedRecordRevision: rev}
		if err := ra.Validate(); err != nil {
			checkArgError(t, err)
			return
		}
		e, err := fx.deny.Resolve(context.Background(), ra)
		if err != nil {
			t.Fatalf("Resolve: %v", err)
		}
		if s := fx.leak(e); s != "" {
			t.Fatalf("resolve shows %q", s)
		}
	})
}

func checkArgError(t *testing.T, err error) {
	t.Helper()
	var ae *ArgError
	if !errors.As(err, &ae) {
		t.Fatalf("error %T is not an *ArgError: %v", err, err)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "invalid argument") || len(msg) > 400 || !utf8.ValidString(msg) {
		t.Fatalf("unhelpful error text: %q", msg)
	}
	if ae.Arg != "" && !strings.Contains(msg, strconv.Quote(ae.Arg)) {
		t.Fatalf("error does not name %q: %q", ae.Arg, msg)
	}
}

func FuzzCursor(f *testing.F) {
	fx := newFixture(f, nil)
	ctx := context.Background()
	// Seeds: genuine cursors of both frontends (the open one's snapshots
	// hold the denied ids), and near misses.
	for _, fr := range []*Frontend{fx.open, fx.deny} {
		for _, q := range []string{"", "zebracorn", "service"} {
			for _, limit := range []int{1, 2} {
				e, err := fr.Projects(ctx, ProjectsArgs{Query: q, Limit: limit})
				if err != nil {
					f.Fatal(err)
				}
				if e.NextCursor != nil {
					c := *e.NextCursor
					f.Add(c, q, uint8(limit))
					f.Add(c+"x", q, uint8(limit))
					f.Add(strings.Replace(c, ".", "", 1), q, uint8(limit))
				}
			}
		}
	}
	f.Add("", "", uint8(5))
	f.Add(".", "x", uint8(0))
	f.Add("eyJzIjoiIiwibyI6MSwiYiI6MH0.AAAAAAAAAAAAAAAAAAAAAAAA", "", uint8(1))
	f.Fuzz(func(t *testing.T, cursor, query string, limit uint8) {
		a := ProjectsArgs{Cursor: cursor, Query: query, Limit: 1 + int(limit)%50}
		for _, fr := range []*Frontend{fx.deny, fx.open} {
			e, err := fr.Projects(ctx, a)
			if err != nil {
				t.Fatalf("Projects: %v", err)
			}
			switch e.Status {
			case StatusOK, StatusNoMatches, StatusCursorExpired:
			default:
				t.Fatalf("status %s", e.Status)
			}
			if cursor != "" && e.Status != StatusCursorExpired && e.NextCursor != nil && *e.NextCursor == cursor {
				t.Fatalf("a page handed back its own cursor")
			}
			if fr == fx.deny {
				if s := fx.leak(e, query); s != "" {
					t.Fatalf("cursor %q query %q: the denying frontend shows %q", cursor, query, s)
				}
			}
		}
	})
}

// TestCursorExpiresWithItsSnapshot: a cursor stops working when its
// snapshot's time is up (R20), and a listing's pages never mix snapshots.
func TestCursorExpiresWithItsSnapshot(t *testing.T) {
	now := time.Now()
	clock := func() time.Time { return now }
	fx := newFixture(t, clock)
	ctx := context.Background()
	e, err := fx.deny.Projects(ctx, ProjectsArgs{Limit: 1})
	if err != nil || e.NextCursor == nil {
		t.Fatalf("%v %+v", err, e)
	}
	c := *e.NextCursor
	now = now.Add(14 * time.Minute)
	if e, _ := fx.deny.Projects(ctx, ProjectsArgs{Limit: 1, Cursor: c}); e.Status != StatusOK {
		t.Fatalf("a 14-minute-old cursor: %s", e.Status)
	}
	now = now.Add(2 * time.Minute)
	if e, _ := fx.deny.Projects(ctx, ProjectsArgs{Limit: 1, Cursor: c}); e.Status != StatusCursorExpired {
		t.Fatalf("a 16-minute-old cursor: %s", e.Status)
	}
	// The other frontend (another view, same secret) refuses it too.
	e, _ = fx.open.Projects(ctx, ProjectsArgs{Limit: 1})
	if e2, _ := fx.deny.Projects(ctx, ProjectsArgs{Limit: 1, Cursor: *e.NextCursor}); e2.Status != StatusCursorExpired {
		t.Fatalf("a cursor of another view: %s", e2.Status)
	}
}

// TestNoRootsNoScan: without roots nothing is opened (R3).
func TestNoRootsNoScan(t *testing.T) {
	cfg := config.Default()
	cfg.DataDir = filepath.Join(t.TempDir(), "data")
	opened := false
	f := NewFrontend(Options{Config: config.Fixed(&cfg), Open: func(context.Context, *config.Config) (*catalog.Catalog, Discovery, error) {
		opened = true
		return nil, nil, errors.New("must not open")
	}})
	e, err := f.Projects(context.Background(), ProjectsArgs{Limit: 5})
	if err != nil || e.Status != StatusSetupRequired || opened {
		t.Fatalf("%v %+v opened=%v", err, e, opened)
	}
	if _, err := os.Stat(cfg.DataDir); err == nil {
		t.Fatalf("data dir created")
	}
}

type fakeRecall struct {
	hits  []RecallHit
	err   error
	delay time.Duration
}

func (r fakeRecall) Recall(ctx context.Context, _ string, _ int) ([]RecallHit, error) {
	select {
	case <-time.After(r.delay):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return r.hits, r.err
}

// TestRecall: GBrain recall adds only this machine's cards bound to local,
// visible records; down or slow GBrain leaves local results and says
// degraded (R31, R32).
func TestRecall(t *testing.T) {
	fx := newFixture(t, nil)
	ctx := context.Background()
	all, _ := fx.open.Projects(ctx, ProjectsArgs{Limit: 50})
	ids := map[string]string{}
	for _, p := range all.Projects {
		ids[p.Name] = p.ProjectID
	}
	me := fx.deny.Catalog().MachineID()
	st, err := store.Open(ctx, fx.dataDir)
	if err != nil {
		t.Fatal(err)
	}
	// GBrain answered the lease holder a moment ago: the shared truth is ok.
	// Recall only adds hits; its failure makes this answer degraded.
	if err := st.Update(ctx, func(tx *store.Tx) error {
		tx.PutGBrainContact(local.GBrainContact{OK: true, At: time.Now().UTC()})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	with := func(r Recall) *Frontend {
		return fx.frontend(t, Options{Recall: r, RecallBudget: 50 * time.Millisecond}, fx.secretRoot)
	}
	// "gamma" matches nothing lexically for this query; recall adds it.
	hits := []RecallHit{
		{ProjectID: ids["gamma"], MachineID: me},
		{ProjectID: ids["zebracorn-vault"], MachineID: me},  // denied here
		{ProjectID: ids["delta"], MachineID: "m_elsewhere"}, // another machine's card
		{ProjectID: "cg_aaaaaaaaaaaaaaaa", MachineID: me},   // not bound locally
		{ProjectID: "../../etc", MachineID: me},             // tampered
	}
	e, err := with(fakeRecall{hits: hits}).Projects(ctx, ProjectsArgs{Query: "alpha", Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range e.Projects {
		names = append(names, p.Name)
	}
	if e.GBrainState != GBrainOK || len(names) != 2 || names[0] != "alpha-svc" || names[1] != "gamma" {
		t.Fatalf("recall: %s %v", e.GBrainState, names)
	}
	if s := fx.leak(e); s != "" {
		t.Fatalf("recall leaked %q", s)
	}
	for _, r := range []fakeRecall{{err: errors.New("connection refused")}, {delay: time.Second, hits: hits}} {
		e, err := with(r).Projects(ctx, ProjectsArgs{Query: "alpha", Limit: 50})
		if err != nil || e.GBrainState != GBrainDegraded || len(e.Projects) != 1 || e.Projects[0].Name != "alpha-svc" {
			t.Fatalf("GBrain down or slow: %v %s %d", err, e.GBrainState, len(e.Projects))
		}
	}
}

// TestPagingBounds: a plain listing pages through the whole catalog (the
// only way to enumerate it); a search keeps at most maxHits for paging.
func TestPagingBounds(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	const n = maxHits + 100
	root := filepath.Join(dir, "code")
	fx := &fixture{root: root, dataDir: filepath.Join(dir, "data")}
	writeCatalog(t, fx.dataDir, root, n)
	f := fx.frontend(t, Options{})
	walk := func(query string) (count int) {
		seen := map[string]bool{}
		a := ProjectsArgs{Query: query, Limit: 50}
		for range 100 {
			e, err := f.Projects(context.Background(), a)
			if err != nil || e.Status != StatusOK {
				t.Fatalf("%v %v", err, e.Status)
			}
			for _, p := range e.Projects {
				if seen[p.ProjectID] {
					t.Fatalf("%s seen twice", p.Name)
				}
				seen[p.ProjectID] = true
			}
			if e.NextCursor == nil {
				return len(seen)
			}
			a.Cursor = *e.NextCursor
		}
		t.Fatal("paging does not end")
		return 0
	}
	if got := walk(""); got != n {
		t.Errorf("plain listing walked %d of %d", got, n)
	}
	if got := walk("bench"); got != maxHits {
		t.Errorf("search walked %d, want the top %d", got, maxHits)
	}
}
