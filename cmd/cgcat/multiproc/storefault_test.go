//go:build linux

package multiproc

import (
	"context"
	"errors"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// mountTmpfs mounts a small tmpfs at dir, or skips the test saying why.
func mountTmpfs(t *testing.T, dir, size string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small tmpfs to simulate a full or read-only disk (needs root): %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
}

func fillDisk(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "filler")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				break
			}
			t.Fatal(err)
		}
	}
	// Take the last few bytes too.
	for _, n := range []int{4096, 512, 1} {
		for {
			if _, err := f.Write(buf[:n]); err != nil {
				break
			}
		}
	}
	return p
}

// A full disk: answers keep coming from the catalog as it was and say what
// is wrong; nothing is half-written; once space is back, discovery resumes.
func TestDiskFull(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	base := t.TempDir()
	root := filepath.Join(base, "code")
	for _, n := range []string{"alpha", "beta", "gamma"} {
		mkProject(t, filepath.Join(root, n), n+"-pkg", "project "+n)
	}
	data := filepath.Join(base, "data")
	mountTmpfs(t, data, "4m")
	cfg := writeConfig(t, base, cfgOpts{data: data, root: root})
	if out, err := runCgcat(t, nil, "scan", "--config", cfg); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	s := startServer(t, cfg)
	ctx := context.Background()
	before := s.listAll(t, ctx)
	if len(before) != 3 {
		t.Fatalf("want 3 projects, got %d", len(before))
	}

	filler := fillDisk(t, data)
	mkProject(t, filepath.Join(root, "delta"), "delta-pkg", "project delta")
	out, err := runCgcat(t, nil, "scan", "--config", cfg)
	if err == nil || !strings.Contains(out, "no space left") || !strings.Contains(out, "free some space") {
		t.Fatalf("scan on a full disk must fail clearly, got err=%v\n%s", err, out)
	}
	var msg string
	waitFor(t, 20*time.Second, "the server to report the full disk", func() bool {
		e, _, err := s.call(ctx, "local_codegraph_projects", map[string]any{"refresh": true, "limit": 50})
		if err != nil {
			t.Fatalf("a full disk must not turn answers into errors: %v", err)
		}
		if len(e.Projects) != 3 {
			t.Fatalf("answers must come from the catalog as it was: %d projects", len(e.Projects))
		}
		msg = e.Message
		return strings.Contains(msg, "no space left")
	})

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "discovery to resume once space is back", func() bool {
		e, _, err := s.call(ctx, "local_codegraph_projects", map[string]any{"refresh": true, "limit": 50})
		return err == nil && len(e.Projects) == 4 && !strings.Contains(e.Message, "no space left")
	})
	after := s.listAll(t, ctx)
	for id, p := range before {
		if after[id] != p {
			t.Fatalf("record %s changed or vanished across the full disk: %q -> %q", id, p, after[id])
		}
	}
}

// A read-only data dir: the catalog as it is still answers; discovery says
// why it cannot write.
func TestReadOnlyDataDir(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	base := t.TempDir()
	root := filepath.Join(base, "code")
	mkProject(t, filepath.Join(root, "alpha"), "alpha-pkg", "project alpha")
	data := filepath.Join(base, "data")
	mountTmpfs(t, data, "8m")
	cfg := writeConfig(t, base, cfgOpts{data: data, root: root})
	if out, err := runCgcat(t, nil, "scan", "--config", cfg); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if out, err := exec.Command("mount", "-o", "remount,ro", data).CombinedOutput(); err != nil {
		t.Skipf("cannot remount read-only: %v %s", err, out)
	}
	out, err := runCgcat(t, nil, "scan", "--config", cfg)
	if err == nil || !strings.Contains(out, "read-only file system") {
		t.Fatalf("scan on a read-only data dir must fail clearly, got err=%v\n%s", err, out)
	}
	s := startServer(t, cfg)
	ctx := context.Background()
	got := s.listAll(t, ctx)
	if paths := slices.Collect(maps.Values(got)); len(paths) != 1 || !strings.HasSuffix(paths[0], "alpha") {
		t.Fatalf("the catalog must still answer read-only: %v", got)
	}
	waitFor(t, 20*time.Second, "the server to say discovery cannot write", func() bool {
		e, _, err := s.call(ctx, "local_codegraph_projects", map[string]any{"refresh": true})
		return err == nil && strings.Contains(e.Message, "read-only file system")
	})
}
