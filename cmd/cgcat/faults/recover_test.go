//go:build linux

package faults

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// bigCatalog is a 5,000-record catalog built once per test run: the tree,
// a config and a pristine copy of the data dir, with every id → root.
type bigCatalog struct {
	base, root, pristine string
	ids                  map[string]string // id → root
	paths                []string
}

var (
	bigOnce sync.Once
	big     *bigCatalog
	bigErr  error
	bigDir  string
)

func buildBig(t *testing.T) *bigCatalog {
	t.Helper()
	bigOnce.Do(func() {
		var err error
		bigDir, err = os.MkdirTemp("", "cgcat-faults-big-")
		if err != nil {
			bigErr = err
			return
		}
		bigDir, _ = filepath.EvalSymlinks(bigDir)
		b := &bigCatalog{base: bigDir, root: filepath.Join(bigDir, "code"), pristine: filepath.Join(bigDir, "pristine")}
		b.paths = genProjects(t, b.root, 50, 100)
		e := env(bigDir)
		r := run(e, 120*time.Second, "", "scan", "--root", b.root, "--data-dir", b.pristine)
		if r.code != 0 {
			bigErr = fmt.Errorf("first scan: %s", r)
			return
		}
		s, err := startServe(t, e, 20*time.Second, "--root", b.root, "--data-dir", b.pristine)
		if err != nil {
			bigErr = err
			return
		}
		b.ids, _, err = s.listAll(20 * time.Second)
		s.kill()
		if err != nil || len(b.ids) != 5000 {
			bigErr = fmt.Errorf("pristine catalog lists %d records (%v)", len(b.ids), err)
			return
		}
		big = b
	})
	if bigErr != nil {
		t.Fatal(bigErr)
	}
	return big
}

// Issue 11 item 2: damage the largest table of a 5,000-record catalog
// (garble 4 KiB at several offsets, truncate it, delete it), then `cgcat
// store recover`, then every command. Nothing panics; a damaged or missing
// table is reported with the recover hint; recover keeps the id of every
// record it keeps, never leaves a binding without its record (a later scan
// would then refuse the root), and keeps the old store aside.
func TestRecoverDamagedTable(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	b := buildBig(t)
	type damage struct {
		name string
		do   func(t *testing.T, file string)
	}
	var cases []damage
	for _, frac := range []int{5, 20, 35, 50, 65, 80} {
		cases = append(cases, damage{fmt.Sprintf("garble 4KiB at %d pct", frac), func(t *testing.T, f string) {
			fi, _ := os.Stat(f)
			off := fi.Size() * int64(frac) / 100
			junk := make([]byte, 4096)
			r := rand.New(rand.NewPCG(uint64(frac), 11))
			for i := range junk {
				junk[i] = byte(r.IntN(256))
			}
			fh, err := os.OpenFile(f, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := fh.WriteAt(junk, off); err != nil {
				t.Fatal(err)
			}
			fh.Close()
		}})
	}
	cases = append(cases,
		damage{"truncate to half", func(t *testing.T, f string) {
			fi, _ := os.Stat(f)
			if err := os.Truncate(f, fi.Size()/2); err != nil {
				t.Fatal(err)
			}
		}},
		damage{"delete", func(t *testing.T, f string) {
			if err := os.Remove(f); err != nil {
				t.Fatal(err)
			}
		}},
	)
	kept := map[string][2]int{}
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			listed, said := checkRecover(t, b, c.do)
			kept[c.name] = [2]int{listed, said}
		})
	}
	var lines []string
	for _, c := range cases {
		lines = append(lines, fmt.Sprintf("%s: recover says %d, a serve lists %d", c.name, kept[c.name][1], kept[c.name][0]))
	}
	t.Logf("records kept by `cgcat store recover` out of 5,000: %s", strings.Join(lines, "; "))
}

var (
	recoverHint = regexp.MustCompile(`cgcat store recover`)
	readable    = regexp.MustCompile(`(\d+) records`)
)

