package doctor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/catalog"
	"github.com/cgcat/cgcat/local/config"
	"github.com/cgcat/cgcat/local/lease"
	"github.com/cgcat/cgcat/local/pathid"
	"github.com/cgcat/cgcat/local/refresh"
	"github.com/cgcat/cgcat/local/scan"
	"github.com/cgcat/cgcat/local/store"
	"github.com/cgcat/cgcat/projection"
)

// p is how every name or path is shown in a check.
func p(s string) string { return local.Printable(s) }

// ConfigInput is the config as the command loaded it.
type ConfigInput struct {
	Config *config.Config
	Err    error // from loading; Config is nil then
	AdHoc  bool  // made from --root flags
	// Asked is the config path asked for (--config, else the default), for
	// "no config file at".
	Asked string
}

// Config checks the config: valid, its warnings, discovery roots,
// exposeAbsolutePaths.
func Config(in ConfigInput) []Check {
	cfg, err := in.Config, in.Err
	if err != nil {
		return []Check{Failf("fix the field named above (`cgcat config check` shows the result); every host entry that uses this config fails to start until then", "config is not valid: %s", p(err.Error()))}
	}
	var cs []Check
	switch {
	case in.AdHoc:
		cs = append(cs, Infof("ad-hoc config from --root (hosts need a config file: cgcat config init --root DIR)"))
	case cfg.Path == "":
		cs = append(cs, Failf("cgcat config init --root DIR (the folders that hold your code)", "no config file at %s: without one every tool answers setup_required", p(in.Asked)))
	default:
		cs = append(cs, Okf("config %s is valid", p(cfg.Path)))
	}
	for _, w := range cfg.Warnings {
		if cfg.Path == "" && strings.HasPrefix(w, "no config file at") {
			continue // reported above
		}
		if strings.Contains(w, "roots[") && strings.Contains(w, "not reachable right now") {
			continue // the roots section reports it as a problem
		}
		cs = append(cs, Warnf("", "warning: %s", p(w)))
	}
	if cfg.Path != "" && !cfg.HasRoots() {
		cs = append(cs, Failf(fmt.Sprintf("add the folders that hold your code to discovery.roots in %s", p(cfg.Path)), "no discovery roots: every tool answers setup_required and nothing is scanned"))
	}
	if !cfg.Sharing.ExposeAbsolutePaths {
		cs = append(cs, Warnf("set sharing.exposeAbsolutePaths to true if agents should query the projects", "sharing.exposeAbsolutePaths is false: browse-only, agents get no projectPath to pass to codegraph_explore"))
	}
	return cs
}

// Roots checks that every discovery and sharing root is a readable
// directory, and that discovery roots are shared.
func Roots(cfg *config.Config) []Check {
	var cs []Check
	where := "the config"
	if cfg.Path != "" {
		where = p(cfg.Path)
	}
	checkDir := func(kind, field, raw string) {
		dir := p(raw)
		fi, err := os.Stat(raw)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			cs = append(cs, Failf(fmt.Sprintf("create it or mount its volume, or remove it from %s in %s", field, where), "%s %s does not exist", kind, dir))
			return
		case err != nil:
			cs = append(cs, Failf(fmt.Sprintf("make it reachable by this user, or remove it from %s in %s", field, where), "%s %s cannot be checked: %v", kind, dir, errors.Unwrap(err)))
			return
		case !fi.IsDir():
			cs = append(cs, Failf(fmt.Sprintf("name a directory in %s in %s", field, where), "%s %s is not a directory", kind, dir))
			return
		}
		f, err := os.Open(raw)
		if err == nil {
			_, err = f.Readdirnames(1)
			f.Close()
			if errors.Is(err, io.EOF) {
				err = nil
			}
		}
		if err != nil {
			cs = append(cs, Failf(fmt.Sprintf("give this user read and search permission (chmod u+rx %s)", dir), "%s %s is not readable: %v", kind, dir, err))
			return
		}
		cs = append(cs, Okf("%s %s is a readable directory", kind, dir))
	}
	for _, r := range cfg.Discovery.Roots {
		checkDir("discovery root", "discovery.roots", r)
		shared := slices.ContainsFunc(cfg.Sharing.Roots, func(s string) bool { return pathid.Within(s, r) || pathid.Within(r, s) })
		if !shared {
			cs = append(cs, Warnf(fmt.Sprintf("add it (or a parent) to sharing.roots in %s, or remove it from discovery.roots", where), "discovery root %s is under no sharing root: its projects are found but never shown", p(r)))
		}
	}
	for _, s := range cfg.Sharing.Roots {
		if slices.ContainsFunc(cfg.Discovery.Roots, func(d string) bool { return pathid.Same(d, s) }) {
			continue
		}
		checkDir("sharing root", "sharing.roots", s)
	}
	return cs
}

