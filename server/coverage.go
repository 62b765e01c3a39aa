package server

import (
	"fmt"
	"strings"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/catalog"
	"github.com/cgcat/cgcat/local/pathid"
)

// Coverage never claims more than was seen (R36, R42): complete holds only
// when the last pass walked every root to the end and nothing may have
// happened since that no process applied (a live watcher, nothing pending;
// or a refresh this very call made). A partial answer says which limit is
// in force and what to do next.

// coverage is the coverage of this answer and, when partial, why.
func (f *Frontend) coverage(c *call, st local.ScanState) (local.Coverage, string) {
	cov, gaps := catalog.Coverage(st, c.cfg, c.pol)
	if cov != local.CoverageComplete {
		if cov == local.CoverageNone {
			return cov, ""
		}
		return cov, f.gapWords(c, st, gaps)
	}
	if c.refreshed {
		return cov, "" // this call walked everything itself
	}
	if ok, why := f.opt.Processes.Follows(c.cfg); !ok {
		return local.CoveragePartial, "Coverage is partial: " + why + ". " + f.refreshStep()
	}
	return cov, ""
}

// quietCoverage reports whether a listing may leave the coverage note out:
// a person's CLI run whose answer has hits, where the only limit is that no
// process follows the disk. The person runs cgcat, not a host, so that is
// the usual case and a note on every run would be noise; the envelope still
// says partial, and a miss (which the CLI looks again for) says why.
func (f *Frontend) quietCoverage(c *call, hits int) bool {
	if f.opt.Face != FaceCLI || hits == 0 {
		return false
	}
	cov, _ := catalog.Coverage(c.cat.State(), c.cfg, c.pol)
	return cov == local.CoverageComplete
}

// refreshStep is the next step when changes may be missing: ask for a
// refresh.
func (f *Frontend) refreshStep() string {
	if f.opt.Face == FaceCLI {
		return "Run `cgcat scan` (or `cgcat projects --refresh`) to look at every root now."
	}
	return "Call local_codegraph_projects again with refresh: true to look at every root now."
}

// gapWords names what discovery did not cover, by kind, with the setting
// or the step that covers it.
func (f *Frontend) gapWords(c *call, st local.ScanState, gaps []local.Gap) string {
	var parts []string
	walk := local.WalkKey(c.cfg.Discovery.MaxDepth, c.cfg.Discovery.ExcludeNames, c.cfg.Discovery.FollowSymlinks)
	unwalked := 0
	for _, r := range c.cfg.Discovery.Roots {
		if rc, ok := st.Roots[pathid.Key(r)]; !ok || rc.Completed.IsZero() || rc.Walk != walk {
			unwalked++
		}
	}
	if unwalked > 0 {
		w := fmt.Sprintf("discovery has not yet walked %d of the %d configured root(s) to the end under the settings in force", unwalked, len(c.cfg.Discovery.Roots))
		if t := st.LastRound.Truncated; st.PassRunning && (t == "maxDirectoriesPerRound" || t == "maxRoundMs") {
			w += fmt.Sprintf(" (its last round stopped at discovery.%s; the pass goes on at the next refresh)", t)
		}
		parts = append(parts, w)
	}
	count := map[local.GapKind]int{}
	example := map[local.GapKind]string{}
	for _, g := range gaps {
		count[g.Kind]++
		if example[g.Kind] == "" {
			example[g.Kind] = local.Printable(g.Path)
		}
	}
	if n := count[local.GapDepth]; n > 0 {
		parts = append(parts, fmt.Sprintf("discovery.maxDepth %d left folders below %d place(s) unsearched (e.g. %s); raise discovery.maxDepth to include them", c.cfg.Discovery.MaxDepth, n, example[local.GapDepth]))
	}
	if n := count[local.GapOffline]; n > 0 {
		parts = append(parts, fmt.Sprintf("%d discovery root(s) are not reachable (e.g. %s: an offline volume?)", n, example[local.GapOffline]))
	}
	if n := count[local.GapUnreadable]; n > 0 {
		parts = append(parts, fmt.Sprintf("%d folder(s) could not be read (e.g. %s)", n, example[local.GapUnreadable]))
	}
	if n := count[local.GapName]; n > 0 {
		parts = append(parts, fmt.Sprintf("%d folder name(s) are not valid UTF-8 and were skipped (e.g. %s)", n, example[local.GapName]))
	}
	if len(parts) == 0 {
		parts = append(parts, "some places were not covered by the last pass")
	}
	return "Coverage is partial: " + strings.Join(parts, "; ") + ". " + f.refreshStep()
}
