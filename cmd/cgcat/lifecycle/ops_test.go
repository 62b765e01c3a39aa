//go:build linux

package lifecycle

// The operations of a step, chosen by the seeded generator, and the settle.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/cgcat/cgcat/gbrain/gbraintest"
)

// maxLive bounds the projects standing at once (listings stay within a
// CLI page of 50 with the missing records).
const maxLive = 24

// settleEvery forces a settle after this many steps without one.
const settleEvery = 15

type op struct {
	name   string
	weight int
	ok     func() bool
	do     func()
}

func (r *run) ops() []op {
	has := func(f func(*proj) bool) bool { return slices.ContainsFunc(r.m.live(), f) }
	always := func() bool { return true }
	ops := []op{
		{"create", 14, func() bool { return len(r.m.live()) < maxLive }, r.opCreate},
		{"remove-index", 4, func() bool { return has(func(p *proj) bool { return p.indexed }) }, r.opRemoveIndex},
		{"reindex", 3, func() bool { return has(func(p *proj) bool { return !p.indexed }) }, r.opReindex},
		{"delete", 3, func() bool { return len(r.m.live()) > 0 }, r.opDelete},
		{"move", 5, func() bool { return len(r.m.live()) > 0 }, r.opMove},
		{"rename-parent", 3, func() bool { return len(r.renameableParents()) > 0 }, r.opRenameParent},
		{"edit-manifest", 5, func() bool { return len(r.m.live()) > 0 }, r.opEditManifest},
		{"toggle-libs-root", 2, always, r.opToggleLibs},
		{"sharing", 2, always, r.opSharing},
		{"deny", 3, always, r.opDeny},
		{"create-later-deny-dir", 2, func() bool { _, err := os.Lstat(r.w.abs(relLater)); return err != nil }, r.opCreateLater},
		{"late-symlink", 1, always, r.opLateSymlink},
		{"max-depth", 2, always, r.opMaxDepth},
		{"kill-scanner", 4, always, r.opKillScanner},
		{"start-serve", 2, func() bool { return len(r.extra) < 2 }, r.opStartServe},
		{"stop-serve", 2, func() bool { return len(r.extra) > 0 }, r.opStopServe},
		{"restart-main-serve", 1, always, r.opRestartMain},
		{"freeze", 2, always, r.opFreeze},
		{"refresh", 4, always, r.opRefresh},
		{"forget", 2, always, r.opForget},
		{"prune", 1, always, r.opPrune},
		{"gbrain", 2, always, r.opGBrain},
		{"bind-mount-deny", 1, func() bool { return r.isRoot && len(r.w.mounts) < 2 }, r.opBindMount},
		{"unmount", 1, func() bool { return len(r.w.mounts) > 0 }, r.opUnmount},
		{"damage-view", 2, always, r.opDamageView},
		{"settle", 3, always, func() { r.settle() }},
		{"bulk-create", 2, func() bool { return len(r.m.live()) < maxLive-3 }, r.opBulkCreate},
		{"event-storm", 1, func() bool { return len(r.m.live()) < maxLive }, r.opEventStorm},
	}
	return append(ops, r.hostileOps()...)
}

func (r *run) doStep() {
	var cands []op
	total := 0
	for _, o := range r.ops() {
		if o.ok() {
			cands = append(cands, o)
			total += o.weight
		}
	}
	n := r.rng.IntN(total)
	var chosen op
	for _, o := range cands {
		if n < o.weight {
			chosen = o
			break
		}
		n -= o.weight
	}
	r.stats.ops[chosen.name]++
	settledNow := r.stats.settles
	before := r.liveSnapshot()
	t0 := time.Now()
	chosen.do()
	if chosen.name != "settle" && chosen.name != "prune" {
		r.stats.opTime += time.Since(t0)
	}
	r.afterChange()
	r.checkLive(chosen.name, before)
	if r.stats.settles == settledNow { // a settle checks on its own
		r.checkStep(false)
	}
	r.thaw()
	r.reapScans()
	if r.step-r.lastSettle >= settleEvery && !r.stopped() {
		r.log("settle (every %d steps)", settleEvery)
		r.settle()
	}
}

