//go:build linux

package multiproc

import (
	"bufio"
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cgcat/cgcat/local/fixture"
)

// Three servers and a scanner on one data dir, 200 concurrent calls while
// the scan runs: every call answers, no lock error leaks, and every process
// hands out the same ids.
func TestThreeServersAndAScanner(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	base := t.TempDir()
	root := filepath.Join(base, "code")
	projects := genTree(t, root, 6, 4, 31)
	data := filepath.Join(base, "data")
	cfg := writeConfig(t, base, cfgOpts{data: data, root: root, slice: 200})

	servers := []*server{startServer(t, cfg), startServer(t, cfg), startServer(t, cfg)}
	scan := exec.Command(cgcatBin, "scan", "--config", cfg)
	scanOut := &strings.Builder{}
	scan.Stdout, scan.Stderr = scanOut, scanOut
	if err := scan.Start(); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := servers[i%3]
			args := map[string]any{"limit": 5}
			switch i % 4 {
			case 1:
				args["query"] = fmt.Sprintf("pkg-%d", (i*31)%1300)
			case 2:
				args["query"] = "project number"
			case 3:
				args["refresh"] = true
			}
			_, text, err := s.call(ctx, "local_codegraph_projects", args)
			if err != nil {
				errs <- fmt.Errorf("call %d: %v", i, err)
				return
			}
			for _, bad := range []string{"resource temporarily unavailable", "EAGAIN", "stayed busy"} {
				if strings.Contains(text, bad) {
					errs <- fmt.Errorf("call %d leaked a lock error: %s", i, text)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if err := scan.Wait(); err != nil {
		t.Fatalf("cgcat scan: %v\n%s", err, scanOut)
	}

	// Once the scan has finished, all three agree on every id and path.
	var views []map[string]string
	for i, s := range servers {
		waitFor(t, 30*time.Second, fmt.Sprintf("server %d to see all %d projects", i, len(projects)), func() bool {
			return len(s.listAll(t, ctx)) == len(projects)
		})
		views = append(views, s.listAll(t, ctx))
	}
	for i := 1; i < 3; i++ {
		if !maps.Equal(views[0], views[i]) {
			t.Fatalf("server %d sees different ids or paths than server 0", i)
		}
	}
	paths := slices.Sorted(maps.Values(views[0]))
	if !slices.Equal(paths, projects) {
		t.Fatalf("paths differ from the tree's projects:\n got  %d\n want %d", len(paths), len(projects))
	}
}

// Kill the scan lease holder (a real `cgcat scan`) at random points, 20
// times; whoever comes next takes over and the result equals a clean scan.
func TestKilledScannersTakeOver(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	base := t.TempDir()
	root := filepath.Join(base, "code")
	projects := genTree(t, root, 8, 4, 37) // 4,680 directories: ~120 slices
	data := filepath.Join(base, "data")
	cfg := writeConfig(t, base, cfgOpts{data: data, root: root, slice: 40})
	kills := 0
	for range 20 {
		cmd := exec.Command(cgcatBin, "scan", "--config", cfg)
		cmd.Env = append(os.Environ(), "CGCAT_PROGRESS=lines")
		stderr, _ := cmd.StderrPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(stderr)
		killAfter := rand.IntN(4) // slices
		seen := 0
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "progress ") {
				seen++
				if seen > killAfter {
					// Random point: right away, or a little into the next slice.
					time.Sleep(time.Duration(rand.IntN(30)) * time.Millisecond)
					_ = cmd.Process.Signal(syscall.SIGKILL)
					kills++
					break
				}
			}
		}
		if werr := cmd.Wait(); werr != nil && !strings.Contains(werr.Error(), "killed") {
			t.Fatalf("a scanner after a kill must resume, not fail: %v", werr)
		}
	}
	if kills < 10 {
		t.Fatalf("only %d of 20 runs were killed mid-scan", kills)
	}
	if out, err := runCgcat(t, nil, "scan", "--config", cfg); err != nil {
		t.Fatalf("final scan: %v\n%s", err, out)
	}
	s := startServer(t, cfg)
	got := slices.Sorted(maps.Values(s.listAll(t, context.Background())))
	if !slices.Equal(got, projects) {
		t.Fatalf("after %d kills the catalog has %d projects, the tree %d", kills, len(got), len(projects))
	}
}

// A scan lease holder frozen with SIGSTOP loses its lease to a newcomer;
// when it wakes it cannot commit (fencing) and exits with a clear error.
//
// The case needs a holder frozen with work left. A first scan is fast, and
// catching it outside a store batch can take many stop/continue rounds, so
// it may end its pass before it is caught: the newcomer then starts a pass
// of its own instead of resuming the holder's, and the woken holder rightly
// has nothing left to write. That try proves nothing and is made again on
// a tree eight times the size; the verdict comes only from a try where the
// holder was frozen mid-pass.
func TestFrozenHolderIsFenced(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	for depth := 4; depth <= 7; depth++ {
		if frozenHolderIsFenced(t, depth) {
			return
		}
		t.Logf("the holder ended its pass before it was frozen (tree depth %d); again on a bigger tree", depth)
	}
	t.Fatal("the holder ended its pass before it was frozen on every tree up to depth 7 (fanout 8)")
}

