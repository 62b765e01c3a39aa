package refresh

import (
	"os"
	"testing"
	"time"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/config"
	"github.com/cgcat/cgcat/local/fixture"
	"github.com/cgcat/cgcat/local/pathid"
)

// BenchmarkFollows is what every answer pays to know whether the catalog
// follows the disk: the watch state file read, the watcher's pid checked.
func BenchmarkFollows(b *testing.B) {
	cfg := config.Default()
	cfg.DataDir = fixture.TempDir(b)
	cfg.Discovery.Roots = []string{cfg.DataDir}
	d := cfg.Discovery
	writeWatchState(cfg.DataDir, WatchState{Mode: ModeEvents, Live: true, Roots: []string{pathid.Key(cfg.DataDir)}, Walk: local.WalkKey(d.MaxDepth, d.ExcludeNames, d.FollowSymlinks)})
	// Written a while ago, as in steady state (the watcher rewrites the
	// file only when its state changes).
	old := time.Now().Add(-time.Minute)
	if err := os.Chtimes(watchStatePath(cfg.DataDir), old, old); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if !Follows(&cfg).OK {
			b.Fatal("not following")
		}
	}
}
