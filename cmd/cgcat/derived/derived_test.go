package derived

import (
	"strings"
	"testing"
)

// Every kind says where it lives, its version and what happens to a copy
// of other code; computed versions are real hashes, one per kind.
func TestTableIsWhole(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range Table() {
		if k.Name == "" || k.Where == "" || k.Version == "" || k.Other == "" {
			t.Fatalf("incomplete: %+v", k)
		}
		if k.Computed {
			if len(k.Version) != 16 || strings.Trim(k.Version, "0") == "" || seen[k.Version] {
				t.Fatalf("%s: computed version %q", k.Name, k.Version)
			}
			seen[k.Version] = true
		}
	}
	if len(seen) != 3 {
		t.Fatalf("%d computed versions, want metadata, listings and the search index", len(seen))
	}
	if s := Summary(); !strings.Contains(s, "search index") {
		t.Fatalf("summary: %s", s)
	}
}
