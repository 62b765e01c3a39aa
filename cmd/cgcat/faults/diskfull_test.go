//go:build linux

package faults

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// lowSpace is how doctor may say the data dir's disk is (nearly) full.
var lowSpace = regexp.MustCompile(`(?i)(free space|no space|disk (is )?full|space left|low on (disk )?space|out of space)`)

// Issue 11 item 11: the disk fills up at a random moment while a scan
// writes (25 times; half of them on a fresh data dir, where the store is
// being created). Afterwards the store always opens — no command reports
// damage or needs `cgcat store recover` — doctor reports the low free
// space while the disk is full, readers answer from the catalog as it is,
// and once space is back discovery completes. Root only (a small tmpfs).
func TestDiskFullAtRandomMoments(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	if os.Geteuid() != 0 {
		t.Skip("a small tmpfs for a full disk needs root (mount -t tmpfs); run the suite as root (CI does)")
	}
	base := canonTemp(t)
	code := filepath.Join(base, "code")
	paths := genProjects(t, code, 6, 40)
	fs := filepath.Join(base, "fs")
	if err := os.MkdirAll(fs, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", fs).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small tmpfs (%v: %s)", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", fs).Run() })
	e := env(base)
	// A catalog built once on the small disk, copied for the half of the
	// runs that start from an existing store.
	pristine := filepath.Join(base, "pristine")
	pcfg := writeConfig(t, filepath.Join(base, "pristine.json"), cfgOpts{data: filepath.Join(fs, "p"), roots: []string{code}})
	first := run(e, 60*time.Second, "", "scan", "--config", pcfg)
	if first.code != 0 {
		t.Fatalf("pristine scan: %s", first)
	}
	// The disk fills at a random moment within about one scan's time.
	span := max(first.elapsed*3/2, 50*time.Millisecond)
	copyDir(t, filepath.Join(fs, "p"), pristine)
	_ = os.RemoveAll(filepath.Join(fs, "p"))

	r := rng(t)
	var failures []string
	example := map[string]string{} // first example of each kind of problem
	damaged, noLowSpace, readersFailed := 0, 0, 0
	for i := range 25 {
		data := filepath.Join(fs, fmt.Sprintf("d%02d", i))
		fresh := i%2 == 0
		if !fresh {
			copyDir(t, pristine, data)
		}
		// Many small slices: many batches for the full disk to hit.
		cfg := writeConfig(t, filepath.Join(base, fmt.Sprintf("c%02d.json", i)), cfgOpts{data: data, roots: []string{code}, slice: 10})
		if !fresh {
			// New metadata everywhere: the rescan writes every record.
			for j, p := range paths {
				mkProject(t, p, fmt.Sprintf("pkg-%d-%d", i, j), fmt.Sprintf("edited in run %d", i))
			}
		}
		scan := startBg(t, e, "scan", "--config", cfg)
		delay := time.Duration(r.Int64N(int64(span)))
		time.Sleep(delay)
		filler := fillDisk(t, fs)
		scanErr := scan.wait(60 * time.Second)
		var bad []string
		all := scan.out.String() // what was said while the disk was full
		// While the disk is full.
		doc := run(e, 30*time.Second, "", "doctor", "--config", cfg)
		all += doc.out()
		if !lowSpace.MatchString(doc.stdout) {
			noLowSpace++
			bad = append(bad, "doctor does not report the full disk")
			if example["doctor"] == "" {
				example["doctor"] = fmt.Sprintf("run %d: doctor while the disk is full does not report it:\n%s", i, doc)
			}
		}
		if _, err := os.Stat(filepath.Join(data, "catalog.db", "CURRENT")); err == nil && !fresh {
			q := run(e, 30*time.Second, "", "projects", "--json", "--config", cfg)
			all += q.out()
			if q.code != 0 {
				readersFailed++
				bad = append(bad, "a reader fails while the disk is full")
				if example["reader"] == "" {
					example["reader"] = fmt.Sprintf("run %d: a reader fails while the disk is full (the catalog as it is must answer):\n%s", i, q)
				}
			}
		}
		if err := os.Remove(filler); err != nil {
			t.Fatal(err)
		}
		// Space is back: everything works without a recover.
		s2 := run(e, 60*time.Second, "", "scan", "--config", cfg)
		q2 := run(e, 30*time.Second, "", "projects", "--json", "--limit", "50", "--config", cfg)
		d2 := run(e, 30*time.Second, "", "doctor", "--config", cfg)
		after := s2.out() + q2.out() + d2.stdout
		for _, c := range []cliResult{s2, q2} {
			if c.code != 0 {
				bad = append(bad, "a command fails once space is back")
				if example["after"] == "" {
					example["after"] = fmt.Sprintf("run %d: once space is back:\n%s", i, c)
				}
			}
		}
		if strings.Contains(after, "damaged") || strings.Contains(after, "store recover") || strings.Contains(all+after, "panic:") {
			damaged++
			bad = append(bad, "a damaged store")
			if example["damaged"] == "" {
				example["damaged"] = fmt.Sprintf("run %d: once space is back, a command reports a damaged store (or one panicked):\n%s", i, short(after))
			}
		}
		if len(bad) > 0 {
			failures = append(failures, fmt.Sprintf("run %d (%s data dir, disk filled %s into the scan, scan ended: %v): %s",
				i, map[bool]string{true: "fresh", false: "existing"}[fresh], delay.Round(time.Millisecond), scanErr, strings.Join(bad, "; ")))
		}
		_ = os.RemoveAll(data)
	}
	t.Logf("disk full at random moments, 25 runs: %d left a store reported damaged, %d doctor runs did not report the full disk, %d readers failed while full", damaged, noLowSpace, readersFailed)
	if len(failures) > 0 {
		var ex []string
		for _, k := range []string{"damaged", "after", "reader", "doctor"} {
			if example[k] != "" {
				ex = append(ex, example[k])
			}
		}
		t.Fatalf("%d of 25 runs went wrong:\n%s\n\none example of each problem:\n%s", len(failures), strings.Join(failures, "\n"), strings.Join(ex, "\n\n"))
	}
}

// fillDisk writes a file on dir's file system until it is full.
func fillDisk(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "filler")
	f, err := os.Create(p)
	if err != nil {
		if errors.Is(err, syscall.ENOSPC) {
			return p
		}
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for _, n := range []int{64 << 10, 4096, 512, 1} {
		for {
			if _, err := f.Write(buf[:n]); err != nil {
				break
			}
		}
	}
	return p
}