// DataDir checks that the data dir is (or can be made) a writable
// directory, without creating it. usable says whether the store can be
// looked at.
func DataDir(raw string) (cs []Check, usable bool) {
	dd := p(raw)
	fi, err := os.Stat(raw)
	switch {
	case err == nil && !fi.IsDir():
		return []Check{Failf("point dataDir at a directory", "data dir %s is not a directory", dd)}, false
	case err == nil:
		if err := probeWritable(raw); err != nil {
			return []Check{Failf(fmt.Sprintf("make it writable by this user (chmod u+w %s) or point dataDir elsewhere", dd), "data dir %s is not writable: %v", dd, err)}, false
		}
		return append([]Check{Okf("data dir %s is writable", dd)}, freeSpace(raw)...), true
	case !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
		return []Check{Failf("make it reachable by this user or point dataDir elsewhere", "data dir %s cannot be checked: %v", dd, err)}, false
	}
	// Missing: find the nearest existing ancestor; cgcat creates the rest.
	parent := filepath.Dir(raw)
	for {
		pfi, err := os.Stat(parent)
		if err == nil {
			if !pfi.IsDir() {
				return []Check{Failf("point dataDir at a place where a directory can be created", "data dir %s cannot be created: %s is not a directory", dd, p(parent))}, false
			}
			if err := probeWritable(parent); err != nil {
				return []Check{Failf(fmt.Sprintf("create %s yourself with write permission for this user, or point dataDir elsewhere", dd), "data dir %s does not exist and cannot be created: %s is not writable (%v)", dd, p(parent), err)}, false
			}
			return append([]Check{Okf("data dir %s does not exist yet; cgcat creates it on first use (%s is writable)", dd, p(parent))}, freeSpace(parent)...), true
		}
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return []Check{Failf("make it reachable by this user or point dataDir elsewhere", "data dir %s cannot be checked: %v", dd, err)}, false
		}
		next := filepath.Dir(parent)
		if next == parent {
			return []Check{Failf("point dataDir at an existing volume", "data dir %s cannot be created: no part of it exists", dd)}, false
		}
		parent = next
	}
}

