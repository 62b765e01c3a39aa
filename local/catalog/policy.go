package catalog

import (
	"slices"
	"strings"

	"github.com/cgcat/cgcat/local/config"
	"github.com/cgcat/cgcat/local/pathid"
	"github.com/zeebo/xxh3"
)

// Policy is one frontend's sharing view (R2, R4): a project is shown only if
// its canonical root lies under a discovery root and a sharing root and under
// no deny root. Deny wins. Each process has its own Policy; the catalog they
// share has none.
type Policy struct {
	Discovery   []string
	Share       []string
	Deny        []string
	ExposePaths bool
}

// PolicyFrom takes the live policy from a config.
func PolicyFrom(c *config.Config) Policy {
	return Policy{
		Discovery:   slices.Clone(c.Discovery.Roots),
		Share:       slices.Clone(c.Sharing.Roots),
		Deny:        slices.Clone(c.Sharing.DenyRoots),
		ExposePaths: c.Sharing.ExposeAbsolutePaths,
	}
}

// Allows reports whether a canonical root may be shown.
func (p Policy) Allows(root string) bool {
	within := func(roots []string) bool {
		return slices.ContainsFunc(roots, func(r string) bool { return pathid.Within(r, root) })
	}
	// Deny roots match under every case folding and Unicode form a file
	// system might apply: hiding too much is safe, leaking is not.
	denied := slices.ContainsFunc(p.Deny, func(r string) bool { return pathid.MayBeWithin(r, root) })
	return within(p.Discovery) && within(p.Share) && !denied
}

// ViewKey fingerprints the view, to bind cursors to it (R20).
func (p Policy) ViewKey() uint64 {
	keys := func(xs []string) string {
		ks := make([]string, len(xs))
		for i, x := range xs {
			ks[i] = pathid.Key(x)
		}
		slices.Sort(ks)
		return strings.Join(ks, "\x00")
	}
	return xxh3.HashString(keys(p.Discovery) + "\x01" + keys(p.Share) + "\x01" + keys(p.Deny) + "\x01" + map[bool]string{true: "paths", false: "browse"}[p.ExposePaths])
}
