//go:build unix

package scan

import (
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cgcat/cgcat/local/fixture"
	"github.com/cgcat/cgcat/local/nofollow"
	"github.com/cgcat/cgcat/local/store"
)

// TestDirCacheModel changes a tree at random (directories made deep down,
// removed, renamed, swapped for symlinks, made unreadable and readable
// again, changed with their mtime set back, databases created in and
// removed from existing .codegraph directories, excluded names, walk
// settings changed, the cache file damaged or replaced by another data
// dir's) and after every change runs a pass with the directory cache, as
// the lease holder would (sometimes split over several scanners, a round
// each), and a walk of the same tree without it: both must find the same
// projects and gaps, read the same number of directories and say the same
// of each project. The file system's clock is made coarse (the cache must
// not keep a listing taken in the tick of a change), and the test sleeps
// now and then so that listings age into the cache. CGCAT_MODEL_SEED
// replays a failing run; CGCAT_MODEL_STEPS sets its length.
func TestDirCacheModel(t *testing.T) {
	noRacyStamps(t) // passes made at different moments are compared, stamps too
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("CGCAT_MODEL_SEED"); v != "" {
		seed, _ = strconv.ParseUint(v, 10, 64)
	}
	if os.Getenv("CGCAT_UNPRIVILEGED") != "1" {
		// The run as nobody (below) gets the same seed.
		t.Logf("seed %d (CGCAT_MODEL_SEED=%d replays this run)", seed, seed)
		t.Setenv("CGCAT_MODEL_SEED", strconv.FormatUint(seed, 10))
	}
	if fixture.RunUnprivileged(t) {
		return
	}
	steps := 100
	if testing.Short() {
		steps = 40
	}
	if v := os.Getenv("CGCAT_MODEL_STEPS"); v != "" {
		steps, _ = strconv.Atoi(v)
	}
	t.Logf("seed %d (CGCAT_MODEL_SEED=%d replays this run)", seed, seed)
	m := &model{t: t, rng: rand.New(rand.NewPCG(seed, seed^0xda3e39cb94b95bdb)), seed: seed}
	m.root = canon(t, t.TempDir())
	t.Cleanup(m.unlockAll)
	unprivileged := os.Geteuid() != 0
	for i := range 25 {
		m.mkdir(m.randDir(), i%3 == 0)
	}
	st := newStore(t)
	other := newStore(t) // another data dir, scanning the same tree now and then
	cachePath := filepath.Join(st.DataDir(), cacheName)
	// A tick of 100 ms, and a margin a little over it (the kernel's own
	// clock is coarse too, and time.Now is not the clock it stamps with).
	const tick = 100 * time.Millisecond
	cached := func(s *Scanner) {
		setMargin(s, tick+20*time.Millisecond)
		s.coarsen = func(_ string, t nofollow.Times) nofollow.Times {
			t.Mtime, t.Ctime = t.Mtime/int64(tick)*int64(tick), t.Ctime/int64(tick)*int64(tick)
			return t
		}
	}
	settings := []Options{testOptions(m.root)}
	withVendor := testOptions(m.root)
	withVendor.ExcludeNames = append(withVendor.ExcludeNames, "vendor")
	shallow := testOptions(m.root)
	shallow.MaxDepth = 3
	follow := testOptions(m.root)
	follow.FollowSymlinks = true
	settings = append(settings, withVendor, shallow, follow)
	opt := settings[0]
	var listed, visited int64
	for step := range steps {
		var op string
		switch r := m.rng.IntN(100); {
		case r < 14:
			op = m.mkdir(m.randDir(), m.rng.IntN(3) == 0)
		case r < 22:
			op = m.project(m.randDir())
		case r < 30:
			op = m.dbBack()
		case r < 37:
			op = m.dbRemove()
		case r < 44:
			op = m.remove()
		case r < 52:
			op = m.rename()
		case r < 58:
			op = m.swapForSymlink()
		case r < 64 && unprivileged:
			op = m.chmod()
		case r < 72:
			op = m.restoredMtime()
		case r < 74:
			op = m.mkdirNamed("vendor")
		case r < 76:
			op = m.mkdirNamed("node_modules")
		case r < 82:
			// Two changes to one directory, a pass between them: the
			// second lands in the tick of the first, and of the listing.
			d := m.randDir()
			m.project(filepath.Join(d, m.name()))
			quickPass(t, st, opt, cached)
			op = "twice in a tick: " + m.project(filepath.Join(d, m.name()))
		case r < 86:
			opt = settings[m.rng.IntN(len(settings))]
			op = fmt.Sprintf("settings: maxDepth %d, exclude %v, followSymlinks %v", opt.MaxDepth, opt.ExcludeNames, opt.FollowSymlinks)
		case r < 90:
			time.Sleep(3 * tick)
			op = "sleep"
		case r < 92:
			op = m.damage(cachePath)
		case r < 94:
			quickPass(t, other, opt, cached)
			op = "another data dir scans"
		case r < 96:
			b, err := os.ReadFile(filepath.Join(other.DataDir(), cacheName))
			if err == nil {
				err = os.WriteFile(cachePath, b, 0o600)
			}
			op = fmt.Sprintf("the cache file of another data dir taken (%v)", err)
		default:
			op = "nothing"
		}
		split := 0
		if m.rng.IntN(5) == 0 {
			split = 1 + m.rng.IntN(8)
			op += fmt.Sprintf("; the pass in rounds of %d directories, a scanner each", split)
		}
		m.ops = append(m.ops, op)
		var got passResult
		if split > 0 {
			got = splitPass(t, st, opt, cached, split)
		} else {
			got = runPass(t, st, opt, cached)
		}
		want := uncached(t, opt)
		sameFindings(t, fmt.Sprintf("seed %d, step %d (%s); all steps:\n  %s\n", seed, step, op, strings.Join(m.ops, "\n  ")), got, want)
		listed += got.listed
		visited += int64(got.state.PassDirs)
	}
	t.Logf("%d of %d directory visits listed the directory; the rest came from the cache", listed, visited)
	d, _ := nofollow.OpenDir(m.root)
	ty, _ := d.FSType()
	d.Close()
	if timedFS[ty] && bootID() != "" && listed >= visited {
		t.Fatalf("the cache was never used (%d listings for %d visits)", listed, visited)
	}
}

