//go:build linux

package catalog

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/config"
	"github.com/cgcat/cgcat/local/fixture"
)

// A deny root mounted over a directory on the way to a root after the
// record was made (its lineage says nothing of it) is seen by the
// re-check's descent: the root is hidden, not handed out. Root only.
func TestRecheckSeesDenyRootMountedOnTheWay(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mount --bind needs root")
	}
	top := fixture.TempDir(t)
	deny := filepath.Join(top, "private")
	fixture.Project(t, filepath.Join(deny, "x"))
	mirror := filepath.Join(top, "mirror")
	fixture.Project(t, filepath.Join(mirror, "x"))
	cfg := config.Default()
	cfg.Discovery.Roots, cfg.Sharing.Roots, cfg.Sharing.DenyRoots = []string{top}, []string{top}, []string{deny}
	pol := PolicyFrom(&cfg)
	p := &local.Project{ID: "cg_a", Root: filepath.Join(mirror, "x")}
	if ck := Recheck(p, pol); !ck.OK {
		t.Fatalf("before the mount: %+v", ck)
	}
	if out, err := exec.Command("mount", "--bind", deny, mirror).CombinedOutput(); err != nil {
		t.Skipf("mount --bind is not permitted here (%v: %s)", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", mirror).Run() })
	recheckCache.Lock()
	recheckCache.m = nil
	recheckCache.Unlock()
	if ck := Recheck(p, pol); ck.OK || ck.Allowed {
		t.Fatalf("%s is now the deny root %s mounted on the way; the re-check hands it out: %+v", p.Root, deny, ck)
	}
}