// afterChange updates what depends on the world as it is now: which
// projects have ever been visible, and since when the walk settings hold.
func (r *run) afterChange() {
	for _, d := range r.w.deny {
		if rs, now := r.resSince[d.key], resolveDeny(d.spelled); len(rs) == 0 || rs[len(rs)-1] != now {
			r.resSince[d.key] = append(rs, now)
		}
	}
	k := r.w.walkKey(r.c)
	if _, ok := r.firstKey[k]; !ok {
		r.firstKey[k] = r.step
	}
	// Coverage is per discovery root under the walk settings (issue 12):
	// removing another root, or changing deny roots, proves nothing new
	// about this one.
	for _, root := range r.w.roots(r.c) {
		if rk := rootWalkKey(root, r.c.maxDepth); !hasKey(r.firstKey, rk) {
			r.firstKey[rk] = r.step
		}
	}
	for _, p := range r.m.projects {
		// A deleted project's record keeps its last metadata: once the
		// place it was in is visible under the config in force (a deny
		// root removed, a sharing root added), that record may be shown.
		if vis, certain := r.visible(p.path); vis || !certain {
			p.everVisible = true
		}
		for place, words := range p.held {
			if vis, certain := r.visible(place); vis || !certain {
				if p.exposed == nil {
					p.exposed = map[string]bool{}
				}
				for _, w := range words {
					p.exposed[w] = true
				}
			}
		}
		if !p.gone && r.withinLimits(p.path) {
			p.reached = true
		}
	}
}

// visible says whether path may be shown under the config in force, and
// whether that is certain. Uncertain: below any place a deny root resolved
// to since the config file was last written, when its resolution changed on
// disk since (a symlink appeared or went, maybe appeared again): processes
// re-resolve deny roots on reload and refresh (R37), so until the next
// reload one may still hold any resolution of the meantime.
func (r *run) visible(path string) (vis, certain bool) {
	if !underAny(r.w.roots(r.c), path) || !underAny(r.w.shareRoots(r.c), path) {
		return false, true
	}
	// A record found through a bind mount of a denied directory stays
	// hidden after the unmount (issue 11 item 6): the catalog remembers the
	// identities its walk went through. Whether a given record under a
	// mount point came that way is not modelled: uncertain.
	if deniedBy(r.w.denySpelled(r.c), r.w.abs(relPrivate)) != "" {
		for _, m := range r.w.everMounted {
			if within(m, path) {
				return false, false
			}
		}
	}
	for _, d := range r.w.deny {
		if rs := r.resSince[d.key]; r.c.deny[d.key] && len(rs) > 1 && slices.ContainsFunc(rs, func(res string) bool { return within(res, path) }) {
			return false, false
		}
	}
	if deniedBy(r.w.denySpelled(r.c), path) != "" {
		return false, true
	}
	return true, true
}

// rootOf is the discovery root holding path ("" if none).
func (r *run) rootOf(path string) string {
	for _, root := range r.w.roots(r.c) {
		if within(root, path) {
			return root
		}
	}
	return ""
}

// withinLimits: a walk of the config in force reaches path (depth, no
// symlink on the way).
func (r *run) withinLimits(path string) bool {
	root := r.rootOf(path)
	return root != "" && depthIn(root, path) <= r.c.maxDepth && realPath(root, path)
}

func (r *run) writeConfig(why string) {
	if err := r.w.writeConfig(r.c, r.gbConf); err != nil {
		r.t.Fatal(err)
	}
	r.configWritten(why)
}

// configWritten records that the config file now says r.c.
func (r *run) configWritten(why string) {
	r.lastConfig = r.step
	// Every process loads the new file before its next answer (R37), and
	// resolves the deny roots again as they are now.
	for _, d := range r.w.deny {
		r.resSince[d.key] = []string{resolveDeny(d.spelled)}
	}
	r.log("config: %s (roots %v, share %d, deny %v, maxDepth %d, gbrain %v)", why, rels(r.w, r.w.roots(r.c)), r.c.share, r.denyKeys(), r.c.maxDepth, r.c.gbrain)
}

func (r *run) denyKeys() []string {
	var out []string
	for _, d := range r.w.deny {
		if r.c.deny[d.key] {
			out = append(out, d.key)
		}
	}
	return out
}

func rels(w *world, ps []string) []string {
	var out []string
	for _, p := range ps {
		rel, err := filepath.Rel(w.base, p)
		if err != nil {
			rel = p
		}
		out = append(out, rel)
	}
	return out
}

func (r *run) rel(p string) string { return rels(r.w, []string{p})[0] }