// frozenHolderIsFenced runs the case once on a tree of the given depth. It
// reports false when the holder could not be frozen mid-pass.
func frozenHolderIsFenced(t *testing.T, depth int) bool {
	base := t.TempDir()
	root := filepath.Join(base, "code")
	projects := genTree(t, root, 8, depth, 29)
	data := filepath.Join(base, "data")
	cfg := writeConfig(t, base, cfgOpts{data: data, root: root, slice: 50})
	env := []string{"CGCAT_PROGRESS=lines", "CGCAT_LEASE_STALE_AFTER=1s"}

	first := exec.Command(cgcatBin, "scan", "--config", cfg)
	first.Env = append(os.Environ(), env...)
	stderr, _ := first.StderrPipe()
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "progress ") {
			break // a slice is committed; the store is closed again
		}
	}
	var rest strings.Builder
	restDone := make(chan struct{})
	go func() {
		for sc.Scan() {
			rest.WriteString(sc.Text() + "\n")
		}
		close(restDone)
	}()
	// Freeze it while it does not hold the store open (a process frozen
	// inside a batch would keep LevelDB's own lock; no lease can break that).
	if !stopOutsideStoreOrEnd(t, first.Process.Pid, filepath.Join(data, "catalog.db")) {
		<-restDone // all of its output read before Wait closes the pipe
		_ = first.Wait()
		return false
	}

	out, err := runCgcat(t, env, "scan", "--config", cfg)
	if err != nil {
		t.Fatalf("the second scanner must take over from the frozen one: %v\n%s", err, out)
	}
	if err := first.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	// Read all it says before Wait, which closes the pipe (its last
	// words, "taken over", were lost that way once).
	<-restDone
	werr := first.Wait()
	// The newcomer resumed the holder's pass (pass 1) only if the holder
	// was frozen before that pass ended.
	if !strings.Contains(out, "progress pass=1 ") {
		if werr != nil {
			t.Fatalf("a holder that ended its pass before it was frozen must exit cleanly: %v\n%s", werr, rest.String())
		}
		return false
	}
	if werr == nil {
		t.Fatalf("the woken former holder must not finish as if it still held the lease:\n%s", rest.String())
	}
	if !strings.Contains(rest.String(), "taken over") {
		t.Fatalf("the woken holder should say it was fenced off (%v):\n%s", werr, rest.String())
	}
	s := startServer(t, cfg)
	got := slices.Sorted(maps.Values(s.listAll(t, context.Background())))
	if !slices.Equal(got, projects) {
		t.Fatalf("catalog has %d projects, tree %d", len(got), len(projects))
	}
	return true
}

// Two frontends with different sharing views on one data dir never see
// each other's private projects: not the name, the path or a count.
func TestTwoViewsOneDataDir(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	base := t.TempDir()
	root := filepath.Join(base, "code")
	mkProject(t, filepath.Join(root, "shared", "common-lib"), "common-lib", "shared by both")
	mkProject(t, filepath.Join(root, "alice", "alice-secret"), "alice-secret-zebra", "only alice")
	mkProject(t, filepath.Join(root, "bob", "bob-secret"), "bob-secret-yak", "only bob")
	data := filepath.Join(base, "data")
	alice := writeConfig(t, base, cfgOpts{data: data, root: root, deny: []string{filepath.Join(root, "bob")}})
	bob := writeConfig(t, base, cfgOpts{data: data, root: root, share: []string{filepath.Join(root, "shared"), filepath.Join(root, "bob")}})
	if out, err := runCgcat(t, nil, "scan", "--config", alice); err != nil {
		t.Fatalf("scan: %v\n%s", err, out)
	}
	a, b := startServer(t, alice), startServer(t, bob)
	ctx := context.Background()
	la, lb := a.listAll(t, ctx), b.listAll(t, ctx)
	if len(la) != 2 || len(lb) != 2 {
		t.Fatalf("alice sees %d, bob sees %d; want 2 each", len(la), len(lb))
	}
	// The shared project has one id in both views.
	var commonA, commonB string
	for id, p := range la {
		if strings.HasSuffix(p, "common-lib") {
			commonA = id
		}
	}
	for id, p := range lb {
		if strings.HasSuffix(p, "common-lib") {
			commonB = id
		}
	}
	if commonA == "" || commonA != commonB {
		t.Fatalf("shared project ids differ: %q vs %q", commonA, commonB)
	}
	check := func(who string, s *server, secret string, otherIDs map[string]string) {
		for _, q := range []string{secret, "secret", "only", ""} {
			_, text, err := s.call(ctx, "local_codegraph_projects", map[string]any{"query": q, "limit": 50})
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(text, secret) || strings.Contains(text, filepath.Base(secret)) {
				t.Fatalf("%s sees the other's private project for query %q:\n%s", who, q, text)
			}
		}
		for id, p := range otherIDs {
			if strings.HasSuffix(p, "common-lib") {
				continue
			}
			e, text, err := s.call(ctx, "local_codegraph_resolve", map[string]any{"projectId": id})
			if err != nil {
				t.Fatal(err)
			}
			if e.Status != "not_available" || strings.Contains(text, p) || strings.Contains(text, secret) {
				t.Fatalf("%s resolving the other's private id: status %s\n%s", who, e.Status, text)
			}
		}
	}
	check("bob", b, "alice-secret-zebra", la)
	check("alice", a, "bob-secret-yak", lb)
}

