package marker

import (
	"fmt"
	"github.com/cgcat/cgcat/local/fixture"
	"path/filepath"
	"testing"

	"github.com/cgcat/cgcat/local/pathid"
)

// recheckRoots makes 50 projects three levels below a discovery root, as
// an answer with limit 50 re-checks them.
func recheckRoots(b *testing.B) (top string, roots []string) {
	top = fixture.Canon(b, b.TempDir())
	for i := range 50 {
		r := filepath.Join(top, fmt.Sprintf("group%d", i%5), "team", fmt.Sprintf("proj%d", i))
		fixture.Project(b, r)
		roots = append(roots, r)
	}
	return top, roots
}

// BenchmarkRecheck50ProbeRoot: the answer-time re-check of 50 roots with
// ProbeRoot (no symlink in any component, root and ancestor identities up
// to the discovery root, marker through the descriptor).
func BenchmarkRecheck50ProbeRoot(b *testing.B) {
	top, roots := recheckRoots(b)
	for b.Loop() {
		for _, r := range roots {
			if c := ProbeRoot(r, top); !c.Project || len(c.Ancestors) != 3 {
				b.Fatalf("%s: %+v", r, c)
			}
		}
	}
}

// BenchmarkRecheck50ProbeCanonical: the re-check as catalog.Recheck does it
// today (Probe, then Canonical to catch a symlinked root), for comparison.
func BenchmarkRecheck50ProbeCanonical(b *testing.B) {
	_, roots := recheckRoots(b)
	for b.Loop() {
		for _, r := range roots {
			if v := Probe(r); !v.Project {
				b.Fatalf("%s: %+v", r, v)
			}
			if c, err := pathid.Canonical(r); err != nil || c != r {
				b.Fatal(c, err)
			}
		}
	}
}