// ---- setup ---------------------------------------------------------------

func (r *run) setup() {
	r.step = 0
	r.c = cfg{libsRoot: true, deny: map[string]bool{"private": true, "aliased": true, "later": true, "latelink": true}, maxDepth: 4, gbrain: true}
	r.gb = gbModel{enabled: true, mode: "up"}
	r.fake.SetControl(r.t, gbraintest.Control{})
	// A first tree: each kind of place once.
	for _, area := range []string{relTeam, relTeam + "/深层 模块", relPrivate, relAliased, relLateSecret, relLibs + "/my libs", relCode, relLibs, relTeam + "/a/b/c/d"} {
		r.create(r.w.abs(area), r.dirName(), false, -1)
	}
	r.writeConfig("initial")
	r.afterChange()
	r.startMain()
	r.checkStep(false)
}

// ---- the tree ------------------------------------------------------------

var dirStyles = []string{"svc%d", "my project %d", "订单服务%d", "same", "app %d", "lib-%d"}

func (r *run) dirName() string {
	s := dirStyles[r.rng.IntN(len(dirStyles))]
	if strings.Contains(s, "%d") {
		return fmt.Sprintf(s, r.rng.IntN(1000))
	}
	return s
}

const letters = "abcdefghijklmnopqrstuvwxyz"

// newWord is a word that names one project and nothing else: found in an
// answer, it can only have come from that project's manifest.
func (r *run) newWord() string {
	for {
		b := []byte("wq")
		for range 7 {
			b = append(b, letters[r.rng.IntN(len(letters))])
		}
		if w := string(b); !r.m.usedWords[w] {
			r.m.usedWords[w] = true
			return w
		}
	}
}

func (r *run) manifest(p *proj) {
	word := r.newWord()
	p.words = append(p.words, word)
	if r.rng.IntN(4) == 0 {
		p.name = "@acme/shared" // same package name as others
	} else {
		p.name = "pkg-" + word
	}
	switch r.rng.IntN(3) {
	case 0:
		p.desc = "Handles " + word + " orders for the billing team"
	case 1:
		p.desc = "订单 处理 " + word + " 客户端"
	default:
		p.desc = "The " + word + " service, with spaces and 中文"
	}
	b, _ := json.Marshal(map[string]string{"name": p.name, "description": p.desc, "version": "1.0.0"})
	if err := os.WriteFile(filepath.Join(p.path, "package.json"), b, 0o644); err != nil {
		r.t.Fatal(err)
	}
	p.hold()
}

