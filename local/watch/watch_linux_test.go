package watch

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cgcat/cgcat/local/nofollow"
)

func watchDir(t *testing.T, w *Watcher, dir string) {
	t.Helper()
	d, err := nofollow.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := w.AddDir(d); err != nil {
		t.Fatal(err)
	}
}

// next waits for work (the test's own deadline, generous for a loaded
// machine) and returns it.
func next(t *testing.T, w *Watcher, ok func(Change, bool) bool) (Change, bool) {
	t.Helper()
	var all Change
	over := false
	deadline := time.After(30 * time.Second)
	for {
		select {
		case <-w.Ready():
			c, o, _ := w.Take()
			all.Shallow = append(all.Shallow, c.Shallow...)
			all.Deep = append(all.Deep, c.Deep...)
			all.Gone = append(all.Gone, c.Gone...)
			over = over || o
			if ok(all, over) {
				return all, over
			}
		case <-deadline:
			t.Fatalf("no such change within the deadline; got %+v overflow %v", all, over)
		}
	}
}

func TestEventsNameWhatToReadAgain(t *testing.T) {
	root := t.TempDir()
	w, err := New(Options{Source: func(n string) bool { return n == "package.json" }})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	watchDir(t, w, root)

	// A new directory is walked whole; its parent read again.
	p := filepath.Join(root, "app")
	if err := os.Mkdir(p, 0o755); err != nil {
		t.Fatal(err)
	}
	c, _ := next(t, w, func(c Change, _ bool) bool { return slices.Contains(c.Deep, p) })
	if !slices.Contains(c.Shallow, root) {
		t.Fatalf("the parent of a new directory is not read again: %+v", c)
	}
	watchDir(t, w, p)

	// A .codegraph made in a watched directory: that directory again; the
	// database appearing inside a watched .codegraph: its project again.
	cg := filepath.Join(p, ".codegraph")
	if err := os.Mkdir(cg, 0o755); err != nil {
		t.Fatal(err)
	}
	next(t, w, func(c Change, _ bool) bool { return slices.Contains(c.Shallow, p) })
	d, err := nofollow.OpenDir(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.AddMarkerIn(d); err != nil {
		t.Fatal(err)
	}
	d.Close()
	if err := os.WriteFile(filepath.Join(cg, "codegraph.db"), make([]byte, 200), 0o644); err != nil {
		t.Fatal(err)
	}
	next(t, w, func(c Change, _ bool) bool { return slices.Contains(c.Shallow, p) })
	// Other files of .codegraph, and plain files, are nothing to do.
	if err := os.WriteFile(filepath.Join(cg, "daemon.log"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p, "notes.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A manifest is the project's metadata: its directory again.
	if err := os.WriteFile(filepath.Join(p, "package.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, _ = next(t, w, func(c Change, _ bool) bool { return slices.Contains(c.Shallow, p) })
	if len(c.Deep)+len(c.Gone) != 0 {
		t.Fatalf("plain files asked for a walk: %+v", c)
	}

	// Moved away: the old place is gone and its watches are dropped; the
	// new place is walked whole.
	moved := filepath.Join(root, "moved")
	if err := os.Rename(p, moved); err != nil {
		t.Fatal(err)
	}
	next(t, w, func(c Change, _ bool) bool { return slices.Contains(c.Gone, p) && slices.Contains(c.Deep, moved) })
	if n := w.Stats().Watches; n != 1 {
		t.Fatalf("watches of a moved directory kept under its old path: %d watches, want the root's only", n)
	}

	// Deleted: gone.
	watchDir(t, w, moved)
	if err := os.RemoveAll(moved); err != nil {
		t.Fatal(err)
	}
	next(t, w, func(c Change, _ bool) bool { return slices.Contains(c.Gone, moved) })
}

// More changes at once than the bound: one overflow (walk everything), not
// an unbounded list.
func TestBurstPastTheBoundOverflows(t *testing.T) {
	root := t.TempDir()
	w, err := New(Options{MaxPending: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	watchDir(t, w, root)
	for i := range 50 {
		if err := os.Mkdir(filepath.Join(root, fmt.Sprint(i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	c, over := next(t, w, func(_ Change, over bool) bool { return over })
	if !over || w.Stats().Overflows == 0 {
		t.Fatalf("no overflow: %+v", c)
	}
	if w.Pending() {
		c, _, _ := w.Take()
		if len(c.Deep) > 8 {
			t.Fatalf("work past the bound kept after an overflow: %d", len(c.Deep))
		}
	}
}

// TestBindMountSidesBothNamed: a directory reached under two paths (a bind
// mount) has one watch, and a change in it names the change under both
// paths: each path is a root of its own records, and a project made there
// must show under both (the lifecycle test found the second path never
// read when the watch kept only the last path it was added under).
func TestBindMountSidesBothNamed(t *testing.T) {
	base := t.TempDir()
	real, alias := filepath.Join(base, "private"), filepath.Join(base, "mirror")
	for _, d := range []string{real, alias} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("mount", "--bind", real, alias).CombinedOutput(); err != nil {
		t.Skipf("bind mount not possible here (needs root): %v %s", err, out)
	}
	defer exec.Command("umount", "-l", alias).Run()

	w, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	watchDir(t, w, real)
	watchDir(t, w, alias)
	if got := w.Stats().Watches; got != 1 {
		t.Fatalf("%d watches for one directory under two paths, want 1", got)
	}

	if err := os.Mkdir(filepath.Join(real, "svc"), 0o755); err != nil {
		t.Fatal(err)
	}
	c, _ := next(t, w, func(c Change, _ bool) bool {
		return slices.Contains(c.Deep, filepath.Join(real, "svc")) && slices.Contains(c.Deep, filepath.Join(alias, "svc"))
	})
	for _, d := range []string{real, alias} {
		if !slices.Contains(c.Shallow, d) {
			t.Errorf("%s not read again after a change in it: %+v", d, c)
		}
	}

	// Forgetting one side (its root no longer configured) keeps the
	// other side's events.
	w.Forget(alias)
	if err := os.Mkdir(filepath.Join(real, "lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	c, _ = next(t, w, func(c Change, _ bool) bool { return slices.Contains(c.Deep, filepath.Join(real, "lib")) })
	if slices.Contains(c.Deep, filepath.Join(alias, "lib")) {
		t.Errorf("a forgotten path still named: %+v", c)
	}
}
