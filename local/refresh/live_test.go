package refresh

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/fixture"
	"github.com/cgcat/cgcat/local/scan"
)

// waitLive waits until the loop publishes that the catalog follows the disk.
func (l *loop) waitLive(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		s, ok := ReadWatchState(l.st.DataDir())
		if ok && s.Mode == ModeEvents && s.Live && !s.Pending {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the loop never followed the disk: %+v (running %v)", s, ok)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (l *loop) presentAt(root string) bool {
	p := l.cat.Containing(root)
	return p != nil && p.Root == root && p.Availability == local.Present
}

func (l *loop) availabilityAt(root string) local.Availability {
	if p := l.cat.Containing(root); p != nil && p.Root == root {
		return p.Availability
	}
	return ""
}

// With an hour between refreshes and nobody asking, a project made, moved
// or deleted under a root is in the catalog within the deadline: file
// events drive patches.
func TestLoopFollowsTheDisk(t *testing.T) {
	l := startLoop(t)
	l.waitLive(t)
	root := l.opt.Roots[0]
	made := filepath.Join(root, "g1", "new one")
	fixture.Project(t, made)
	l.waitFor(t, 20*time.Second, "a new project seen without a refresh", func(scan.State) bool { return l.presentAt(made) })

	moved := filepath.Join(root, "g2", "moved here")
	if err := os.Rename(made, moved); err != nil {
		t.Fatal(err)
	}
	l.waitFor(t, 20*time.Second, "a moved project seen at its new place", func(scan.State) bool {
		return l.presentAt(moved) && l.availabilityAt(made) == local.Missing
	})
	if err := os.RemoveAll(moved); err != nil {
		t.Fatal(err)
	}
	l.waitFor(t, 20*time.Second, "a deleted project missing", func(scan.State) bool { return l.availabilityAt(moved) == local.Missing })
	if st := l.cat.State(); st.Rounds > 2 {
		t.Errorf("changes were found by whole rounds (%d), not by events", st.Rounds)
	}
}

// A manifest edited in place (an editor's save, os.WriteFile: no entry of
// the directory added or removed, only the file written) reaches the
// catalog without a refresh: the watcher hears the write being closed.
func TestLoopFollowsAManifestEditedInPlace(t *testing.T) {
	l := startLoop(t)
	root := l.opt.Roots[0]
	proj := filepath.Join(root, "edited")
	fixture.Project(t, proj)
	manifest := filepath.Join(proj, "package.json")
	fixture.Write(t, manifest, `{"name": "edited", "description": "before the edit"}`)
	l.waitLive(t)
	descAt := func(root string) string {
		if p := l.cat.Containing(root); p != nil && p.Root == root {
			return p.Meta.Description
		}
		return ""
	}
	l.waitFor(t, 20*time.Second, "the project as first read", func(scan.State) bool { return descAt(proj) == "before the edit" })
	if err := os.WriteFile(manifest, []byte(`{"name": "edited", "description": "after the edit"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	l.waitFor(t, 20*time.Second, "the manifest's edit seen without a refresh", func(scan.State) bool { return descAt(proj) == "after the edit" })
	if st := l.cat.State(); st.Rounds > 2 {
		t.Errorf("the edit was found by whole rounds (%d), not by events", st.Rounds)
	}
}

// More changes at once than the watcher's bound (CGCAT_WATCH_QUEUE): its
// events overflow, everything is walked again, and the catalog converges.
func TestLoopConvergesAfterAnOverflow(t *testing.T) {
	t.Setenv("CGCAT_WATCH_QUEUE", "4")
	l := startLoop(t)
	l.waitLive(t)
	root := l.opt.Roots[0]
	bulk := filepath.Join(root, "bulk")
	if err := os.Mkdir(bulk, 0o755); err != nil {
		t.Fatal(err)
	}
	l.waitFor(t, 30*time.Second, "the new directory watched", func(scan.State) bool {
		s, _ := ReadWatchState(l.st.DataDir())
		return s.Live && !s.Pending && s.Watches > 0 && s.Events > 0
	})
	var made []string
	for i := range 40 { // directories first: 40 events at once in a watched directory
		if err := os.Mkdir(filepath.Join(bulk, fmt.Sprintf("p%d", i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 40 {
		p := filepath.Join(bulk, fmt.Sprintf("p%d", i))
		fixture.Project(t, p)
		made = append(made, p)
	}
	l.waitFor(t, 30*time.Second, "every project of the burst", func(scan.State) bool {
		for _, p := range made {
			if !l.presentAt(p) {
				return false
			}
		}
		return true
	})
	s, _ := ReadWatchState(l.st.DataDir())
	if s.Overflows == 0 || s.LastOverflow.IsZero() {
		t.Errorf("no overflow was forced: %+v", s)
	}
	l.waitLive(t)
}

// A patch too big for the round budget (an archive larger than
// maxDirectoriesPerRound renamed into place) falls back to walking
// everything, in rounds within the budget: the catalog converges and
// follows the disk again, an interval (an hour here) before the periodic
// refresh would.
func TestResyncPastARoundLimitConverges(t *testing.T) {
	l := startLoop(t)
	l.waitLive(t)
	l.roundDirs.Store(30)
	root := l.opt.Roots[0]
	staging := filepath.Join(fixture.TempDir(t), "archive")
	var made []string
	for i := range 30 {
		fixture.Project(t, filepath.Join(staging, fmt.Sprintf("p%d", i)))
		made = append(made, filepath.Join(root, "bulk", fmt.Sprintf("p%d", i)))
	}
	if err := os.Rename(staging, filepath.Join(root, "bulk")); err != nil {
		t.Fatal(err)
	}
	l.waitFor(t, 120*time.Second, "every project of the archive, in rounds of 30 directories", func(scan.State) bool {
		for _, p := range made {
			if !l.presentAt(p) {
				return false
			}
		}
		return true
	})
	l.waitLive(t)
}
