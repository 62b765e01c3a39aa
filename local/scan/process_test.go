package scan

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"

	"github.com/cgcat/cgcat/local/store"
)

// The test binary doubles as a scanner process for the crash and
// concurrency tests: real processes, real leases, real SIGKILL.
func TestMain(m *testing.M) {
	if os.Getenv("CGCAT_SCAN_CHILD") == "1" {
		os.Exit(scanChild())
	}
	os.Exit(m.Run())
}

func scanChild() int {
	ctx := context.Background()
	st, err := store.Open(ctx, os.Getenv("CHILD_DATA"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	opt := testOptions(os.Getenv("CHILD_ROOT"))
	opt.SliceDirs, _ = strconv.Atoi(os.Getenv("CHILD_SLICE"))
	s, err := Start(ctx, st, opt)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	s.Progress = func(State) { fmt.Println("slice") }
	fmt.Println("leased")
	for {
		r, err := s.RunRound(ctx)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if r.Finished {
			fmt.Println("done")
			return 0
		}
	}
}

func childCmd(t *testing.T, data, root string, slice int) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "CGCAT_SCAN_CHILD=1", "CHILD_DATA="+data, "CHILD_ROOT="+root, "CHILD_SLICE="+strconv.Itoa(slice))
	cmd.Stderr = os.Stderr
	return cmd
}

// genTree makes a tree of about dirs directories with a project every so often.
func genTree(t testing.TB, root string, fanout, depth, projectEvery int) int {
	n, projects := 0, 0
	var mk func(dir string, d int)
	mk = func(dir string, d int) {
		if d == depth {
			return
		}
		for i := range fanout {
			c := filepath.Join(dir, fmt.Sprintf("d%d", i))
			if err := os.MkdirAll(c, 0o755); err != nil {
				t.Fatal(err)
			}
			n++
			if n%projectEvery == 0 {
				mkProject(t, c)
				projects++
			}
			mk(c, d+1)
		}
	}
	mk(root, 0)
	return projects
}

func TestKilledScannerResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	root := canon(t, t.TempDir())
	projects := genTree(t, root, 6, 4, 23) // 1554 directories
	clean := presentRoots(scanAll(t, newStore(t), testOptions(root)))
	if len(clean) != projects {
		t.Fatalf("clean scan found %d of %d", len(clean), projects)
	}
	data := t.TempDir()
	kills := 0
	for try := 0; try < 20; try++ {
		cmd := childCmd(t, data, root, 40)
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		killAt := 1 + rand.IntN(6)
		slices, finished := 0, false
		for sc.Scan() {
			switch sc.Text() {
			case "slice":
				slices++
			case "done":
				finished = true
			}
			if slices == killAt && !finished {
				_ = cmd.Process.Signal(syscall.SIGKILL)
				kills++
				break
			}
		}
		_ = cmd.Wait()
		if finished {
			break
		}
	}
	if kills < 3 {
		t.Fatalf("only %d kills happened; the test did not exercise recovery", kills)
	}
	// Whatever the kills left, one more scanner finishes the pass.
	st, err := store.Open(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	s := readStateT(t, st)
	if s.PassRunning {
		scanAll(t, st, testOptions(root))
	}
	got := presentRoots(records(t, st)) // records() fails on two records for one root
	if !slices.Equal(got, clean) {
		t.Fatalf("after %d kills: %d projects, clean scan has %d", kills, len(got), len(clean))
	}
}

func TestTwoScannersOneDataDir(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	root := canon(t, t.TempDir())
	projects := genTree(t, root, 5, 4, 17)
	data := t.TempDir()
	var wg sync.WaitGroup
	errs := make([]error, 2)
	outs := make([][]byte, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i], errs[i] = childCmd(t, data, root, 50).Output()
		}()
	}
	wg.Wait()
	for i := range 2 {
		if errs[i] != nil {
			t.Fatalf("scanner %d: %v\n%s", i, errs[i], outs[i])
		}
	}
	st, err := store.Open(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	if got := presentRoots(records(t, st)); len(got) != projects {
		t.Fatalf("found %d of %d", len(got), projects)
	}
	if s := readStateT(t, st); s.PassRunning || s.Pass != 2 {
		t.Fatalf("two scanners should have run two whole passes one after the other: %+v", s)
	}
}