// splitPass is runPass with a scanner per round of at most dirs
// directories (as serves take a long pass over, round by round).
func splitPass(t testing.TB, st *store.Store, opt Options, tune func(*Scanner), dirs int) passResult {
	t.Helper()
	ctx := context.Background()
	opt.RoundDirs, opt.SliceDirs = dirs, min(dirs, opt.SliceDirs)
	var res passResult
	for {
		s, err := Start(ctx, st, opt)
		if err != nil {
			t.Fatal(err)
		}
		tune(s)
		s.Progress = func(State) { res.commits++ }
		s.onFound = func(root string) { res.found = append(res.found, root) }
		r, err := s.RunRound(ctx)
		res.listed += s.listings.Load()
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
		if r.Finished {
			break
		}
	}
	res.recs, res.state = records(t, st), readStateT(t, st)
	slices.Sort(res.found)
	return res
}

// quickPass runs a pass and reads nothing back.
func quickPass(t testing.TB, st *store.Store, opt Options, tune func(*Scanner)) {
	t.Helper()
	ctx := context.Background()
	s, err := Start(ctx, st, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tune(s)
	for {
		if r, err := s.RunRound(ctx); err != nil {
			t.Fatal(err)
		} else if r.Finished {
			return
		}
	}
}

// model is the tree the randomized test changes.
type model struct {
	t      *testing.T
	rng    *rand.Rand
	seed   uint64
	root   string
	n      int
	ops    []string
	locked []string
}

func (m *model) name() string {
	m.n++
	return fmt.Sprintf("n%d", m.n)
}

// dirs lists the real directories of the tree (no symlinks, nothing in
// .codegraph, nothing below a locked directory).
func (m *model) dirs() []string {
	var out []string
	filepath.WalkDir(m.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return filepath.SkipDir
		}
		if d.IsDir() {
			if d.Name() == ".codegraph" || slices.Contains(m.locked, p) {
				return filepath.SkipDir
			}
			out = append(out, p)
		}
		return nil
	})
	return out
}

