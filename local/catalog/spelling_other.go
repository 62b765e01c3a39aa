//go:build !linux

package catalog

import "github.com/cgcat/cgcat/local/pathid"

// listedSpelling is root's canonical path (on macOS that also prefers the
// firmlinked spelling the records use).
func listedSpelling(root, _ string) (string, error) { return pathid.Canonical(root) }
