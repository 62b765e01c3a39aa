package server

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoLevelDBInTheAnsweringLayer holds the layering of ARCHITECTURE.md:
// answers come from the catalog's published copy, so neither server nor
// server/protocol may link the store (LevelDB) or the refresher that
// writes it. What they need of discovery comes in as interfaces, wired in
// cmd/cgcat (wire.go).
func TestNoLevelDBInTheAnsweringLayer(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".", "./protocol").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		switch {
		case strings.Contains(dep, "goleveldb"),
			strings.HasSuffix(dep, "/local/store"),
			strings.HasSuffix(dep, "/local/refresh"),
			strings.HasSuffix(dep, "/local/scan"):
			t.Errorf("server links %s; the answering layer must not depend on the store or discovery's writers", dep)
		}
	}
}
