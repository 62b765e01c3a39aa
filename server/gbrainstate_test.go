package server

import (
	"context"
	"testing"
	"time"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/catalog"
	"github.com/cgcat/cgcat/local/config"
	"github.com/cgcat/cgcat/local/store"
)

// gbrainState is the same truth on every answer — a listing without a
// query and a resolve too, not only searches: ok only while the last word
// from GBrain is recent and good, degraded otherwise, disabled when off.
func TestGBrainStateOnEveryAnswer(t *testing.T) {
	fx := newFixture(t, nil)
	ctx := context.Background()
	st, err := store.Open(ctx, fx.dataDir)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	frontend := func(enabled bool) *Frontend {
		cfg := config.Default()
		cfg.DataDir = fx.dataDir
		cfg.Discovery.Roots, cfg.Sharing.Roots = []string{fx.root}, []string{fx.root}
		cfg.GBrain.Enabled = enabled
		f := NewFrontend(Options{Config: config.Fixed(&cfg), Now: func() time.Time { return now }, Open: func(ctx context.Context, _ *config.Config) (*catalog.Catalog, Discovery, error) {
			cat, err := catalog.Load(ctx, st)
			return cat, nil, err
		}})
		if err := f.Ready(ctx); err != nil {
			t.Fatal(err)
		}
		return f
	}
	states := func(f *Frontend) []string {
		list, err := f.Projects(ctx, ProjectsArgs{Limit: 5})
		if err != nil || len(list.Projects) == 0 {
			t.Fatalf("listing: %v %+v", err, list)
		}
		res, err := f.Resolve(ctx, ResolveArgs{ProjectID: list.Projects[0].ProjectID})
		if err != nil {
			t.Fatal(err)
		}
		miss, _ := f.Resolve(ctx, ResolveArgs{ProjectID: "cg_aaaaaaaaaaaaaaaa"})
		return []string{list.GBrainState, res.GBrainState, miss.GBrainState}
	}
	set := func(c local.GBrainContact) {
		if err := st.Update(ctx, func(tx *store.Tx) error { tx.PutGBrainContact(c); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	all := func(got []string, want string) {
		t.Helper()
		for _, g := range got {
			if g != want {
				t.Fatalf("gbrainState %v, want %s on every answer", got, want)
			}
		}
	}
	all(states(frontend(false)), GBrainDisabled)
	all(states(frontend(true)), GBrainDegraded) // never heard from GBrain
	set(local.GBrainContact{OK: true, At: now.Add(-time.Second)})
	all(states(frontend(true)), GBrainOK)
	set(local.GBrainContact{OK: false, At: now, Error: "connection refused"})
	all(states(frontend(true)), GBrainDegraded)
	set(local.GBrainContact{OK: true, At: now.Add(-10 * time.Minute)}) // old news
	all(states(frontend(true)), GBrainDegraded)
}
