//go:build linux

package multiproc

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cgcat/cgcat/local/fixture"
	"github.com/cgcat/cgcat/local/store"
)

// stopInsideStore freezes pid while it holds the store's write lock (its
// pid is in dataDir/store.writer and it has the database open).
func stopInsideStore(t *testing.T, pid int, data string) {
	t.Helper()
	dbDir := filepath.Join(data, "catalog.db")
	for range 5000 {
		if !fixture.Stop(t, pid) {
			t.Fatal("the scanner ended before it was caught inside a store batch")
		}
		b, _ := os.ReadFile(filepath.Join(data, "store.writer"))
		if holdsFileUnder(pid, dbDir) && strings.HasPrefix(string(b), strconv.Itoa(pid)+" ") {
			return
		}
		_ = syscall.Kill(pid, syscall.SIGCONT)
		time.Sleep(time.Millisecond)
	}
	t.Fatal("could not catch the scanner inside a store batch")
}

// A process frozen while it holds LevelDB's lock (a user's Ctrl-Z on `cgcat
// scan` in the middle of a batch) delays only writers: a new serve answers
// at once from the published catalog, and a new scan says who holds the
// store instead of failing after a silent wait.
func TestFrozenWriterBlocksNoReader(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	base := t.TempDir()
	root := filepath.Join(base, "code")
	genTree(t, root, 6, 4, 17)
	data := filepath.Join(base, "data")
	cfg := writeConfig(t, base, cfgOpts{data: data, root: root, slice: 20})
	if out, err := runCgcat(t, nil, "scan", "--config", cfg); err != nil {
		t.Fatalf("first scan: %v\n%s", err, out)
	}
	// A second pass that writes often; freeze it inside a batch.
	mkProject(t, filepath.Join(root, "late"), "late-one", "added after the first scan")
	busy := exec.Command(cgcatBin, "scan", "--config", cfg)
	if err := busy.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = busy.Process.Kill(); _ = busy.Wait() }()
	stopInsideStore(t, busy.Process.Pid, data)
	defer syscall.Kill(busy.Process.Pid, syscall.SIGCONT)

	start := time.Now()
	s := startServer(t, cfg)
	got := s.listAll(t, context.Background())
	took := time.Since(start)
	t.Logf("a new serve answered %d projects %s after start, with a frozen writer holding the store", len(got), took)
	if len(got) == 0 {
		t.Fatal("the new serve answered nothing")
	}
	// The holder stays frozen until the test ends: a serve that waited for
	// the store's lock could answer only once the store's own wait ran out.
	if took >= store.DefaultWait {
		t.Fatalf("a new serve took %s to answer while another process held the store: it waited for the lock (%s)", took, store.DefaultWait)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, cgcatBin, "scan", "--once", "--config", cfg)
	cmd.Env = append(os.Environ(), "CGCAT_LEASE_STALE_AFTER=300ms")
	start = time.Now()
	out, err := cmd.CombinedOutput()
	// A stopped holder is not waited for: the scan says so at once, not
	// after the store's own wait.
	if took := time.Since(start); took >= store.DefaultWait {
		t.Fatalf("the scan waited %s for a stopped holder (the store waits %s for a running one)\n%s", took, store.DefaultWait, out)
	}
	if err == nil || !strings.Contains(string(out), "stopped") || !strings.Contains(string(out), strconv.Itoa(busy.Process.Pid)) {
		t.Fatalf("a scan blocked by a frozen writer must name it (pid %d, stopped): %v\n%s", busy.Process.Pid, err, out)
	}
}
