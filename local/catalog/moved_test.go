package catalog

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/ids"
	"github.com/cgcat/cgcat/local/store"
	"github.com/cgcat/cgcat/local/view"
)

// storeWithBase is a data dir whose newest base holds n records named
// prefix-i (its pointer removed, so that the next open publishes a whole
// base), and that base's path.
func storeWithBase(t *testing.T, prefix string, n int) (*store.Store, []*local.Project, string) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	var ps []*local.Project
	for i := range n {
		p := &local.Project{ID: ids.NewProjectID(), Root: fmt.Sprintf("/code/%s-%d", prefix, i), Meta: local.Metadata{Name: fmt.Sprintf("%s-%d", prefix, i)}, RecordRevision: 1}
		ps = append(ps, p)
	}
	if err := st.Update(ctx, func(tx *store.Tx) error {
		for _, p := range ps {
			if err := tx.PutProject(p); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(view.PointerFile(dir)); err != nil {
		t.Fatal(err)
	}
	if st, err = store.Open(ctx, dir); err != nil {
		t.Fatal(err)
	}
	bases, _ := filepath.Glob(filepath.Join(view.Dir(dir), "base-*"))
	if len(bases) == 0 {
		t.Fatal("no base published")
	}
	slices.Sort(bases)
	return st, ps, bases[len(bases)-1]
}

// Issue 23: a base restored over the one a reader maps (cp, rsync
// --inplace) while another call of the same process is applying news. The
// call must not answer from the mapping, which now holds the other file's
// bytes: it waits for the reload (a loaded fault run listed 0 projects
// this way, TestBaseChangedUnderServes).
func TestSyncWaitsWhenTheBaseChangedUnderTheView(t *testing.T) {
	ctx := context.Background()
	st, ps, base := storeWithBase(t, "ours", 20)
	cat, err := Load(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if cat.Len() != len(ps) {
		t.Fatalf("loaded %d records, want %d", cat.Len(), len(ps))
	}
	_, theirs, foreign := storeWithBase(t, "theirs", 15)
	b, err := os.ReadFile(foreign)
	if err != nil {
		t.Fatal(err)
	}
	// Another call of this process is applying news (it holds the sync
	// lock) when the base is overwritten in place.
	cat.syncMu.Lock()
	if err := os.WriteFile(base, b, 0o644); err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(50 * time.Millisecond)
		cat.syncMu.Unlock()
	}()
	if err := cat.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if cat.Len() != len(ps) {
		t.Fatalf("after the base was overwritten: %d records, want %d", cat.Len(), len(ps))
	}
	for _, p := range ps {
		if got := cat.Get(p.ID); got == nil || got.Meta.Name != p.Meta.Name || got.Root != p.Root {
			t.Fatalf("after the base was overwritten, %s reads as %+v", p.ID, got)
		}
	}
	pol := Policy{Discovery: []string{"/code"}, Share: []string{"/code"}}
	if hits := cat.Search("ours-7", pol); len(hits) == 0 || hits[0].ID != ps[7].ID {
		t.Fatalf("search after the base was overwritten: %+v", hits)
	}
	for _, h := range cat.Search("theirs-3", pol) {
		if slices.ContainsFunc(theirs, func(p *local.Project) bool { return p.ID == h.ID }) {
			t.Fatalf("the other data dir's record %s is searched", h.ID)
		}
	}
}