// checkRecover damages a copy of the pristine store and checks every
// command; it returns how many records a serve lists after recover (-1 if
// it cannot list them) and how many recover said it kept.
func checkRecover(t *testing.T, b *bigCatalog, damage func(*testing.T, string)) (listed, said int) {
	listed, said = -1, -1
	base := canonTemp(t)
	data := filepath.Join(base, "data")
	copyDir(t, b.pristine, data)
	tables, _ := filepath.Glob(filepath.Join(data, "catalog.db", "*.ldb"))
	sort.Slice(tables, func(i, j int) bool { return size(tables[i]) > size(tables[j]) })
	if len(tables) == 0 {
		t.Fatal("the pristine store has no table")
	}
	damage(t, tables[0])
	e := env(base)
	flags := []string{"--root", b.root, "--data-dir", data}
	var problems []string
	bad := func(format string, a ...any) { problems = append(problems, fmt.Sprintf(format, a...)) }
	defer func() {
		if len(problems) > 0 {
			t.Errorf("damaged table %s:\n%s", filepath.Base(tables[0]), strings.Join(problems, "\n\n"))
		}
	}()

	// Before recover: no panic; a failure names the way out.
	before := run(e, 60*time.Second, "", append([]string{"projects", "--json"}, flags...)...)
	if before.panicked() {
		bad("before recover, `projects` panicked:\n%s", before)
	}
	if before.code != 0 && !recoverHint.MatchString(before.out()) {
		bad("before recover, `projects` fails without naming `cgcat store recover`:\n%s", before)
	}

	rec := run(e, 120*time.Second, "", append([]string{"store", "recover"}, flags...)...)
	if rec.code != 0 || rec.panicked() {
		bad("`cgcat store recover` failed:\n%s", rec)
		return
	}
	t.Logf("recover: %s", strings.TrimSpace(rec.stdout))
	if m := readable.FindStringSubmatch(rec.stdout); m != nil {
		said, _ = strconv.Atoi(m[1])
	}
	if !keptAside(data) {
		bad("recover left no copy of the old store in the data dir (issue 11: the old one is kept aside)")
	}

	// What recover kept, as a new serve lists it.
	keptIDs := map[string]string{}
	if s, err := startServe(t, e, 20*time.Second, flags...); err != nil {
		bad("after recover, serve does not start: %v", err)
	} else {
		ids, _, err := s.listAll(30 * time.Second)
		if err != nil {
			bad("after recover, serve's listing fails: %v\nstderr:\n%s", err, short(s.stderr.String()))
		}
		if _, _, err := s.call(20*time.Second, "local_codegraph_projects", map[string]any{"query": "pkg-7-42"}); err != nil {
			bad("after recover, serve's search fails: %v", err)
		}
		s.kill()
		keptIDs = ids
		if err == nil {
			listed = len(ids)
		}
		for id, p := range ids {
			if want, ok := b.ids[id]; !ok || (p != "" && p != want) {
				bad("after recover, %s is listed at %q; before the damage it was %q", id, p, want)
				break
			}
		}
	}
	for _, args := range [][]string{
		append([]string{"projects", "--json"}, flags...),
		append([]string{"projects", "project 7 of group 3", "--json"}, flags...),
		append([]string{"scan"}, flags...),
		append([]string{"doctor"}, flags...),
		append([]string{"store", "recover"}, flags...),
	} {
		r := run(e, 120*time.Second, "", args...)
		okCode := r.code == 0 || (args[0] == "doctor" && r.code == 1 && !strings.Contains(r.stdout, "✗ catalog store"))
		// doctor may mention the recovery; its store line must not fail.
		saysDamaged := args[0] != "store" && args[0] != "doctor" && strings.Contains(r.out(), "damaged")
		if r.panicked() || !okCode || saysDamaged {
			bad("after recover, `%s` failed:\n%s", strings.Join(args[:min(2, len(args))], " "), r)
		}
	}

	// After a scan every project is back; every id recover kept is bound to
	// the same root as before; no root has two ids.
	s, err := startServe(t, e, 20*time.Second, flags...)
	if err != nil {
		bad("after recover and scan, serve does not start: %v", err)
		return
	}
	ids, _, err := s.listAll(30 * time.Second)
	s.kill()
	if err != nil {
		bad("after recover and scan, serve's listing fails: %v", err)
		return
	}
	byPath := map[string]string{}
	for id, p := range ids {
		if p == "" {
			continue
		}
		if other, dup := byPath[p]; dup {
			bad("after recover and scan, root %s has two ids: %s and %s", p, other, id)
		}
		byPath[p] = id
	}
	if len(byPath) != len(b.paths) {
		bad("after recover and scan, %d of %d projects are listed with a path (a binding left without its record makes scan refuse a root for ever)", len(byPath), len(b.paths))
	}
	changed := 0
	for id, p := range keptIDs {
		if p != "" && byPath[p] != id {
			changed++
		}
	}
	if changed > 0 {
		bad("after recover and scan, %d of the %d records recover kept lost their id", changed, len(keptIDs))
	}
	return
}

func size(p string) int64 {
	fi, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// keptAside: somewhere in the data dir, besides catalog.db, a directory
// holds a LevelDB manifest (the old store).
func keptAside(data string) bool {
	found := false
	_ = filepath.Walk(data, func(p string, fi os.FileInfo, err error) error {
		if err != nil || found {
			return nil
		}
		if fi.IsDir() && p == filepath.Join(data, "catalog.db") {
			return filepath.SkipDir
		}
		if strings.HasPrefix(fi.Name(), "MANIFEST-") || strings.HasSuffix(fi.Name(), ".ldb") {
			found = true
		}
		return nil
	})
	return found
}
