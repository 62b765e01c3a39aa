package catalog

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/ids"
	"github.com/cgcat/cgcat/local/store"
)

// Two catalogs over one data dir stand for two processes: a commit through
// one store handle is seen by the other's next Sync (one stat when nothing
// changed, a read of the changed records otherwise).
func TestCommitVisibleAfterSync(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	writer, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	readerStore, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := Load(ctx, readerStore)
	if err != nil {
		t.Fatal(err)
	}
	p := &local.Project{ID: ids.NewProjectID(), Root: "/code/new", Meta: local.Metadata{Name: "brand-new"}}
	if err := writer.Update(ctx, func(tx *store.Tx) error { return tx.PutProject(p) }); err != nil {
		t.Fatal(err)
	}
	if cat.Get(p.ID) != nil {
		t.Fatal("visible before Sync: the test would prove nothing")
	}
	if err := cat.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if got := cat.Get(p.ID); got == nil || got.Root != "/code/new" {
		t.Fatalf("commit not visible after Sync: %+v", got)
	}
	pol := Policy{Discovery: []string{"/code"}, Share: []string{"/code"}}
	if hits := cat.Search("brand-new", pol); len(hits) != 1 || hits[0].ID != p.ID {
		t.Fatalf("search after Sync: %+v", hits)
	}
}

// BenchmarkPropagation measures commit → visible in another catalog:
// the time of the reader's Sync right after a writer's commit, and of a
// Sync when nothing changed (the cost every tool call pays).
func BenchmarkPropagation(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	writer, _ := store.Open(ctx, dir)
	readerStore, _ := store.Open(ctx, dir)
	for i := range 1000 { // a realistic catalog behind it
		_ = writer.Update(ctx, func(tx *store.Tx) error {
			return tx.PutProject(&local.Project{ID: ids.NewProjectID(), Root: fmt.Sprintf("/code/p%d", i), Meta: local.Metadata{Name: fmt.Sprintf("p%d", i)}})
		})
	}
	cat, _ := Load(ctx, readerStore)
	var delays, idle []time.Duration
	for i := 0; b.Loop(); i++ {
		p := &local.Project{ID: ids.NewProjectID(), Root: filepath.Join("/code/new", fmt.Sprint(i))}
		if err := writer.Update(ctx, func(tx *store.Tx) error { return tx.PutProject(p) }); err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		if err := cat.Sync(ctx); err != nil || cat.Get(p.ID) == nil {
			b.Fatalf("not visible: %v", err)
		}
		delays = append(delays, time.Since(t0))
		t1 := time.Now()
		_ = cat.Sync(ctx)
		idle = append(idle, time.Since(t1))
	}
	pct := func(d []time.Duration, q float64) float64 {
		s := slices.Clone(d)
		slices.Sort(s)
		return float64(s[int(q*float64(len(s)-1))].Microseconds())
	}
	b.ReportMetric(pct(delays, 0.5), "visible-p50-µs")
	b.ReportMetric(pct(delays, 0.99), "visible-p99-µs")
	b.ReportMetric(pct(idle, 0.5), "idle-sync-p50-µs")
}
