package catalog

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/ids"
	"github.com/cgcat/cgcat/local/search"
	"github.com/cgcat/cgcat/local/store"
)

// A catalog that follows commits — into the overlay over its mapped base,
// and through new bases as they are published — answers exactly as an
// in-memory index of the store's records filtered by the policy: hits,
// order, reasons, totals, suggestions, listing, records, lookups by root.
func TestCatalogFollowsCommitsExactly(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(11, 12))
	words := strings.Fields("order billing gateway react router cobra alpha kafka payments refund worker ledger 订单 客户端 client server")
	w := func() string { return words[r.IntN(len(words))] }
	readme := strings.Repeat("a paragraph about "+w()+" and "+w()+" ", 60) // deltas weigh enough for new bases
	live := map[string]*local.Project{}
	gone := map[string]*local.Project{} // forgotten records
	newRecord := func() *local.Project {
		top := []string{"/code", "/code", "/code/secret", "/elsewhere"}[r.IntN(4)]
		name := fmt.Sprintf("%s-%s", w(), w())
		return &local.Project{
			ID: ids.NewProjectID(), Root: fmt.Sprintf("%s/%s/%s%d", top, w(), name, r.IntN(1e6)),
			Availability: []local.Availability{local.Present, local.Present, local.Missing}[r.IntN(3)],
			Meta: local.Metadata{Name: name, Description: w() + " " + w() + " service", Readme: readme,
				Packages: []string{"@" + w() + "/" + name}, Keywords: []string{w()}},
			Lineage: []string{"dev:1", fmt.Sprint("dev:", r.IntN(40))},
		}
	}
	commit := func(put []*local.Project, del []string) {
		t.Helper()
		if err := st.Update(ctx, func(tx *store.Tx) error {
			for _, p := range put {
				if err := tx.PutProject(p); err != nil {
					return err
				}
			}
			for _, id := range del {
				if err := tx.DeleteProject(id); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		for _, p := range put {
			cp := *p
			live[p.ID] = &cp
		}
		for _, id := range del {
			gone[id] = live[id]
			delete(live, id)
		}
	}
	var first []*local.Project
	for range 120 {
		first = append(first, newRecord())
	}
	commit(first, nil)
	cat, err := Load(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	pol := Policy{Discovery: []string{"/code"}, Share: []string{"/code"}, Deny: []string{"/code/secret"}, DenyIDs: []string{"dev:7"}}
	queries := []string{"order", "billing gateway", "cobar", "refnud worker", "订单", "react-router", "client service", "paragraph", "kafak", "@alpha"}
	bases := map[uint64]bool{}
	for step := range 70 {
		var put []*local.Project
		var del []string
		idList := slices.Sorted(maps.Keys(live))
		for range 1 + r.IntN(6) {
			switch k := r.IntN(10); {
			case k < 4:
				put = append(put, newRecord())
			case k < 8 && len(idList) > 0: // a changed record: new metadata, same root
				cp := *live[idList[r.IntN(len(idList))]]
				cp.Meta.Name = w() + "-" + w()
				cp.Meta.Description = w() + " " + w()
				cp.Availability = []local.Availability{local.Present, local.Missing}[r.IntN(2)]
				cp.RecordRevision++
				put = append(put, &cp)
			case len(idList) > 0:
				del = append(del, idList[r.IntN(len(idList))])
			}
		}
		put = slices.DeleteFunc(put, func(p *local.Project) bool { return slices.Contains(del, p.ID) })
		commit(put, del)
		if err := cat.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		bases[cat.follow.At().Base] = true
		if step%7 == 6 {
			sameAsReference(t, fmt.Sprint("step ", step), cat, live, gone, pol, queries)
			recordsAtAreTheStores(t, fmt.Sprint("step ", step), cat, st)
		}
	}
	if len(bases) < 2 {
		t.Fatalf("the catalog followed %d base(s): the test never crossed a new base", len(bases))
	}
	// A reader that starts now (one base, the deltas after it) agrees.
	late, err := Load(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	sameAsReference(t, "late reader", late, live, gone, pol, queries)
	recordsAtAreTheStores(t, "late reader", late, st)
}

// recordsAtAreTheStores: what a scanner learns from the catalog
// (RecordsAt) is exactly the store's records at that revision, and a
// revision or store the catalog does not hold gives nothing.
func recordsAtAreTheStores(t *testing.T, label string, cat *Catalog, st *store.Store) {
	t.Helper()
	want := map[string]*local.Project{}
	var storeID string
	var rev uint64
	if err := st.View(context.Background(), func(r *store.Reader) error {
		storeID, rev = r.StoreID(), r.Revision()
		return r.Projects(func(p *local.Project) error { want[p.ID] = p; return nil })
	}); err != nil {
		t.Fatal(err)
	}
	got := map[string]*local.Project{}
	if !cat.RecordsAt(storeID, rev, func(p *local.Project) { got[p.ID] = p }) {
		t.Fatalf("%s: RecordsAt refused the revision the catalog is at (%d)", label, rev)
	}
	if len(got) != len(want) {
		t.Fatalf("%s: RecordsAt gave %d records, the store holds %d", label, len(got), len(want))
	}
	for id, w := range want {
		if !reflect.DeepEqual(got[id], w) {
			t.Fatalf("%s: record %s from the catalog differs from the store's:\n got %+v\nwant %+v", label, id, got[id], w)
		}
	}
	if cat.RecordsAt(storeID, rev+1, func(*local.Project) { t.Fatal("called for another revision") }) ||
		cat.RecordsAt("another-store", rev, func(*local.Project) { t.Fatal("called for another store") }) {
		t.Fatalf("%s: RecordsAt answered for a revision or store it does not hold", label)
	}
}

func sameAsReference(t *testing.T, label string, cat *Catalog, live, gone map[string]*local.Project, pol Policy, queries []string) {
	t.Helper()
	ref := search.New()
	for _, id := range slices.Sorted(maps.Keys(live)) {
		ref.Put(search.DocOf(live[id]))
	}
	keep := func(id string) bool { return pol.AllowsRecord(live[id]) }
	if cat.Len() != len(live) {
		t.Fatalf("%s: Len %d, want %d", label, cat.Len(), len(live))
	}
	if got, want := cat.List(pol), ref.List(keep); !slices.Equal(got, want) {
		t.Fatalf("%s: List gives %d ids, want %d", label, len(got), len(want))
	}
	notMissing := func(a local.Availability, _ time.Time) bool { return a != local.Missing }
	if got, want := cat.ListWhere(pol, notMissing), ref.List(func(id string) bool { return keep(id) && live[id].Availability != local.Missing }); !slices.Equal(got, want) {
		t.Fatalf("%s: ListWhere gives %d ids, want %d", label, len(got), len(want))
	}
	idList := slices.Sorted(maps.Keys(live))
	for i, p := range cat.PresentAll(idList) {
		if p != (live[idList[i]].Availability == local.Present) {
			t.Fatalf("%s: PresentAll says %v of %s", label, p, idList[i])
		}
	}
	for _, q := range queries {
		for _, n := range []int{5, -1} {
			gh, gt := cat.SearchTop(q, pol, n)
			wh, wt := ref.SearchTop(q, keep, n)
			if gt != wt || !reflect.DeepEqual(gh, wh) {
				t.Fatalf("%s: %q top %d: %d hits (total %d), want %d (total %d)\n got  %v\n want %v", label, q, n, len(gh), gt, len(wh), wt, gh, wh)
			}
		}
		if got, want := cat.Suggest(q, pol, 5), ref.Suggest(q, keep, 5); !slices.Equal(got, want) {
			t.Fatalf("%s: %q suggests %q, want %q", label, q, got, want)
		}
	}
	for id, p := range live {
		got := cat.Get(id)
		if got == nil || got.ID != id || got.Root != p.Root || got.Meta.Name != p.Meta.Name || got.Availability != p.Availability {
			t.Fatalf("%s: Get(%s) = %+v, want %+v", label, id, got, p)
		}
		lite, full := cat.GetLite(id), cat.Get(id)
		full.Meta.Description, full.Meta.Readme = "", ""
		full.Meta.Keywords, full.Meta.Tags, full.Meta.Manifests, full.Meta.Problems = nil, nil, nil, nil
		if !reflect.DeepEqual(lite, full) {
			t.Fatalf("%s: GetLite(%s) = %+v, want %+v", label, id, lite, full)
		}
		if cat.Present(id) != (p.Availability == local.Present) || cat.Visible(id, pol) != keep(id) {
			t.Fatalf("%s: %s present %v visible %v", label, id, cat.Present(id), cat.Visible(id, pol))
		}
		if c := cat.Containing(filepath.Join(p.Root, "src", "x")); c == nil || c.ID != id {
			t.Fatalf("%s: Containing(%s/src/x) = %v, want %s", label, p.Root, c, id)
		}
	}
	for id, p := range gone {
		if cat.Get(id) != nil || cat.Present(id) || cat.Visible(id, pol) {
			t.Fatalf("%s: forgotten record %s is still there", label, id)
		}
		if c := cat.Containing(p.Root); c != nil {
			t.Fatalf("%s: the root of forgotten %s gives %s", label, id, c.ID)
		}
	}
	if cat.Get("p_nosuchrecord") != nil || cat.Containing("/nowhere/at/all") != nil {
		t.Fatalf("%s: a record that does not exist was found", label)
	}
}

// Readers answer while commits are applied and new bases replace old ones
// (run with -race): no answer ever lists an id twice or a record that is
// not in the view it came from.
func TestCatalogAnswersWhileFollowing(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	readme := strings.Repeat("words about payments and orders ", 200)
	put := func(n int) []string {
		var idList []string
		if err := st.Update(ctx, func(tx *store.Tx) error {
			for range n {
				p := &local.Project{ID: ids.NewProjectID(), Root: fmt.Sprintf("/code/x/p%d", r64()), Availability: local.Present,
					Meta: local.Metadata{Name: "orders-" + fmt.Sprint(r64()%1000), Readme: readme}}
				idList = append(idList, p.ID)
				if err := tx.PutProject(p); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return idList
	}
	idList := put(50)
	cat, err := Load(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	pol := Policy{Discovery: []string{"/code"}, Share: []string{"/code"}}
	done := make(chan struct{})
	errs := make(chan string, 8)
	for range 3 {
		go func() {
			for {
				select {
				case <-done:
					errs <- ""
					return
				default:
				}
				seen := map[string]bool{}
				for _, id := range cat.List(pol) {
					if seen[id] {
						errs <- "listed twice: " + id
						return
					}
					seen[id] = true
				}
				hits, _ := cat.SearchTop("orders payments", pol, 20)
				for _, h := range hits {
					cat.Get(h.ID)
					cat.Visible(h.ID, pol)
				}
				cat.Containing("/code/x/p1/src")
				cat.Suggest("ordrs", pol, 3)
			}
		}()
	}
	for i := range 40 {
		idList = append(idList, put(5)...)
		if i%3 == 0 {
			victim := idList[0]
			idList = idList[1:]
			if err := st.Update(ctx, func(tx *store.Tx) error { return tx.DeleteProject(victim) }); err != nil {
				t.Fatal(err)
			}
		}
		if err := cat.Sync(ctx); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	for range 3 {
		if e := <-errs; e != "" {
			t.Fatal(e)
		}
	}
	_ = cat.ForceSync(ctx)
	if cat.Len() != len(idList) {
		t.Fatalf("Len %d, want %d", cat.Len(), len(idList))
	}
}

var r64state uint64 = 88172645463325252

func r64() uint64 {
	r64state ^= r64state << 13
	r64state ^= r64state >> 7
	r64state ^= r64state << 17
	return r64state
}