// create makes a new indexed project at parent/name (name made unique).
func (r *run) create(parent, name string, nested bool, step int) *proj {
	path := filepath.Join(parent, name)
	for i := 2; ; i++ {
		if _, err := os.Lstat(path); err != nil {
			break
		}
		path = filepath.Join(parent, fmt.Sprintf("%s %d", name, i))
	}
	if err := os.MkdirAll(path, 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := writeMarker(path); err != nil {
		r.t.Fatal(err)
	}
	p := &proj{key: r.m.nextKey, path: path, indexed: true, stableSince: step, arrivedAt: step}
	r.m.nextKey++
	r.m.projects[p.key] = p
	r.manifest(p)
	kind := ""
	if nested {
		kind = " (nested)"
	}
	r.log("create project #%d at %s%s: %q %q", p.key, r.rel(path), kind, p.name, p.desc)
	return p
}

// areas are the parents a new project may get.
func (r *run) areas() []string {
	as := []string{relCode, relTeam, relTeam + "/深层 模块", relTeam + "/a/b/c", relTeam + "/a/b/c/d/e", relPrivate, relPrivate + "/x",
		relAliased, relLateParent, relLateSecret, relLibs, relLibs + "/my libs", relLibs + "/vendor/深", relOutside}
	if _, err := os.Lstat(r.w.abs(relLater)); err == nil {
		as = append(as, relLater)
	}
	return as
}

func (r *run) opCreate() {
	live := r.m.live()
	if len(live) > 0 && r.rng.IntN(4) == 0 {
		host := live[r.rng.IntN(len(live))]
		parent := host.path
		if r.rng.IntN(2) == 0 {
			parent = filepath.Join(parent, "packages")
		}
		r.create(parent, r.dirName(), true, r.step)
		return
	}
	as := r.areas()
	parent := r.w.abs(as[r.rng.IntN(len(as))])
	for range r.rng.IntN(3) {
		if r.rng.IntN(2) == 0 {
			parent = filepath.Join(parent, fmt.Sprintf("lvl%d", r.rng.IntN(3)))
		}
	}
	r.create(parent, r.dirName(), false, r.step)
}

func (r *run) pick(f func(*proj) bool) *proj {
	var c []*proj
	for _, p := range r.m.live() {
		if f(p) {
			c = append(c, p)
		}
	}
	if len(c) == 0 {
		return nil
	}
	return c[r.rng.IntN(len(c))]
}

func (r *run) opRemoveIndex() {
	p := r.pick(func(p *proj) bool { return p.indexed })
	cg := filepath.Join(p.path, ".codegraph")
	var how string
	switch r.rng.IntN(3) {
	case 0:
		how = "rm -r .codegraph"
		must(r, os.RemoveAll(cg))
	case 1:
		how = "rm codegraph.db (daemon.pid stays)"
		must(r, os.Remove(filepath.Join(cg, "codegraph.db")))
		must(r, os.WriteFile(filepath.Join(cg, "daemon.pid"), []byte("4242\n"), 0o644))
	default:
		how = "codegraph.db truncated to 50 bytes"
		must(r, os.Truncate(filepath.Join(cg, "codegraph.db"), 50))
	}
	p.indexed, p.stableSince = false, r.step
	r.log("remove index of #%d at %s: %s", p.key, r.rel(p.path), how)
}

func (r *run) opReindex() {
	p := r.pick(func(p *proj) bool { return !p.indexed })
	_ = os.RemoveAll(filepath.Join(p.path, ".codegraph"))
	must(r, writeMarker(p.path))
	p.indexed, p.stableSince = true, r.step
	r.log("re-index #%d at %s", p.key, r.rel(p.path))
}

func (r *run) opDelete() {
	p := r.pick(func(*proj) bool { return true })
	gone := r.m.under(p.path)
	must(r, os.RemoveAll(p.path))
	var keys []int
	for _, q := range gone {
		q.gone = true
		keys = append(keys, q.key)
	}
	r.log("delete %s (projects %v)", r.rel(p.path), keys)
}

// special directories are never moved or renamed (deny roots, sharing
// roots, mount points and their parents).
func (r *run) special(dir string) bool {
	for _, s := range []string{relCode, relLibs, relOutside, relLinks, relPrivate, relAliased, relLater, relLateParent, relLateSecret, relTeam} {
		if within(dir, r.w.abs(s)) {
			return true
		}
	}
	for _, m := range r.w.mounts {
		if within(dir, m) || within(m, dir) {
			return true
		}
	}
	return false
}

func (r *run) opMove() {
	p := r.pick(func(p *proj) bool { return !r.special(p.path) })
	if p == nil {
		r.log("move: nothing movable")
		return
	}
	var parent string
	others := r.pick(func(q *proj) bool { return !within(p.path, q.path) })
	if others != nil && r.rng.IntN(4) == 0 {
		parent = others.path // into another project: nested
	} else {
		as := r.areas()
		parent = r.w.abs(as[r.rng.IntN(len(as))])
	}
	if within(p.path, parent) {
		r.log("move: no target")
		return
	}
	must(r, os.MkdirAll(parent, 0o755))
	name := filepath.Base(p.path)
	if r.rng.IntN(2) == 0 {
		name = r.dirName()
	}
	dst := filepath.Join(parent, name)
	for i := 2; ; i++ {
		if _, err := os.Lstat(dst); err != nil {
			break
		}
		dst = filepath.Join(parent, fmt.Sprintf("%s %d", name, i))
	}
	must(r, os.Rename(p.path, dst))
	n := len(r.m.under(p.path))
	from := p.path
	r.m.moved(from, dst, r.step)
	r.log("move #%d %s -> %s (%d projects)", p.key, r.rel(from), r.rel(dst), n)
}

// renameableParents are directories above a project that may be renamed.
func (r *run) renameableParents() []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range r.m.live() {
		for d := filepath.Dir(p.path); within(r.w.base, d) && d != r.w.base; d = filepath.Dir(d) {
			if r.special(d) || r.m.at(d) != nil || seen[d] {
				continue
			}
			seen[d] = true
			out = append(out, d)
		}
	}
	slices.Sort(out)
	return out
}

