package catalog

import (
	"path/filepath"
	"slices"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/config"
	"github.com/cgcat/cgcat/local/marker"
	"github.com/cgcat/cgcat/local/pathid"
)

// UnsharedRoots are the discovery roots no sharing root covers, in whole
// or in part: their projects are found and never shown (`config init`
// writes sharing.roots out, so a root added to discovery.roots by hand
// is easily left so). Scan, doctor and config check name them.
func UnsharedRoots(cfg *config.Config) []string {
	var out []string
	for _, r := range cfg.Discovery.Roots {
		if !slices.ContainsFunc(cfg.Sharing.Roots, func(s string) bool { return pathid.Within(s, r) || pathid.Within(r, s) }) {
			out = append(out, r)
		}
	}
	return out
}

// VisibleRejected is the rejected index files (ScanState.Rejected) whose
// folder this view may show: one in a deny root, or outside the sharing
// roots, is not named.
func VisibleRejected(st local.ScanState, pol Policy) []local.Gap {
	var out []local.Gap
	for _, g := range st.Rejected {
		dir := filepath.Dir(filepath.Dir(g.Path))
		if filepath.Base(filepath.Dir(g.Path)) != marker.Dir || pol.Hides(dir) || !pol.AllowsRecord(&local.Project{Root: dir}) {
			continue
		}
		out = append(out, g)
	}
	return out
}
