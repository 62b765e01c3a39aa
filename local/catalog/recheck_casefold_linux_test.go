//go:build linux

package catalog

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/fixture"
	"github.com/cgcat/cgcat/local/pathid"
)

// On a directory that ignores case, a root spelled otherwise than its
// directories list it (what a case-only rename leaves a record with) still
// opens: the re-check must see that the recorded path is not the
// directory's name, while the listed spelling passes. Each is checked
// twice, so the second answer comes from what the first one learnt about
// the directories.
func TestRecheckSpellingOnCaseInsensitiveDir(t *testing.T) {
	d := fixture.CaseInsensitiveDir(t)
	fixture.Project(t, filepath.Join(d, "Code", "app"))
	// The listed spelling (lowntfs-3g lists every name in lower case).
	listed, err := pathid.Canonical(filepath.Join(d, "Code", "app"))
	if err != nil {
		t.Fatal(err)
	}
	rel, _ := filepath.Rel(d, listed)
	other := filepath.Join(d, swapCase(rel))
	pol := Policy{Discovery: []string{d}, Share: []string{d}}
	check := func(root string) Check {
		recheckCache.Lock()
		recheckCache.m = nil
		recheckCache.Unlock()
		return Recheck(&local.Project{ID: "cg_a", Root: root}, pol)
	}
	for i := range 2 {
		if ck := check(listed); !ck.OK {
			t.Fatalf("check %d: the listed spelling %s fails: %+v", i, listed, ck)
		}
		if ck := check(other); ck.OK || ck.Availability != local.Missing {
			t.Fatalf("check %d: %s (listed as %s) passes: %+v", i, other, listed, ck)
		}
	}
}

func swapCase(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case 'a' <= r && r <= 'z':
			return r - 'a' + 'A'
		case 'A' <= r && r <= 'Z':
			return r - 'A' + 'a'
		}
		return r
	}, s)
}

// A discovery root whose own spelling went stale (an ancestor renamed in
// case only after the config was loaded) does not lend its spelling to the
// roots below it: the re-check spells the whole path then.
func TestRecheckStaleDiscoveryRootSpelling(t *testing.T) {
	d := fixture.CaseInsensitiveDir(t)
	fixture.Project(t, filepath.Join(d, "Code", "app"))
	listed, err := pathid.Canonical(filepath.Join(d, "Code", "app"))
	if err != nil {
		t.Fatal(err)
	}
	top := filepath.Dir(listed)
	staleTop := filepath.Join(d, swapCase(filepath.Base(top)))
	stale := filepath.Join(staleTop, filepath.Base(listed))
	pol := Policy{Discovery: []string{staleTop}, Share: []string{d}}
	recheckCache.Lock()
	recheckCache.m = nil
	recheckCache.Unlock()
	if ck := Recheck(&local.Project{ID: "cg_a", Root: stale}, pol); ck.OK || ck.Availability != local.Missing {
		t.Fatalf("%s below the stale discovery root %s (listed %s) passes: %+v", stale, staleTop, top, ck)
	}
}
