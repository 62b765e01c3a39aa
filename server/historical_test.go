package server

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/catalog"
	"github.com/cgcat/cgcat/local/config"
	"github.com/cgcat/cgcat/local/pathid"
	"github.com/cgcat/cgcat/local/store"
)

// Mirrored GBrain cards of projects not bound here are historical
// candidates in search (after local hits, no path, the card's machine),
// and resolve answers for their ids; a card of a project this frontend
// hides never shows.
func TestHistoricalCards(t *testing.T) {
	fx := newFixture(t, nil)
	ctx := context.Background()
	st, err := store.Open(ctx, fx.dataDir)
	if err != nil {
		t.Fatal(err)
	}
	me := st.MachineID()
	other := &local.Card{Slug: "catalog/codegraph/cg_quasarquasarquas", ProjectID: "cg_quasarquasarquas", MachineID: "m_othermachine2345",
		Name: "quasar-engine", Description: "quasar rendering engine", RecordRevision: 4}
	lost := &local.Card{Slug: "catalog/codegraph/cg_zirconzirconzirc", ProjectID: "cg_zirconzirconzirc", MachineID: me,
		Name: "zircon-tools", Description: "zircon build tools", RootKey: "0123456789abcdef0123456789abcdef"}
	// This machine's card of the denied project, under an old id.
	hidden := &local.Card{Slug: "catalog/codegraph/cg_hiddenhiddenhidd", ProjectID: "cg_hiddenhiddenhidd", MachineID: me,
		Name: "zebracorn-vault", Description: "quokka classified ledger", RootKey: st.Identity().RootKey(pathid.Key(filepath.Join(fx.root, "secret", "zebracorn")))}
	// This machine's card of a visible project, under an old id: it moved to the new one.
	alpha := filepath.Join(fx.root, "alpha")
	older := &local.Card{Slug: "catalog/codegraph/cg_olderolderolder2", ProjectID: "cg_olderolderolder2", MachineID: me,
		Name: "alpha-svc", RootKey: st.Identity().RootKey(pathid.Key(alpha))}
	if err := st.Update(ctx, func(tx *store.Tx) error {
		for _, c := range []*local.Card{other, lost, hidden, older} {
			if err := tx.PutCard(c); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	frontend := func(enabled bool, deny ...string) *Frontend {
		cfg := config.Default()
		cfg.DataDir = fx.dataDir
		cfg.Discovery.Roots, cfg.Sharing.Roots, cfg.Sharing.DenyRoots = []string{fx.root}, []string{fx.root}, deny
		cfg.GBrain.Enabled = enabled
		f := NewFrontend(Options{Config: config.Fixed(&cfg), Open: func(ctx context.Context, _ *config.Config) (*catalog.Catalog, Discovery, error) {
			cat, err := catalog.Load(ctx, st)
			return cat, nil, err
		}})
		if err := f.Ready(ctx); err != nil {
			t.Fatal(err)
		}
		return f
	}
	f := frontend(true, fx.secretRoot)
	e, _ := f.Projects(ctx, ProjectsArgs{Query: "quasar", Limit: 5})
	if len(e.Projects) != 1 || e.Projects[0].Availability != AvailabilityHistorical || e.Projects[0].ProjectPath != nil ||
		e.Projects[0].Handoff != nil || e.Projects[0].MachineID != other.MachineID || !strings.Contains(strings.Join(e.Projects[0].Reason, " "), other.MachineID) {
		t.Fatalf("another machine's card: %+v", e.Projects)
	}
	if e, _ := f.Projects(ctx, ProjectsArgs{Query: "zircon", Limit: 5}); len(e.Projects) != 1 || e.Projects[0].ProjectID != lost.ProjectID {
		t.Fatalf("this machine's card from a lost catalog: %+v", e.Projects)
	}
	if e, _ := f.Projects(ctx, ProjectsArgs{Query: "quokka zebracorn", Limit: 50}); fx.leak(e) != "" || len(e.Projects) != 0 {
		t.Fatalf("a card of a hidden project shows: %+v", e.Projects)
	}
	if e, _ := f.Resolve(ctx, ResolveArgs{ProjectID: hidden.ProjectID}); e.Status == StatusOK || fx.leak(e) != "" {
		t.Fatalf("resolve of a hidden project's old card: %s %+v", e.Status, e.Projects)
	}
	// Local hits first.
	e, _ = f.Projects(ctx, ProjectsArgs{Query: "alpha", Limit: 5})
	if len(e.Projects) == 0 || e.Projects[0].Availability == AvailabilityHistorical {
		t.Fatalf("a local hit must rank before cards: %+v", e.Projects)
	}
	// Resolve.
	r, _ := f.Resolve(ctx, ResolveArgs{ProjectID: other.ProjectID})
	if r.Status != StatusOK || len(r.Projects) != 1 || r.Projects[0].Availability != AvailabilityHistorical || r.Projects[0].MachineID != other.MachineID || r.Projects[0].ProjectPath != nil {
		t.Fatalf("resolve of another machine's id: %s %+v", r.Status, r.Projects)
	}
	r, _ = f.Resolve(ctx, ResolveArgs{ProjectID: older.ProjectID})
	alphaID := ""
	if all, _ := f.Projects(ctx, ProjectsArgs{Query: "alpha-svc", Limit: 1}); len(all.Projects) == 1 {
		alphaID = all.Projects[0].ProjectID
	}
	if r.Status != StatusMissing || len(r.Projects) != 1 || r.Projects[0].MovedTo != alphaID || alphaID == "" {
		t.Fatalf("this machine's old id of a project known under a newer one: %s %+v (want movedTo %s)", r.Status, r.Projects, alphaID)
	}
	if r, _ := f.Resolve(ctx, ResolveArgs{ProjectID: lost.ProjectID}); r.Status != StatusMissing || r.Projects[0].MovedTo != "" || r.Projects[0].ProjectPath != nil {
		t.Fatalf("this machine's card without a record: %s %+v", r.Status, r.Projects)
	}
	// GBrain off: no cards at all.
	off := frontend(false)
	if e, _ := off.Projects(ctx, ProjectsArgs{Query: "quasar", Limit: 5}); len(e.Projects) != 0 {
		t.Fatalf("cards with GBrain off: %+v", e.Projects)
	}
	if r, _ := off.Resolve(ctx, ResolveArgs{ProjectID: other.ProjectID}); r.Status != StatusUnknownProject {
		t.Fatalf("resolve with GBrain off: %s", r.Status)
	}
}