func (r *run) opRenameParent() {
	ds := r.renameableParents()
	d := ds[r.rng.IntN(len(ds))]
	parent := filepath.Dir(d)
	if r.rng.IntN(3) == 0 {
		as := r.areas()
		parent = r.w.abs(as[r.rng.IntN(len(as))])
	}
	if within(d, parent) {
		parent = filepath.Dir(d)
	}
	must(r, os.MkdirAll(parent, 0o755))
	dst := filepath.Join(parent, "renamed "+r.dirName())
	for i := 2; ; i++ {
		if _, err := os.Lstat(dst); err != nil {
			break
		}
		dst = fmt.Sprintf("%s %d", dst, i)
	}
	n := len(r.m.under(d))
	must(r, os.Rename(d, dst))
	r.m.moved(d, dst, r.step)
	r.log("rename parent %s -> %s (%d projects)", r.rel(d), r.rel(dst), n)
}

func (r *run) opEditManifest() {
	p := r.pick(func(*proj) bool { return true })
	r.manifest(p)
	r.log("edit package.json of #%d at %s: %q %q", p.key, r.rel(p.path), p.name, p.desc)
	if r.hrng.IntN(3) == 0 {
		r.editHint(p)
	}
}

// editHint breaks the project's hint file, or mends it by removing it (R6:
// a file that does not parse is ignored, and its problem shown).
func (r *run) editHint(p *proj) {
	hint := filepath.Join(p.path, "codegraph", "project.json")
	if p.badHint {
		must(r, os.Remove(hint))
		p.badHint = false
		r.log("remove the broken codegraph/project.json of #%d", p.key)
		return
	}
	must(r, os.MkdirAll(filepath.Dir(hint), 0o755))
	must(r, os.WriteFile(hint, []byte(`{"aliases": ["x",`), 0o644))
	p.badHint = true
	r.log("break codegraph/project.json of #%d at %s", p.key, r.rel(p.path))
}

func (r *run) opToggleLibs() {
	r.c.libsRoot = !r.c.libsRoot
	r.writeConfig("toggle libs discovery root")
}

func (r *run) opSharing() {
	r.c.share = (r.c.share + 1 + r.rng.IntN(2)) % 3
	r.writeConfig("sharing roots")
}

func (r *run) opDeny() {
	d := r.w.deny[r.rng.IntN(len(r.w.deny))]
	r.c.deny[d.key] = !r.c.deny[d.key]
	r.writeConfig(fmt.Sprintf("deny root %s (%s) %v", d.key, d.how, r.c.deny[d.key]))
}

func (r *run) opCreateLater() {
	must(r, os.MkdirAll(r.w.abs(relLater), 0o755))
	r.log("mkdir %s (a deny root spelled before it existed)", relLater)
	if r.rng.IntN(2) == 0 {
		r.create(r.w.abs(relLater), r.dirName(), false, r.step)
	}
}

func (r *run) opLateSymlink() {
	link := r.w.abs("links/late")
	if _, err := os.Lstat(link); err == nil {
		must(r, os.Remove(link))
		r.log("rm symlink links/late (deny root links/late/secret resolves nowhere now)")
		return
	}
	must(r, os.Symlink("../code/lateparent", link))
	r.log("symlink links/late -> ../code/lateparent (deny root links/late/secret now resolves to %s)", relLateSecret)
}

func (r *run) opMaxDepth() {
	ds := []int{2, 3, 4, 6}
	d := ds[r.rng.IntN(len(ds))]
	if d == r.c.maxDepth {
		d = 5
	}
	r.c.maxDepth = d
	r.writeConfig("maxDepth")
}

// ---- processes -----------------------------------------------------------

func (r *run) startMain() {
	r.serveN++
	p, err := startServe(cgcatBin, r.w.cfgPath, r.w.env, fmt.Sprintf("main-%d", r.serveN))
	if err != nil {
		r.t.Fatalf("start the main serve: %v", err)
	}
	r.main = p
	p.started = r.step
	r.gb.unconverged(p.name)
	r.log("start main serve %s (pid %d)", p.name, p.cmd.Process.Pid)
}