func (m *model) randDir() string {
	ds := m.dirs()
	return ds[m.rng.IntN(len(ds))]
}

// below picks a directory under the root, not the root ("" if none).
func (m *model) below() string {
	ds := m.dirs()[1:]
	if len(ds) == 0 {
		return ""
	}
	return ds[m.rng.IntN(len(ds))]
}

func (m *model) rel(p string) string { r, _ := filepath.Rel(m.root, p); return r }

// mkdir makes a chain of one to four new directories under parent, the
// last a project or not.
func (m *model) mkdir(parent string, project bool) string {
	p := parent
	for range 1 + m.rng.IntN(4) {
		p = filepath.Join(p, m.name())
	}
	if project {
		mkProject(m.t, p)
	} else if err := os.MkdirAll(p, 0o755); err != nil {
		m.t.Fatal(err)
	}
	return fmt.Sprintf("mkdir %s (project %v)", m.rel(p), project)
}

func (m *model) mkdirNamed(name string) string {
	p := filepath.Join(m.randDir(), name, m.name())
	mkProject(m.t, p)
	return "mkdir " + m.rel(p) + " (project)"
}

func (m *model) project(dir string) string {
	mkProject(m.t, dir)
	return "project " + m.rel(dir)
}

// damage breaks the cache file: cut short, a byte changed, or garbage.
func (m *model) damage(path string) string {
	b, err := os.ReadFile(path)
	if err != nil || len(b) == 0 {
		return "no cache file to damage"
	}
	var what string
	switch m.rng.IntN(3) {
	case 0:
		n := m.rng.IntN(len(b))
		b, what = b[:n], fmt.Sprintf("cut to %d of %d bytes", n, len(b))
	case 1:
		i := m.rng.IntN(len(b))
		b[i] ^= byte(1 + m.rng.IntN(255))
		what = fmt.Sprintf("byte %d of %d changed", i, len(b))
	default:
		b, what = []byte("not a cache"), "replaced by garbage"
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		m.t.Fatal(err)
	}
	return "cache file " + what
}

// dbBack gives a .codegraph without its database its database again (the
// directory holding .codegraph does not change).
func (m *model) dbBack() string {
	var empty []string
	for _, d := range m.dirs() {
		if _, err := os.Stat(filepath.Join(d, ".codegraph")); err == nil {
			if _, err := os.Stat(filepath.Join(d, ".codegraph", "codegraph.db")); err != nil {
				empty = append(empty, d)
			}
		}
	}
	if len(empty) == 0 {
		return m.dbRemove()
	}
	d := empty[m.rng.IntN(len(empty))]
	mkProject(m.t, d)
	return "database back in " + m.rel(d)
}

func (m *model) dbRemove() string {
	var projects []string
	for _, d := range m.dirs() {
		if _, err := os.Stat(filepath.Join(d, ".codegraph", "codegraph.db")); err == nil {
			projects = append(projects, d)
		}
	}
	if len(projects) == 0 {
		return m.project(m.randDir())
	}
	d := projects[m.rng.IntN(len(projects))]
	if err := os.Remove(filepath.Join(d, ".codegraph", "codegraph.db")); err != nil {
		m.t.Fatal(err)
	}
	return "database removed from " + m.rel(d)
}

func (m *model) remove() string {
	d := m.below()
	if d == "" {
		return "nothing to remove"
	}
	m.unlockUnder(d)
	if err := os.RemoveAll(d); err != nil {
		m.t.Fatal(err)
	}
	return "rm -r " + m.rel(d)
}