func probeWritable(dir string) error {
	f, err := os.CreateTemp(dir, ".cgcat-doctor-*")
	if err != nil {
		return errors.Unwrap(err)
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// Store checks that the catalog store opens and reports what it holds: the
// records by availability, coverage under this config (gaps listed, limits
// named), projects whose hint file did not parse, the process holding the
// store if one does, and free space on its disk.
func Store(ctx context.Context, cfg *config.Config) []Check {
	dbDir := store.DBDir(cfg.DataDir)
	if _, err := os.Stat(dbDir); errors.Is(err, fs.ErrNotExist) {
		return []Check{Warnf("cgcat scan (or start a host: its cgcat serve scans in the background)", "no catalog yet in %s", p(cfg.DataDir))}
	}
	st, err := store.Open(ctx, cfg.DataDir)
	if err != nil {
		return lockHolderCheck(dbDir, err)
	}
	cs := storeHealth(st, dbDir)
	sum, err := readStoreSummary(ctx, st)
	if err != nil {
		if st.Holder().PID == 0 {
			return append(cs, lockHolderCheck(dbDir, err)...)
		}
		return append(cs, storeFailure(dbDir, err))
	}
	cs = append(cs, Okf("catalog store %s opens (format %d, machine %s, catalog revision %d)", p(dbDir), sum.format, p(st.MachineID()), sum.revision))
	cs = append(cs, projectChecks(cfg, sum)...)
	if sum.stateErr != nil {
		return append(cs, Failf("cgcat scan (it rebuilds the scan state)", "scan state is unreadable: %s", p(sum.stateErr.Error())))
	}
	return append(cs, scanChecks(cfg, sum.state)...)
}

// storeHealth names the process writing the store (a warning when it has
// held it long or is stopped) and damage the store has recorded.
func storeHealth(st *store.Store, dbDir string) []Check {
	var cs []Check
	if h := st.Holder(); h.PID > 0 {
		c := Infof("process %d is writing the catalog store now (since %s)", h.PID, h.Since.Local().Format(time.RFC3339))
		if h.Stopped || time.Since(h.Since) > lease.StaleAfter {
			c = Warnf(fmt.Sprintf("resume it (`kill -CONT %d`) or end it: until then nothing can be written (answers keep coming from the published catalog)", h.PID),
				"process %d has held the catalog store for %s%s", h.PID, time.Since(h.Since).Round(time.Second), map[bool]string{true: " and is stopped", false: ""}[h.Stopped])
		}
		cs = append(cs, c)
	}
	if d := st.Damage(); d != nil {
		cs = append(cs, Failf("cgcat store recover (records keep their ids)", "catalog store %s is damaged: %s; answers come from the last published catalog", p(dbDir), p(d.Error())))
	}
	return cs
}

// storeSummary is what doctor reads of the store in one view.
type storeSummary struct {
	format   int
	revision uint64
	counts   map[local.Availability]int
	total    int
	state    local.ScanState
	stateErr error
	hints    []string // hint files that did not parse: "root: problem"
}

func readStoreSummary(ctx context.Context, st *store.Store) (storeSummary, error) {
	sum := storeSummary{counts: map[local.Availability]int{}}
	err := st.View(ctx, func(rd *store.Reader) error {
		sum.format, sum.revision = rd.Format(), rd.Revision()
		if err := rd.Projects(func(pr *local.Project) error {
			sum.counts[pr.Availability]++
			sum.total++
			for _, prob := range pr.Meta.Problems {
				if strings.Contains(prob, "codegraph/project.json") {
					sum.hints = append(sum.hints, fmt.Sprintf("%s: %s", p(pr.Root), p(prob)))
				}
			}
			return nil
		}); err != nil {
			return err
		}
		sum.state, sum.stateErr = rd.ScanState()
		return nil
	})
	return sum, err
}

// projectChecks count the records by availability and list the hint files
// that did not parse.
func projectChecks(cfg *config.Config, sum storeSummary) []Check {
	var cs []Check
	var parts []string
	for _, a := range []local.Availability{local.Present, local.Missing, local.Inaccessible, local.Unknown} {
		if sum.counts[a] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", sum.counts[a], a))
		}
	}
	if sum.total == 0 {
		cs = append(cs, Infof("0 projects in the catalog (a project is a directory whose own .codegraph/ holds codegraph.db)"))
	} else {
		c := Okf("%d project(s) in the catalog: %s", sum.total, strings.Join(parts, ", "))
		if sum.counts[local.Missing]+sum.counts[local.Inaccessible] > 0 {
			c.Notes = append(c.Notes, fmt.Sprintf("missing and inaccessible records are kept; missing ones leave listings after %d days (discovery.retainMissingDays); `cgcat prune` removes them now", cfg.Discovery.RetainMissingDays))
		}
		cs = append(cs, c)
	}
	if len(sum.hints) > 0 {
		c := Warnf("fix each file (README: \"The hint file\"): a file that does not parse is ignored until then, an unknown key is ignored", "%d problem(s) in project hint files", len(sum.hints))
		c.Notes = append(c.Notes, sum.hints[:min(len(sum.hints), 10)]...)
		cs = append(cs, c)
	}
	return cs
}

// scanChecks say where scanning stands: an unfinished pass, the roots
// followed and rejected, and the last finished pass with its coverage.
func scanChecks(cfg *config.Config, state local.ScanState) []Check {
	var cs []Check
	if state.PassRunning {
		how := "the next `cgcat scan` or a host's cgcat serve resumes it"
		if _, ok := lease.Active(scan.LeasePath(cfg.DataDir)); ok {
			how = "a process is scanning now"
		}
		cs = append(cs, Infof("scan pass %d unfinished (%s): %d directories read, %d projects seen, %d directories queued", state.Pass, how, state.PassDirs, state.PassProjects, state.Queued))
	}
	cs = append(cs, Following(cfg)...)
	cs = append(cs, Rejected(state)...)
	if state.LastCompleted.IsZero() {
		return append(cs, Warnf("cgcat scan", "no scan pass has finished yet"))
	}
	return append(cs, coverageCheck(cfg, state))
}

// coverageCheck is the last finished pass and what it left uncovered under
// this config (the first five gaps named).
func coverageCheck(cfg *config.Config, state local.ScanState) Check {
	ago := time.Since(state.LastCompleted).Round(time.Second)
	when := state.LastCompleted.Local().Format(time.RFC3339)
	cov, gaps := catalog.Coverage(state, cfg, catalog.PolicyFrom(cfg))
	if cov == local.CoverageComplete {
		return Okf("last scan pass finished %s (%s ago), coverage complete", when, ago)
	}
	c := Warnf("places that could not be read stay gaps until fixed (permissions, offline volumes); a depth limit is lifted by raising discovery.maxDepth; roots added since the last pass are covered by the next one",
		"last scan pass finished %s (%s ago), coverage %s for this config: %d place(s) not covered", when, ago, cov, len(gaps))
	for i, gp := range gaps {
		if i == 5 {
			c.Notes = append(c.Notes, fmt.Sprintf("… and %d more (`cgcat scan --json` lists them)", len(gaps)-5))
			break
		}
		c.Notes = append(c.Notes, fmt.Sprintf("not covered: %s (%s)", p(gp.Path), p(gp.Why)))
	}
	return c
}

// lockHolderCheck is the failure to read the store, preceded, when the
// store is busy, by the process that holds its lock (named even when the
// store has not recorded it as its writer).
func lockHolderCheck(dbDir string, err error) []Check {
	var cs []Check
	if errors.Is(err, store.ErrBusy) {
		if pid := lockHolder(filepath.Join(dbDir, "LOCK")); pid > 0 && pid != os.Getpid() {
			if _, stopped := lease.Process(pid); stopped {
				cs = append(cs, Warnf(fmt.Sprintf("resume it (`kill -CONT %d`) or end it: until then nothing can be written (answers keep coming from the published catalog)", pid),
					"process %d holds the catalog store's lock and is stopped", pid))
			} else {
				cs = append(cs, Infof("process %d holds the catalog store's lock now", pid))
			}
		}
	}
	return append(cs, storeFailure(dbDir, err))
}

func storeFailure(dbDir string, err error) Check {
	fix := "see the message; `cgcat store recover` rebuilds a damaged store"
	var ce *store.CorruptError
	switch {
	case errors.As(err, &ce):
		fix = "cgcat store recover (records keep their ids)"
	case errors.Is(err, store.ErrNewerFormat):
		fix = "upgrade this cgcat, or point dataDir elsewhere"
	case errors.Is(err, store.ErrBusy):
		fix = "another cgcat process kept the store locked; see the process named above"
	}
	return Failf(fix, "catalog store %s cannot be read: %s", p(dbDir), p(err.Error()))
}

// lowSpace is the free space under which a data dir's disk is worth a word:
// a scan slice or a new base of a large catalog needs a few megabytes.
const lowSpace = 64 << 20

// Leases says who holds the scan and projector leases.
func Leases(dd string) []Check {
	var cs []Check
	for i, path := range []string{scan.LeasePath(dd), projection.LeasePath(dd), refresh.WatchLeasePath(dd)} {
		name := p(filepath.Base(path))
		if _, err := os.Stat(path); err != nil {
			if i == 0 {
				cs = append(cs, Infof("%s: never taken yet", name))
			}
			continue
		}
		held, pid := lease.Holder(path)
		_, stopped := lease.Process(pid)
		switch {
		case held && pid > 0 && stopped:
			cs = append(cs, Warnf(fmt.Sprintf("resume it (`kill -CONT %d`) or end it; another process takes the lease over after %s", pid, lease.StaleAfter), "%s: held by pid %d, which is stopped", name, pid))
		case held && pid > 0:
			cs = append(cs, Infof("%s: held by pid %d (that process is the single writer; it passes to another process when it exits)", name, pid))
		case held:
			cs = append(cs, Infof("%s: held by another process", name))
		default:
			cs = append(cs, Okf("%s: free (the next cgcat serve or scan takes it)", name))
		}
	}
	return cs
}