func (r *run) opStartServe() {
	r.serveN++
	p, err := startServe(cgcatBin, r.w.cfgPath, r.w.env, fmt.Sprintf("extra-%d", r.serveN))
	if err != nil {
		r.fail("R27", "serve start", "a second serve on the data dir did not start: %v", err)
		return
	}
	r.extra = append(r.extra, p)
	p.started = r.step
	r.gb.unconverged(p.name)
	r.log("start serve %s (pid %d)", p.name, p.cmd.Process.Pid)
}

func (r *run) opStopServe() {
	i := r.rng.IntN(len(r.extra))
	p := r.extra[i]
	r.extra = slices.Delete(r.extra, i, i+1)
	if r.rng.IntN(2) == 0 {
		p.kill()
		r.log("SIGKILL serve %s", p.name)
		return
	}
	if err := p.stop(); err != nil {
		r.fail("R27", "serve exit", "%v\nstderr:\n%s", err, p.stderr.String())
	}
	r.log("stop serve %s (stdin closed)", p.name)
}

func (r *run) opRestartMain() {
	old := r.main
	if err := old.stop(); err != nil {
		r.fail("R27", "serve exit", "%v\nstderr:\n%s", err, old.stderr.String())
	}
	r.log("stop main serve %s", old.name)
	r.startMain()
}

// opKillScanner starts `cgcat scan` and SIGKILLs it at a random moment:
// right away, a few milliseconds in, or after a few committed slices.
func (r *run) opKillScanner() {
	s, err := startScan(cgcatBin, r.w.env, r.w.cfgPath)
	if err != nil {
		r.t.Fatal(err)
	}
	var when string
	switch r.rng.IntN(3) {
	case 0:
		d := time.Duration(r.rng.IntN(40)) * time.Millisecond
		time.Sleep(d)
		when = fmt.Sprintf("after %s", d)
	default:
		k := 1 + r.rng.IntN(6)
		got := 0
		timeout := time.After(10 * time.Second)
	wait:
		for got < k {
			select {
			case <-s.progress:
				got++
			case <-s.done:
				break wait
			case <-timeout:
				break wait
			}
		}
		d := time.Duration(r.rng.IntN(5)) * time.Millisecond
		time.Sleep(d)
		when = fmt.Sprintf("after %d slices + %s", got, d)
	}
	if s.finished() {
		r.log("scan finished before the kill (%s)", when)
		return
	}
	s.kill()
	r.log("SIGKILL cgcat scan %s", when)
}

// opFreeze SIGSTOPs a process (an extra serve, or a scanner at a random
// moment, maybe inside a store batch) for the rest of the step.
func (r *run) opFreeze() {
	if len(r.extra) > 0 && r.rng.IntN(2) == 0 {
		p := r.extra[r.rng.IntN(len(r.extra))]
		if !p.frozen {
			p.signal(syscall.SIGSTOP)
			p.frozen = true
			r.log("SIGSTOP serve %s", p.name)
		}
		return
	}
	s, err := startScan(cgcatBin, r.w.env, r.w.cfgPath)
	if err != nil {
		r.t.Fatal(err)
	}
	r.scans = append(r.scans, s)
	d := time.Duration(r.rng.IntN(60)) * time.Millisecond
	time.Sleep(d)
	if s.finished() {
		r.log("scan finished before SIGSTOP (after %s)", d)
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGSTOP)
	time.Sleep(2 * time.Millisecond)
	s.frozen = true
	inBatch := slices.Contains(lockHolders(filepath.Join(r.w.data, "catalog.db", "LOCK")), s.cmd.Process.Pid)
	r.log("SIGSTOP cgcat scan after %s (inside a store batch: %v)", d, inBatch)
}

// frozen reports whether some process is stopped right now.
func (r *run) frozen() bool {
	for _, p := range r.extra {
		if p.frozen {
			return true
		}
	}
	for _, s := range r.scans {
		if s.frozen {
			return true
		}
	}
	return false
}

func (r *run) thaw() {
	for _, p := range r.extra {
		if p.frozen {
			p.signal(syscall.SIGCONT)
			p.frozen = false
		}
	}
	for _, s := range r.scans {
		if s.frozen {
			_ = s.cmd.Process.Signal(syscall.SIGCONT)
			s.frozen = false
		}
	}
}

// reapScans forgets background scans that ended; one that crashed (a
// panic) is a violation.
func (r *run) reapScans() {
	var keep []*bgScan
	for _, s := range r.scans {
		if !s.finished() {
			keep = append(keep, s)
			continue
		}
		if out := s.out.String(); strings.Contains(out, "panic:") || strings.Contains(out, "goroutine ") {
			r.fail("R39", "scan panicked", "a background cgcat scan panicked:\n%s", out)
		}
	}
	r.scans = keep
}

