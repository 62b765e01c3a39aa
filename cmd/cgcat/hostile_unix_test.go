//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/cgcat/cgcat/local/config"
	"github.com/cgcat/cgcat/server"
)

// hangLimit is how long a test lets a cgcat process run before it calls it
// hung (a deadlock detector, not a speed limit: a healthy run takes a
// fraction of a second, under load a few).
const hangLimit = 2 * time.Minute

// fifoGitDirTree makes three projects under e.root; "fifo-b"'s .git file
// names a git dir (outside the root) whose commondir is a FIFO no one will
// ever write to. A plain open of it waits for ever.
func fifoGitDirTree(t *testing.T, e *testEnv) {
	t.Helper()
	for _, n := range []string{"fifo-a", "fifo-b", "fifo-c"} {
		fakeProject(t, filepath.Join(e.root, n), n+"-pkg")
	}
	gd := filepath.Join(e.base, "gitdirs", "b")
	writeTestFile(t, filepath.Join(gd, "HEAD"), "ref: refs/heads/main\n")
	if err := syscall.Mkfifo(filepath.Join(gd, "commondir"), 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	writeTestFile(t, filepath.Join(e.root, "fifo-b", ".git"), "gitdir: "+gd+"\n")
}

// runHangable runs the real cgcat with args and fails the test if it does
// not exit by itself within hangLimit (it is killed then).
func runHangable(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, cgcatBin(t), args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("cgcat %v hung (killed after %s)\nstderr:\n%s", args, hangLimit, errOut.String())
	}
	return out.String(), errOut.String(), err
}

// TestFIFOUnderAProjectDoesNotStopDiscovery: a project's git dir holding a
// FIFO (issue 23, case 1) neither hangs `cgcat scan` nor keeps a serve from
// listing the healthy projects beside it; the FIFO itself is reported, not
// read.
func TestFIFOUnderAProjectDoesNotStopDiscovery(t *testing.T) {
	e := newTestEnv(t)
	fifoGitDirTree(t, e)
	e.writeConfig(t)

	out, errOut, err := runHangable(t, "scan", "--config", e.cfgPath)
	if err != nil {
		t.Fatalf("scan: %v\n%s\n%s", err, out, errOut)
	}
	out, errOut, err = runHangable(t, "projects", "--config", e.cfgPath, "--json")
	if err != nil {
		t.Fatalf("projects: %v\n%s\n%s", err, out, errOut)
	}
	var env server.Envelope
	if err := json.Unmarshal([]byte(out), &env); err != nil {
		t.Fatalf("projects --json: %v\n%s", err, out)
	}
	if got := envNames(&env); !slices.Equal(got, []string{"fifo-a-pkg", "fifo-b-pkg", "fifo-c-pkg"}) {
		t.Fatalf("after scan, projects %v, want all three\n%s", got, out)
	}
	if env.ScanState != "idle" {
		t.Errorf("after a finished scan, scanState %q", env.ScanState)
	}

	// A serve on a fresh data dir discovers them itself.
	e.dataDir = filepath.Join(e.base, "data-serve")
	e.writeConfig(t)
	cg := startMCP(t, e.base, os.Environ(), cgcatBin(t), "serve", "--config", e.cfgPath)
	listing := catalogListing(t, cg, 3)
	if got := envNames(listing); !slices.Equal(got, []string{"fifo-a-pkg", "fifo-b-pkg", "fifo-c-pkg"}) {
		t.Fatalf("serve lists %v, want all three", got)
	}
}

// envNames are the names an envelope lists, sorted.
func envNames(e *server.Envelope) []string {
	var names []string
	for _, p := range e.Projects {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	return names
}

// TestServeAppliesSameStampConfig: a config of the same size that denies
// another project, copied over the old one with the old modification time
// (`cp -p`, `rsync -a`, `tar`), is in force in a running serve before its
// next answer (issue 23, case 7: a stat of mtime and size missed it).
func TestServeAppliesSameStampConfig(t *testing.T) {
	e := newTestEnv(t)
	for _, n := range []string{"live-a", "live-b"} {
		fakeProject(t, filepath.Join(e.root, n), n+"-pkg")
	}
	writeDeny := func(path, deny string) {
		cfg, err := config.AdHoc([]string{e.root}, e.dataDir)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Sharing.DenyRoots = []string{filepath.Join(e.root, deny)}
		b, err := config.Marshal(cfg)
		if err != nil {
			t.Fatal(err)
		}
		writeTestFile(t, path, string(b))
	}
	writeDeny(e.cfgPath, "live-x") // denies nothing that exists
	next := filepath.Join(e.base, "next.json")
	writeDeny(next, "live-b")
	if a, b := readTestFile(t, e.cfgPath), readTestFile(t, next); len(a) != len(b) || a == b {
		t.Fatal("fixture: the two configs must differ and have the same size")
	}
	cg := startMCP(t, e.base, os.Environ(), cgcatBin(t), "serve", "--config", e.cfgPath)
	if got := envNames(catalogListing(t, cg, 2)); !slices.Equal(got, []string{"live-a-pkg", "live-b-pkg"}) {
		t.Fatalf("before the edit: %v", got)
	}
	fi, err := os.Stat(e.cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	// What `cp -p next config.json` does: the content written in place,
	// then the times of the source put back — here the old file's own, so
	// size and mtime both stay as they were.
	if err := os.WriteFile(e.cfgPath, []byte(readTestFile(t, next)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(e.cfgPath, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.Stat(e.cfgPath); after.Size() != fi.Size() || !after.ModTime().Equal(fi.ModTime()) {
		t.Fatal("fixture: the copy changed size or mtime")
	}
	res := cg.call(t, "local_codegraph_projects", map[string]any{"limit": 50})
	if got := envNames(envelopeOf(t, res.StructuredContent)); !slices.Equal(got, []string{"live-a-pkg"}) {
		t.Fatalf("the next answer after a same-stamp config edit lists %v; live-b is denied now", got)
	}
}
