package server

import (
	"context"
	"os"
	"testing"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/catalog"
	"github.com/cgcat/cgcat/local/config"
	"github.com/cgcat/cgcat/local/store"
	"github.com/cgcat/cgcat/local/view"
)

// liveCards is GBrain answering a card lookup (its card not retracted yet).
type liveCards map[string]*local.Card

func (l liveCards) LookupCard(_ context.Context, id string) (*local.Card, error) { return l[id], nil }

// A forgotten id resolves unknown_project at once, also while GBrain still
// holds its card (the projector retracts it a few seconds later): the
// catalog saw the id deleted, so GBrain's copy is not asked. (The lifecycle
// test, seed 524151755 step 14: `missing`, from the live card.)
func TestForgottenIDIsUnknownWhileGBrainStillHasItsCard(t *testing.T) {
	fx := newFixture(t, nil)
	ctx := context.Background()
	st, err := store.Open(ctx, fx.dataDir)
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.DataDir = fx.dataDir
	cfg.Discovery.Roots, cfg.Sharing.Roots = []string{fx.root}, []string{fx.root}
	cfg.GBrain.Enabled = true
	var cat *catalog.Catalog
	f := NewFrontend(Options{Config: config.Fixed(&cfg), Open: func(ctx context.Context, _ *config.Config) (*catalog.Catalog, Discovery, error) {
		c, err := catalog.Load(ctx, st)
		cat = c
		return c, nil, err
	}})
	if err := f.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	e, _ := f.Projects(ctx, ProjectsArgs{Query: "gamma", Limit: 1})
	if len(e.Projects) != 1 {
		t.Fatalf("fixture: %+v", e.Projects)
	}
	id := e.Projects[0].ProjectID
	card := &local.Card{Slug: "catalog/codegraph/" + id, ProjectID: id, MachineID: st.MachineID(), Name: "gamma"}
	f.opt.Cards = liveCards{id: card}
	// `cgcat forget`: the record goes, the retraction is queued.
	if err := st.Update(ctx, func(tx *store.Tx) error { return tx.DeleteProject(id) }); err != nil {
		t.Fatal(err)
	}
	if err := cat.ForceSync(ctx); err != nil {
		t.Fatal(err)
	}
	if r, _ := f.Resolve(ctx, ResolveArgs{ProjectID: id}); r.Status != StatusUnknownProject {
		t.Fatalf("resolve of a forgotten id while GBrain still has its card: %s %+v", r.Status, r.Projects)
	}
	// A process that starts from a base published after the forget knows
	// it too (the base carries the store's forgotten ids).
	// (Without the pointer the next commit publishes a whole new base.)
	if err := os.Remove(view.PointerFile(fx.dataDir)); err != nil {
		t.Fatal(err)
	}
	if err := st.Update(ctx, func(tx *store.Tx) error { tx.PutGBrainContact(local.GBrainContact{OK: true}); return nil }); err != nil {
		t.Fatal(err)
	}
	later := NewFrontend(Options{Config: config.Fixed(&cfg), Cards: liveCards{id: card}, Open: func(ctx context.Context, _ *config.Config) (*catalog.Catalog, Discovery, error) {
		c, err := catalog.Load(ctx, st)
		return c, nil, err
	}})
	if err := later.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	if r, _ := later.Resolve(ctx, ResolveArgs{ProjectID: id}); r.Status != StatusUnknownProject {
		t.Fatalf("a process started from a new base: resolve of the forgotten id: %s %+v", r.Status, r.Projects)
	}
	// An id this catalog never saw deleted is still resolved from GBrain.
	other := "cg_neverheardofit23"
	f.opt.Cards = liveCards{other: &local.Card{Slug: "catalog/codegraph/" + other, ProjectID: other, MachineID: "m_othermachine2345", Name: "far"}}
	if r, _ := f.Resolve(ctx, ResolveArgs{ProjectID: other}); r.Status != StatusOK || len(r.Projects) != 1 || r.Projects[0].Availability != AvailabilityHistorical {
		t.Fatalf("resolve of another machine's id from GBrain: %s %+v", r.Status, r.Projects)
	}
}
