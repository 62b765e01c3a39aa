package server

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cgcat/cgcat/local/catalog"
	"github.com/cgcat/cgcat/local/config"
	"github.com/cgcat/cgcat/local/refresh"
	"github.com/cgcat/cgcat/local/scan"
	"github.com/cgcat/cgcat/local/store"
)

// scanState "running" is a fact (R36, issue 12 item 3): a pass left
// unfinished by a scan that was killed is idle while nobody walks it, even
// while a serve lives (that serve resumes it within seconds; until then
// nothing walks it). (The lifecycle test, once it
// could tell when nobody held the scan lease: every answer after a killed
// scan said "running" as long as any serve lived.)
func TestUnfinishedPassNobodyWalksIsIdle(t *testing.T) {
	fx := newFixture(t, nil)
	ctx := context.Background()
	st, err := store.Open(ctx, fx.dataDir)
	if err != nil {
		t.Fatal(err)
	}
	// A pass that stopped after one directory, its scanner gone.
	opt := scan.Options{Roots: []string{fx.root}, MaxDepth: 6, SliceDirs: 1, SliceTime: time.Minute, RoundDirs: 1, RoundTime: time.Minute}
	s, err := scan.Start(ctx, st, opt)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := s.RunRound(ctx); err != nil || r.Finished {
		t.Fatalf("fixture: the round must stop unfinished: %+v %v", r, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// A live process with a discovery loop (this one) that is not walking.
	presence := filepath.Join(fx.dataDir, "refreshers")
	if err := os.MkdirAll(presence, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(presence, strconv.Itoa(os.Getpid())), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if !refresh.Alive(fx.dataDir) || refresh.Scanning(fx.dataDir) {
		t.Fatal("fixture: want a live loop and no lease holder")
	}
	cfg := config.Default()
	cfg.DataDir = fx.dataDir
	cfg.Discovery.Roots, cfg.Sharing.Roots = []string{fx.root}, []string{fx.root}
	f := NewFrontend(Options{Config: config.Fixed(&cfg), Processes: refresh.Processes{}, Open: func(ctx context.Context, _ *config.Config) (*catalog.Catalog, Discovery, error) {
		cat, err := catalog.Load(ctx, st)
		return cat, nil, err
	}})
	if err := f.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	list, err := f.Projects(ctx, ProjectsArgs{Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if list.ScanState != "idle" || list.Coverage != "partial" {
		t.Fatalf("an unfinished pass nobody walks: scanState %s, coverage %s; want idle, partial", list.ScanState, list.Coverage)
	}
	if !strings.Contains(list.Message, "unfinished") {
		t.Fatalf("the answer does not say the pass is unfinished and who resumes it: %q", list.Message)
	}
}