// A commit by one process reaches another process's searches quickly,
// without that process reading the store on every call.
func TestCommitPropagates(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	base := t.TempDir()
	root := filepath.Join(base, "code")
	mkProject(t, filepath.Join(root, "first"), "first-project", "the first")
	data := filepath.Join(base, "data")
	cfg := writeConfig(t, base, cfgOpts{data: data, root: root})
	if out, err := runCgcat(t, nil, "scan", "--config", cfg); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	s := startServer(t, cfg)
	ctx := context.Background()
	if n := len(s.listAll(t, ctx)); n != 1 {
		t.Fatalf("want 1 project, got %d", n)
	}
	mkProject(t, filepath.Join(root, "second"), "second-project", "the second")
	if out, err := runCgcat(t, nil, "scan", "--config", cfg); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// The other process's scan is committed: the very next call sees it.
	e, _, err := s.call(ctx, "local_codegraph_projects", map[string]any{"query": "second-project"})
	if err != nil {
		t.Fatal(err)
	}
	if e.Status != "ok" || len(e.Projects) == 0 || e.Projects[0].Name != "second-project" {
		t.Fatalf("a committed scan must be visible to the next call: %+v", e)
	}
}

// stopOutsideStore sends SIGSTOP at a moment when pid has no file of the
// store open, retrying (SIGCONT, wait, SIGSTOP) otherwise.
func stopOutsideStore(t *testing.T, pid int, dbDir string) {
	t.Helper()
	if !stopOutsideStoreOrEnd(t, pid, dbDir) {
		t.Fatal("the scanner ended before it was caught outside a store batch")
	}
}

// stopOutsideStoreOrEnd stops pid at a moment it holds no file of the
// store open, and reports false if the process ended first.
func stopOutsideStoreOrEnd(t *testing.T, pid int, dbDir string) bool {
	t.Helper()
	for range 1000 {
		if !fixture.Stop(t, pid) {
			return false
		}
		if !holdsFileUnder(pid, dbDir) {
			return true
		}
		_ = syscall.Kill(pid, syscall.SIGCONT)
		time.Sleep(time.Duration(1+rand.IntN(5)) * time.Millisecond)
	}
	t.Fatal("could not catch the scanner outside a store batch in 1,000 tries")
	return false
}

func holdsFileUnder(pid int, dir string) bool {
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return true // cannot tell: assume the worst
	}
	for _, fd := range fds {
		target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if err == nil && strings.HasPrefix(target, dir+"/") {
			return true
		}
	}
	return false
}

// refresh: true asked of a server that does not hold the scan lease is
// honoured by the one that does (or by whoever takes the lease): with a
// long refresh interval, only the request can explain the new project.
func TestRefreshFromNonHolder(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	base := t.TempDir()
	root := filepath.Join(base, "code")
	mkProject(t, filepath.Join(root, "first"), "first-project", "the first")
	data := filepath.Join(base, "data")
	cfg := writeConfig(t, base, cfgOpts{data: data, root: root, refresh: 3600})
	if out, err := runCgcat(t, nil, "scan", "--config", cfg); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	a, b := startServer(t, cfg), startServer(t, cfg)
	ctx := context.Background()
	// Both have run their start-up round by the time they list one project.
	for _, s := range []*server{a, b} {
		waitFor(t, 10*time.Second, "start-up", func() bool { return len(s.listAll(t, ctx)) == 1 })
	}
	time.Sleep(500 * time.Millisecond)
	mkProject(t, filepath.Join(root, "second"), "second-project", "the second")
	for _, s := range []*server{a, b} {
		if n := len(s.listAll(t, ctx)); n != 1 {
			t.Fatalf("the new project appeared without a refresh (%d): the test proves nothing", n)
		}
	}
	if _, _, err := b.call(ctx, "local_codegraph_projects", map[string]any{"refresh": true}); err != nil {
		t.Fatal(err)
	}
	for i, s := range []*server{a, b} {
		waitFor(t, 15*time.Second, fmt.Sprintf("server %d to see the refreshed catalog", i), func() bool {
			return len(s.listAll(t, ctx)) == 2
		})
	}
}