func (m *model) rename() string {
	d := m.below()
	if d == "" {
		return "nothing to rename"
	}
	var to string
	for range 10 {
		if p := m.randDir(); p != d && !strings.HasPrefix(p+"/", d+"/") {
			to = p
			break
		}
	}
	if to == "" {
		to = filepath.Dir(d)
	}
	dst := filepath.Join(to, m.name())
	if err := os.Rename(d, dst); err != nil {
		m.t.Fatal(err)
	}
	m.renameLocked(d, dst)
	return "mv " + m.rel(d) + " " + m.rel(dst)
}

func (m *model) swapForSymlink() string {
	d := m.below()
	if d == "" {
		return "nothing to swap"
	}
	real := filepath.Join(filepath.Dir(d), m.name())
	if err := os.Rename(d, real); err != nil {
		m.t.Fatal(err)
	}
	m.renameLocked(d, real)
	if err := os.Symlink(real, d); err != nil {
		m.t.Fatal(err)
	}
	return "swapped " + m.rel(d) + " for a symlink to " + m.rel(real)
}

// chmod makes a directory unreadable, or one made so readable again.
func (m *model) chmod() string {
	if len(m.locked) > 0 && m.rng.IntN(2) == 0 {
		d := m.locked[len(m.locked)-1]
		m.locked = m.locked[:len(m.locked)-1]
		if err := os.Chmod(d, 0o755); err != nil {
			m.t.Fatal(err)
		}
		return "chmod 755 " + m.rel(d)
	}
	d := m.below()
	if d == "" {
		return "nothing to lock"
	}
	if err := os.Chmod(d, 0); err != nil {
		m.t.Fatal(err)
	}
	m.locked = append(m.locked, d)
	return "chmod 000 " + m.rel(d)
}

// restoredMtime adds or removes an entry of a directory and sets its mtime
// back, as tar and rsync do: only its ctime says it changed.
func (m *model) restoredMtime() string {
	d := m.randDir()
	fi, err := os.Stat(d)
	if err != nil {
		m.t.Fatal(err)
	}
	what := ""
	ents, _ := os.ReadDir(d)
	var sub []string
	for _, e := range ents {
		if e.IsDir() && e.Name() != ".codegraph" && !slices.Contains(m.locked, filepath.Join(d, e.Name())) {
			sub = append(sub, e.Name())
		}
	}
	if len(sub) > 0 && m.rng.IntN(2) == 0 {
		victim := filepath.Join(d, sub[m.rng.IntN(len(sub))])
		m.unlockUnder(victim)
		if err := os.RemoveAll(victim); err != nil {
			m.t.Fatal(err)
		}
		what = "removed " + filepath.Base(victim)
	} else {
		p := filepath.Join(d, m.name())
		mkProject(m.t, p)
		what = "added project " + filepath.Base(p)
	}
	if err := os.Chtimes(d, fi.ModTime(), fi.ModTime()); err != nil {
		m.t.Fatal(err)
	}
	return fmt.Sprintf("in %s %s, mtime set back", m.rel(d), what)
}

// unlockUnder makes every locked directory at or below d readable again,
// outermost first (an inner one cannot be reached before).
func (m *model) unlockUnder(d string) {
	var under []string
	m.locked = slices.DeleteFunc(m.locked, func(l string) bool {
		if l == d || strings.HasPrefix(l, d+"/") {
			under = append(under, l)
			return true
		}
		return false
	})
	slices.SortFunc(under, func(a, b string) int { return len(a) - len(b) })
	for _, l := range under {
		os.Chmod(l, 0o755)
	}
}

func (m *model) renameLocked(from, to string) {
	for i, l := range m.locked {
		if l == from || strings.HasPrefix(l, from+"/") {
			m.locked[i] = to + strings.TrimPrefix(l, from)
		}
	}
}

func (m *model) unlockAll() { m.unlockUnder(m.root) }
