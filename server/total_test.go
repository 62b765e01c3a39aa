package server

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cgcat/cgcat/local/catalog"
	"github.com/cgcat/cgcat/local/config"
	"github.com/cgcat/cgcat/local/store"
)

// TestTotalAndOffset: Total counts the whole listing of this view, also
// past the best maxHits a search keeps for paging, and never a hidden
// project; Offset starts a fresh listing at a position; neither reaches
// the tool's answer.
func TestTotalAndOffset(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root, dataDir := filepath.Join(base, "code"), filepath.Join(base, "data")
	const n = maxHits + 200
	ids := writeCatalog(t, dataDir, root, n)
	frontend := func(face Face, deny ...string) *Frontend {
		cfg := config.Default()
		cfg.DataDir = dataDir
		cfg.Discovery.Roots, cfg.Sharing.Roots, cfg.Sharing.DenyRoots = []string{root}, []string{root}, deny
		f := NewFrontend(Options{Face: face, Config: config.Fixed(&cfg), Open: func(ctx context.Context, _ *config.Config) (*catalog.Catalog, Discovery, error) {
			st, err := store.Open(ctx, dataDir)
			if err != nil {
				return nil, nil, err
			}
			cat, err := catalog.Load(ctx, st)
			return cat, nil, err
		}})
		if err := f.Ready(context.Background()); err != nil {
			t.Fatal(err)
		}
		return f
	}
	ctx := context.Background()
	f := frontend(FaceAgent)
	// Every bench project's package is "@bench/<name>": the query "bench"
	// matches all of them, more than a search keeps.
	// A workspace hint reorders the listing; the total stays.
	ws := filepath.Join(root, BenchName(3))
	for _, a := range []ProjectsArgs{{Limit: 50}, {Query: "bench", Limit: 50}, {Limit: 50, WorkspacePath: ws}, {Query: "bench", Limit: 50, WorkspacePath: ws}} {
		q := a.Query + " workspace=" + a.WorkspacePath
		e, err := f.Projects(ctx, a)
		if err != nil || e.Status != StatusOK || len(e.Projects) != 50 {
			t.Fatalf("%q: %v %+v", q, err, e)
		}
		if e.Total != n {
			t.Errorf("%q: Total %d, want %d", q, e.Total, n)
		}
		b, _ := json.Marshal(e)
		if strings.Contains(string(b), `"total"`) || strings.Contains(string(b), `"offset"`) {
			t.Errorf("the tool's answer carries the CLI's fields: %s", b[:200])
		}
	}
	// Offset: the page at a position is the same as the cursor's page there.
	first, _ := f.Projects(ctx, ProjectsArgs{Limit: 7})
	second, _ := f.Projects(ctx, ProjectsArgs{Limit: 7, Cursor: *first.NextCursor})
	at, _ := f.Projects(ctx, ProjectsArgs{Limit: 7, Offset: 7})
	if len(at.Projects) != 7 || at.Projects[0].ProjectID != second.Projects[0].ProjectID || at.Projects[6].ProjectID != second.Projects[6].ProjectID {
		t.Fatalf("offset 7 is not the second page")
	}
	if past, _ := f.Projects(ctx, ProjectsArgs{Limit: 7, Offset: n}); past.Status != StatusOK || len(past.Projects) != 0 || past.Total != n || past.NextCursor != nil {
		t.Fatalf("past the end: %+v", past)
	}
	for _, a := range []ProjectsArgs{{Limit: 5, Offset: -1}, {Limit: 5, Offset: 5, Cursor: *first.NextCursor}} {
		if err := a.Validate(); err == nil || !strings.Contains(err.Error(), `"offset"`) {
			t.Errorf("%+v: %v", a, err)
		}
	}
	// A deny root: what it hides is not counted.
	hidden := filepath.Join(root, BenchName(0))
	d := frontend(FaceCLI, hidden)
	for _, q := range []string{"", "bench"} {
		if e, _ := d.Projects(ctx, ProjectsArgs{Query: q, Limit: 5}); e.Total != n-1 {
			t.Errorf("%q with a deny root: Total %d, want %d", q, e.Total, n-1)
		}
	}
	// The faces differ in their words only.
	agent, _ := f.Resolve(ctx, ResolveArgs{ProjectID: "cg_aaaaaaaaaaaaaaaa"})
	person, _ := d.Resolve(ctx, ResolveArgs{ProjectID: "cg_aaaaaaaaaaaaaaaa"})
	if agent.Status != person.Status || !strings.Contains(agent.Message, "local_codegraph_projects") || !strings.Contains(person.Message, "`cgcat projects QUERY`") ||
		strings.Contains(person.Message, "local_codegraph") {
		t.Errorf("agent %q\nperson %q", agent.Message, person.Message)
	}
	if e, _ := d.Resolve(ctx, ResolveArgs{ProjectID: ids[0]}); e.Status != StatusNotAvailable || e.Message != "This project is not shared by this configuration." {
		t.Errorf("hidden, for a person: %s %q", e.Status, e.Message)
	}
}
