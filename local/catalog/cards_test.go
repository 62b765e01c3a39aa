package catalog

import (
	"context"
	"testing"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/ids"
	"github.com/cgcat/cgcat/local/store"
)

// Only cards of projects not bound here are ranked (this machine's own
// cards never are answers, and ranking them would double a search's work):
// a card leaves the card search when its project is bound, and comes back
// when the record is forgotten — in a reader following deltas and in a
// reader loading the whole snapshot alike.
func TestCardSearchRanksOnlyUnboundCards(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	follower, err := Load(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	rec := &local.Project{ID: ids.NewProjectID(), Root: "/code/quasar", Meta: local.Metadata{Name: "quasar"}, RecordRevision: 1}
	other := &local.Card{Slug: "catalog/codegraph/cg_aaaaaaaaaaaaaaaa", ProjectID: "cg_aaaaaaaaaaaaaaaa", MachineID: "m_other", Name: "quasar-elsewhere"}
	own := &local.Card{Slug: "catalog/codegraph/" + rec.ID, ProjectID: rec.ID, MachineID: st.MachineID(), Name: "quasar"}
	update := func(fn func(tx *store.Tx) error) {
		t.Helper()
		if err := st.Update(ctx, fn); err != nil {
			t.Fatal(err)
		}
	}
	found := func(c *Catalog) map[string]bool {
		t.Helper()
		if err := c.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for _, h := range c.SearchCards("quasar", func(*local.Card) bool { return true }, 10) {
			out[h.ID] = true
		}
		return out
	}
	fresh := func() map[string]bool {
		t.Helper()
		c, err := Load(ctx, st)
		if err != nil {
			t.Fatal(err)
		}
		return found(c)
	}
	check := func(when string, wantOwn bool) {
		t.Helper()
		for name, got := range map[string]map[string]bool{"follower": found(follower), "fresh reader": fresh()} {
			if !got[other.Slug] || got[own.Slug] != wantOwn || len(follower.CardsOf(rec.ID)) != 1 {
				t.Errorf("%s, %s: found %v (own card wanted: %v)", when, name, got, wantOwn)
			}
		}
	}
	// Cards first (a mirror refresh), then the record bound (a scan).
	update(func(tx *store.Tx) error {
		if err := tx.PutCard(other); err != nil {
			return err
		}
		return tx.PutCard(own)
	})
	check("before the record is bound", true)
	update(func(tx *store.Tx) error { return tx.PutProject(rec) })
	check("bound", false)
	// The card refreshed while bound stays out.
	own.Description = "refreshed"
	update(func(tx *store.Tx) error { return tx.PutCard(own) })
	check("bound, card refreshed", false)
	update(func(tx *store.Tx) error { return tx.DeleteProject(rec.ID) })
	check("forgotten", true)
}
