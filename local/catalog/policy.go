package catalog

import (
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/config"
	"github.com/cgcat/cgcat/local/pathid"
	"github.com/zeebo/xxh3"
)

// Policy is one frontend's sharing view: a project is shown only if its
// canonical root lies under a discovery root and a sharing root and under
// no deny root. Deny wins, and it wins by path under every case folding and
// Unicode form a file system might apply, and by directory identity (device
// and inode), so an alias of a deny root — a bind mount, a junction, a
// symlinked parent — hides what it holds as well. Each process has its own
// Policy; the catalog they share has none.
type Policy struct {
	Discovery []string
	Share     []string
	Deny      []string
	// DenyIDs are the identities (pathid.DirKey) of the deny roots that
	// exist, matched against the identities a record's lineage remembers.
	DenyIDs []string
	// denyLive are their plain file identities, for the live check of a
	// path's ancestors.
	denyLive    []pathid.ID
	ExposePaths bool
}

// PolicyFrom resolves the policy of a config now. Deny roots are resolved
// again from their written spelling: one created since the config was
// loaded, or reached through a symlink that now points elsewhere, is matched
// where it is now as well as where it was. (Discovery and sharing roots stay
// as loaded: widening what is shown is never done behind the user's back.)
func PolicyFrom(c *config.Config) Policy {
	p := Policy{ExposePaths: c.Sharing.ExposeAbsolutePaths}
	p.Discovery = slices.Clone(c.Discovery.Roots)
	p.Share = slices.Clone(c.Sharing.Roots)
	p.Deny = resolveDeny(c)
	for _, d := range p.Deny {
		if id, err := pathid.DirKey(d); err == nil && !slices.Contains(p.DenyIDs, id) {
			p.DenyIDs = append(p.DenyIDs, id)
		}
		if id, err := pathid.FileID(d); err == nil && !id.IsZero() && !slices.Contains(p.denyLive, id) {
			p.denyLive = append(p.denyLive, id)
		}
	}
	slices.Sort(p.DenyIDs)
	return p
}

// resolveDeny returns every spelling the deny roots have now: as written,
// and each resolved again. (Not as resolved when the config was loaded: a
// symlink in a deny root's path that was retargeted or removed since then
// no longer leads there, and every process must hide the same things.) A
// config built in code, without a written spelling, is taken as it is.
func resolveDeny(c *config.Config) []string {
	written := c.Written.Deny
	if len(written) == 0 {
		written = c.Sharing.DenyRoots
	}
	var out []string
	add := func(p string) {
		if p != "" && !slices.ContainsFunc(out, func(o string) bool { return pathid.Same(o, p) }) {
			out = append(out, p)
		}
	}
	for _, w := range written {
		add(w)
		add(resolveNow(w))
	}
	return out
}

// resolveNow canonicalises p, or, when p does not exist yet, its longest
// existing ancestor with the rest appended.
func resolveNow(p string) string {
	if c, err := pathid.Canonical(p); err == nil {
		return c
	}
	rest := []string{}
	for d := p; ; {
		parent := filepath.Dir(d)
		rest = append([]string{filepath.Base(d)}, rest...)
		if parent == d {
			return ""
		}
		if c, err := pathid.Canonical(parent); err == nil {
			return filepath.Join(append([]string{c}, rest...)...)
		}
		d = parent
	}
}

// AllowsPath reports whether a canonical root may be shown, by path alone.
// A record is decided by AllowsRecord, which also weighs identities.
func (p Policy) AllowsPath(root string) bool {
	within := func(roots []string) bool {
		return slices.ContainsFunc(roots, func(r string) bool { return pathid.Within(r, root) })
	}
	denied := slices.ContainsFunc(p.Deny, func(r string) bool { return pathid.MayBeWithin(r, root) })
	return within(p.Discovery) && within(p.Share) && !denied
}

// AllowsRecord reports whether a record may be shown: by path, and by the
// identities of the directories the walk went through to find it.
func (p Policy) AllowsRecord(rec *local.Project) bool {
	if !p.AllowsPath(rec.Root) {
		return false
	}
	for _, id := range rec.Lineage {
		if _, found := slices.BinarySearch(p.DenyIDs, id); found {
			return false
		}
	}
	return true
}

// deniedByIdentity reports whether root, or a directory above it, is a deny
// root under another name right now.
func (p Policy) deniedByIdentity(root string) bool {
	if len(p.denyLive) == 0 {
		return false
	}
	under, err := pathid.UnderAnyID(root, p.denyLive)
	return under || err != nil && !errors.Is(err, fs.ErrNotExist) // cannot tell: hiding is safe, leaking is not
}

// deniesAny reports whether any of ids is a deny root's live identity.
func (p Policy) deniesAny(ids []pathid.ID) bool {
	for _, id := range ids {
		if !id.IsZero() && slices.Contains(p.denyLive, id) {
			return true
		}
	}
	return false
}

// discoveryRootOf is the discovery root that holds root ("" for none).
func (p Policy) discoveryRootOf(root string) string {
	for _, r := range p.Discovery {
		if pathid.Within(r, root) {
			return r
		}
	}
	return ""
}

// Hides reports whether a path (a gap, a project) lies inside a deny root,
// by path or through an alias of one: what is hidden is neither shown nor
// counted against coverage.
func (p Policy) Hides(path string) bool {
	return slices.ContainsFunc(p.Deny, func(r string) bool { return pathid.MayBeWithin(r, path) }) || p.deniedByIdentity(path)
}

// ViewKey fingerprints the view, to bind cursors and cached decisions to it.
func (p Policy) ViewKey() uint64 {
	keys := func(xs []string) string {
		ks := make([]string, len(xs))
		for i, x := range xs {
			ks[i] = pathid.Key(x)
		}
		slices.Sort(ks)
		return strings.Join(ks, "\x00")
	}
	return xxh3.HashString(keys(p.Discovery) + "\x01" + keys(p.Share) + "\x01" + keys(p.Deny) + "\x01" + strings.Join(p.DenyIDs, ",") + "\x01" + map[bool]string{true: "paths", false: "browse"}[p.ExposePaths])
}

// Coverage is discovery's coverage as one configuration sees it: complete
// only when every current discovery root was walked to the end, under the
// current walk settings, by a pass that left no gap outside the deny roots.
// It also returns the gaps this view may see.
func Coverage(st local.ScanState, cfg *config.Config, pol Policy) (local.Coverage, []local.Gap) {
	walk := local.WalkKey(cfg.Discovery.MaxDepth, cfg.Discovery.ExcludeNames, cfg.Discovery.FollowSymlinks)
	cov := local.CoverageComplete
	var gaps []local.Gap
	for _, r := range cfg.Discovery.Roots {
		rc, ok := st.Roots[pathid.Key(r)]
		if !ok || rc.Completed.IsZero() || rc.Walk != walk {
			cov = local.CoveragePartial
			continue
		}
		if rc.GapCount > len(rc.Gaps) {
			cov = local.CoveragePartial // more gaps than are listed: some may be visible
		}
		for _, g := range rc.Gaps {
			if pol.Hides(g.Path) {
				continue // hidden means hidden: not shown, not counted
			}
			cov = local.CoveragePartial
			gaps = append(gaps, g)
		}
	}
	if len(cfg.Discovery.Roots) == 0 {
		cov = local.CoverageNone
	}
	return cov, gaps
}