func (r *run) opRefresh() {
	switch r.rng.IntN(3) {
	case 0:
		res := r.cli(false, "projects", "--refresh", "--json", "--limit", "50")
		r.log("cgcat projects --refresh (exit %d)", res.code)
		r.checkCLIAnswer(res, false)
	default:
		target := r.main
		if len(r.extra) > 0 && r.rng.IntN(2) == 0 {
			target = r.extra[r.rng.IntN(len(r.extra))]
		}
		if target.frozen {
			target = r.main
		}
		a, err := target.call("local_codegraph_projects", map[string]any{"refresh": true, "limit": 50})
		r.log("refresh: true on serve %s", target.name)
		if err != nil {
			r.fail("R22", "call failed", "%v\nstderr:\n%s", err, target.stderr.String())
			return
		}
		r.checkAnswer(&a, false)
	}
}

// opForget removes one record explicitly (issue 12 item 7).
func (r *run) opForget() {
	// A record this view can see (whether forget may touch records hidden
	// from the caller's view is not specified).
	var bs []*binding
	for _, b := range r.m.bindings() {
		if vis, certain := r.visible(b.root); vis && certain {
			bs = append(bs, b)
		}
	}
	n := r.rng.IntN(1 << 20) // one draw whatever was learnt: the operation sequence stays the seed's
	if len(bs) == 0 {
		r.log("forget: no visible record")
		return
	}
	b := bs[n%len(bs)]
	res := r.cli(false, "forget", b.id)
	r.log("cgcat forget %s (root %s) -> exit %d", b.id, r.rel(b.root), res.code)
	if res.code != 0 {
		r.fail("12.7", "forget failed", "`cgcat forget ID` must remove the record (issue 12 item 7):\n%s", res)
		return
	}
	r.forgotten(b, "forget")
}

func (r *run) forgotten(b *binding, how string) {
	r.m.forgotten[b.id] = how
	delete(r.m.byRoot, b.root)
	delete(r.m.byID, b.id)
	if p := r.m.at(b.root); p != nil {
		p.stableSince = r.step // present again at the next pass, under a new id
	}
}

// opPrune settles (so every record's availability is known), then runs
// `cgcat prune --missing-for 0s`: every missing record goes.
func (r *run) opPrune() {
	r.log("settle before prune")
	r.settle()
	res := r.cli(false, "prune", "--missing-for", "0s")
	r.log("cgcat prune --missing-for 0s -> exit %d", res.code)
	if res.code != 0 {
		r.fail("12.7", "prune failed", "`cgcat prune --missing-for 0s` must remove every missing record (issue 12 item 7):\n%s", res)
		return
	}
	for _, b := range r.m.bindings() {
		// Under a discovery root the settle re-checked the record (the
		// walk covers deny roots too): its marker decides. Outside every
		// discovery root nothing re-checked it: prune goes by the
		// availability the store last recorded, which the model does not
		// know (a marker that came back out there is not seen).
		if hasMarker(b.root) && underAny(r.w.roots(r.c), b.root) {
			continue // present: kept
		}
		if vis, certain := r.visible(b.root); vis && certain {
			r.forgotten(b, "prune")
			continue
		}
		// Hidden from this view or outside the roots: its availability was
		// not re-checked by the settle, so whether it went is not known.
		r.m.uncertain[b.id] = true
		delete(r.m.byRoot, b.root)
		delete(r.m.byID, b.id)
		if p := r.m.at(b.root); p != nil {
			p.stableSince = r.step
		}
	}
}

// ---- GBrain ----------------------------------------------------------------

var fakeTools = []string{"get_page", "put_page", "list_pages", "search", "query", "delete_page", "add_tag", "remove_tag", "get_tags", "whoami", "sources_list", "sources_add"}

func (r *run) setFake(mode string) {
	switch mode {
	case "up":
		r.fake.SetControl(r.t, gbraintest.Control{})
	case "down":
		r.fake.SetControl(r.t, gbraintest.Control{ExitAtStart: "crash", DropBeforeApply: fakeTools})
	case "hung":
		r.fake.SetControl(r.t, gbraintest.Control{DelayMs: 30000, StartDelayMs: 30000})
	}
}

