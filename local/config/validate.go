package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/cgcat/cgcat/local/pathid"
)

func (c *Config) validate() error {
	fail := func(field, format string, a ...any) error {
		return &Error{Field: field, Problem: fmt.Sprintf(format, a...)}
	}
	if c.Version != 1 {
		return fail("version", "must be 1 (this cgcat understands config version 1), got %d", c.Version)
	}
	if c.DataDir == "" {
		return fail("dataDir", "is required: an absolute directory where cgcat keeps its catalog (e.g. %s)", DefaultDataDir())
	}
	dd, err := checkPath("dataDir", c.DataDir)
	if err != nil {
		return err
	}
	c.DataDir = dd
	d := &c.Discovery
	for _, n := range []struct {
		field    string
		v        int
		min, max int
	}{
		{"discovery.refreshIntervalSeconds", d.RefreshIntervalSeconds, 5, 7 * 24 * 3600},
		{"discovery.maxDepth", d.MaxDepth, 0, 64},
		{"discovery.maxDirectoriesPerSlice", d.MaxDirectoriesPerSlice, 1, 1_000_000},
		{"discovery.maxSliceMs", d.MaxSliceMs, 1, 600_000},
		{"discovery.maxDirectoriesPerRound", d.MaxDirectoriesPerRound, 1, 100_000_000},
		{"discovery.maxRoundMs", d.MaxRoundMs, 1, 24 * 3600 * 1000},
		{"discovery.retainMissingDays", d.RetainMissingDays, 0, 36500},
		{"gbrain.recallBudgetMs", c.GBrain.RecallBudgetMs, 1, 60_000},
		{"gbrain.keepAliveSeconds", c.GBrain.KeepAliveSeconds, 0, 3600},
		{"gbrain.checkSeconds", c.GBrain.CheckSeconds, 2, 3600},
		{"gbrain.staleMachineDays", c.GBrain.StaleMachineDays, 0, 36500},
	} {
		if n.v < n.min || n.v > n.max {
			return fail(n.field, "must be between %d and %d, got %d", n.min, n.max, n.v)
		}
	}
	if d.MaxDirectoriesPerRound < d.MaxDirectoriesPerSlice {
		return fail("discovery.maxDirectoriesPerRound", "must be at least discovery.maxDirectoriesPerSlice (%d), got %d", d.MaxDirectoriesPerSlice, d.MaxDirectoriesPerRound)
	}
	for i, n := range d.ExcludeNames {
		if n == "" || strings.ContainsAny(n, `/\`) || n == "." || n == ".." {
			return fail(fmt.Sprintf("discovery.excludeNames[%d]", i), "must be a plain directory name (no separators), got %q", n)
		}
	}
	c.Written = WrittenRoots{Discovery: cleaned(d.Roots), Share: cleaned(c.Sharing.Roots), Deny: cleaned(c.Sharing.DenyRoots)}
	if d.Roots, err = checkPaths("discovery.roots", d.Roots, c); err != nil {
		return err
	}
	s := &c.Sharing
	if s.Roots, err = checkPaths("sharing.roots", s.Roots, c); err != nil {
		return err
	}
	if len(s.Roots) == 0 {
		s.Roots = slices.Clone(d.Roots)
		c.Written.Share = slices.Clone(c.Written.Discovery)
	}
	if s.DenyRoots, err = checkPaths("sharing.denyRoots", s.DenyRoots, c); err != nil {
		return err
	}
	for i, deny := range s.DenyRoots {
		inside := false
		for _, r := range s.Roots {
			if pathid.Within(r, deny) || pathid.Within(deny, r) {
				inside = true
			}
		}
		if !inside && len(s.Roots) > 0 {
			c.Warnings = append(c.Warnings, fmt.Sprintf("sharing.denyRoots[%d]: %s is outside every sharing root, so it hides nothing", i, deny))
		}
	}
	m := c.Metadata
	if m.Mode != ModeManifestsAndReadme {
		return fail("metadata.mode", "must be %q, got %q", ModeManifestsAndReadme, m.Mode)
	}
	if m.MaxBytesPerFile < 256 || m.MaxBytesPerFile > 16<<20 {
		return fail("metadata.maxBytesPerFile", "must be between 256 and %d, got %d", 16<<20, m.MaxBytesPerFile)
	}
	if m.MaxBytesPerProject < m.MaxBytesPerFile || m.MaxBytesPerProject > 64<<20 {
		return fail("metadata.maxBytesPerProject", "must be between metadata.maxBytesPerFile (%d) and %d, got %d", m.MaxBytesPerFile, 64<<20, m.MaxBytesPerProject)
	}
	return c.validateGBrain()
}

func (c *Config) validateGBrain() error {
	fail := func(field, format string, a ...any) error {
		return &Error{Field: field, Problem: fmt.Sprintf(format, a...)}
	}
	g := c.GBrain
	if g.Projection != ProjectionReference && g.Projection != ProjectionLocalPaths {
		return fail("gbrain.projection", "must be %q or %q, got %q", ProjectionReference, ProjectionLocalPaths, g.Projection)
	}
	if !validSlugPrefix(g.SlugPrefix) {
		return fail("gbrain.slugPrefix", "must be lowercase segments of a-z, 0-9, '-' or '_' separated by '/', got %q", g.SlugPrefix)
	}
	if !validSourceID(g.ExpectedSource) {
		return fail("gbrain.expectedSource", "must match [a-z0-9-]{1,32} (GBrain silently ignores other source ids and writes to \"default\"), got %q", g.ExpectedSource)
	}
	names := make([]string, 0, len(c.Connections))
	for n := range c.Connections {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		conn := c.Connections[n]
		field := "connections." + n
		switch {
		case conn.Command != "" && conn.URL != "":
			return fail(field, "has both command and url; a connection is either a stdio command or an HTTP url")
		case conn.Command == "" && conn.URL == "":
			return fail(field, "needs command (a stdio MCP server) or url (an HTTP MCP endpoint)")
		case conn.Command != "":
			p, err := checkPath(field+".command", conn.Command)
			if err != nil {
				return err
			}
			conn.Command = p
			if conn.Cwd != "" {
				if conn.Cwd, err = checkPath(field+".cwd", conn.Cwd); err != nil {
					return err
				}
			}
		default:
			if !strings.HasPrefix(conn.URL, "http://") && !strings.HasPrefix(conn.URL, "https://") {
				return fail(field+".url", "must start with http:// or https://, got %q", conn.URL)
			}
		}
		if err := checkConnectionAuth(field, conn); err != nil {
			return err
		}
		c.Connections[n] = conn
	}
	if g.Enabled {
		if g.ConnectionRef == "" {
			return fail("gbrain.connectionRef", "is required when gbrain.enabled is true: name an entry of the top-level \"connections\" map")
		}
		if _, ok := c.Connections[g.ConnectionRef]; !ok {
			return fail("gbrain.connectionRef", "names %q, which is not in the top-level \"connections\" map (have: %s)", g.ConnectionRef, strings.Join(names, ", "))
		}
	}
	return nil
}

func validSourceID(s string) bool {
	if len(s) < 1 || len(s) > 32 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}

func validSlugPrefix(s string) bool {
	if s == "" {
		return false
	}
	for _, seg := range strings.Split(s, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
		for _, r := range seg {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return false
			}
		}
	}
	return true
}

// checkPath enforces R1's path rules and returns the canonical form when the
// path exists (its cleaned form otherwise).
func checkPath(field, p string) (string, error) {
	bad := func(problem string) error {
		return &Error{Field: field, Problem: fmt.Sprintf("%q %s", p, problem)}
	}
	switch {
	case p == "":
		return "", bad("is empty; write an absolute path")
	case strings.HasPrefix(p, "~"):
		return "", bad("starts with ~; write the absolute path (cgcat does not expand ~)")
	case strings.Contains(p, "$") || strings.Contains(p, "%"):
		return "", bad("contains a variable; write the absolute path (cgcat does not expand $VARS or %VARS%)")
	case strings.Contains(strings.ToLower(p), "://"):
		return "", bad("is a URI; write a plain absolute path, not file://")
	case strings.ContainsRune(p, 0) || strings.ContainsAny(p, "\r\n"):
		return "", bad("contains control characters")
	case !filepath.IsAbs(p):
		return "", bad("is relative; write an absolute path")
	}
	if c, err := pathid.Canonical(p); err == nil {
		return c, nil
	}
	return filepath.Clean(p), nil
}

func cleaned(ps []string) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		if filepath.IsAbs(p) {
			out = append(out, filepath.Clean(p))
		}
	}
	return out
}

func checkPaths(field string, ps []string, c *Config) ([]string, error) {
	out := make([]string, 0, len(ps))
	for i, p := range ps {
		f := fmt.Sprintf("%s[%d]", field, i)
		cp, err := checkPath(f, p)
		if err != nil {
			return nil, err
		}
		if field != "sharing.denyRoots" {
			if pathid.IsFSRoot(cp) {
				return nil, &Error{Field: f, Problem: fmt.Sprintf("%q is the file-system root; name the directories that hold your code", p)}
			}
			if pathid.IsHome(cp) {
				c.Warnings = append(c.Warnings, fmt.Sprintf("%s: %s is your whole home directory; scanning it is slow — consider naming the folders that hold code", f, cp))
			}
			if st, err := os.Stat(cp); err != nil {
				c.Warnings = append(c.Warnings, fmt.Sprintf("%s: %s is not reachable right now (%v); it is skipped until it is", f, cp, errors.Unwrap(err)))
			} else if !st.IsDir() {
				return nil, &Error{Field: f, Problem: fmt.Sprintf("%q is not a directory", p)}
			}
		}
		if !slices.ContainsFunc(out, func(o string) bool { return pathid.Same(o, cp) }) {
			out = append(out, cp)
		}
	}
	return out, nil
}
