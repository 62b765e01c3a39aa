//go:build linux

package catalog

import "github.com/cgcat/cgcat/local/pathid"

// listedSpelling is root as its directories list it, for a root that
// marker.ProbeRoot just opened with no symlink in any component: resolving
// symlinks again (pathid.Canonical) would only repeat an lstat per name.
func listedSpelling(root string) (string, error) { return pathid.OnDiskSpelling(root) }