func (r *run) opGBrain() {
	switch r.rng.IntN(5) {
	case 0, 1:
		mode := map[string]string{"up": "down", "down": "up"}[r.gb.mode]
		r.gb.switched()
		r.gb.mode = mode
		r.setFake(mode)
		r.log("fake GBrain %s", mode)
	case 2:
		r.c.gbrain = !r.c.gbrain
		r.gb.switched()
		r.gb.enabled = r.c.gbrain
		r.writeConfig("gbrain.enabled")
	default:
		r.hungBlip()
	}
}

// hungBlip hangs the fake for one query on the main serve and one CLI
// query. GBrain is off the query path (issue 16): both must answer at once
// from the local catalog and its mirror (R32), whatever the last check of
// GBrain said.
func (r *run) hungBlip() {
	if !r.gb.enabled {
		r.log("gbrain hung blip skipped (GBrain disabled)")
		return
	}
	r.setFake("hung")
	back := r.gb.mode
	r.gb.mode = "hung" // expected: degraded, strictly for queries and the CLI
	r.gb.switched()
	r.log("fake GBrain hangs (every call delayed 30 s)")
	word := r.anyWord()
	a, err := r.main.call("local_codegraph_projects", map[string]any{"query": word, "limit": 5})
	if err != nil {
		r.fail("R32", "call failed while GBrain hangs", "%v", err)
	} else {
		a.query = true
		if a.elapsed > recallBudget {
			r.fail("R32", "serve query waits for a hung GBrain", "a query on serve %s took %s while GBrain hangs (GBrain is off the query path)", r.main.name, a.elapsed.Round(time.Millisecond))
		}
		r.checkAnswer(&a, false)
	}
	res := r.cli(false, "projects", word, "--json", "--limit", "5")
	if _, ok := r.decodeCLI(res); !ok {
		r.fail("R32", "cli fails while GBrain hangs", "%s", res)
	} else if res.elapsed > 2*recallBudget {
		r.fail("R32", "cli waits for a hung GBrain", "`cgcat projects QUERY` took %s while GBrain hangs", res.elapsed.Round(time.Millisecond))
	}
	r.gb.mode = back
	r.setFake(r.gb.mode)
	r.gb.hungEnd = time.Now()
	r.gb.switched()
	r.log("fake GBrain %s again", r.gb.mode)
}

func (r *run) anyWord() string {
	ps := r.m.live()
	if len(ps) == 0 {
		return "nothing"
	}
	return ps[r.rng.IntN(len(ps))].word()
}

// ---- bind mounts ----------------------------------------------------------

func unmount(dir string) { _ = exec.Command("umount", "-l", dir).Run() }

// opBindMount makes code/mirrorN an alias of the private deny root (R37:
// deny roots are matched by directory identity too).
func (r *run) opBindMount() {
	dst := r.w.abs(fmt.Sprintf("code/mirror%d", len(r.w.mounts)+1))
	must(r, os.MkdirAll(dst, 0o755))
	if out, err := exec.Command("mount", "--bind", r.w.abs(relPrivate), dst).CombinedOutput(); err != nil {
		r.log("bind mount failed (%v %s); not retried", err, out)
		r.isRoot = false
		return
	}
	r.w.mounts = append(r.w.mounts, dst)
	if !slices.Contains(r.w.everMounted, dst) {
		r.w.everMounted = append(r.w.everMounted, dst)
	}
	r.log("mount --bind %s %s", relPrivate, r.rel(dst))
}

func (r *run) opUnmount() {
	m := r.w.mounts[len(r.w.mounts)-1]
	if out, err := exec.Command("umount", m).CombinedOutput(); err != nil {
		r.log("umount %s failed (%v %s); lazy unmount", r.rel(m), err, out)
		unmount(m)
	}
	r.w.mounts = r.w.mounts[:len(r.w.mounts)-1]
	r.log("umount %s", r.rel(m))
}

func must(r *run, err error) {
	if err != nil {
		r.t.Helper()
		r.t.Fatal(err)
	}
}

// rootWalkKey names one discovery root under one maxDepth: what a root's
// coverage is a claim about.
func rootWalkKey(root string, maxDepth int) string { return fmt.Sprintf("root %q|%d", root, maxDepth) }

func hasKey(m map[string]int, k string) bool { _, ok := m[k]; return ok }
