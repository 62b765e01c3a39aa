//go:build linux

package pathid

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cgcat/cgcat/local/fixture"
)

// TestRealCaseInsensitiveDir runs the deny check against a directory the
// kernel really looks up case-insensitively, with Linux's exact rules: the
// canonical deny root takes the listed spelling, so the project the walker
// finds is inside it and the sibling is not.
func TestRealCaseInsensitiveDir(t *testing.T) {
	d := fixture.CaseInsensitiveDir(t)
	mkdir(t, d, "Code/Private/app")
	mkdir(t, d, "Code/Private2/app")
	// What a walker would see: names as listed.
	walked := filepath.Join(d, listedName(t, d, "Code"), listedName(t, filepath.Join(d, "Code"), "Private"), "app")
	sibling := filepath.Join(d, listedName(t, d, "Code"), listedName(t, filepath.Join(d, "Code"), "Private2"), "app")

	deny, err := Canonical(filepath.Join(d, "code", "PRIVATE") + "/")
	if err != nil {
		t.Fatal(err)
	}
	wantDeny := filepath.Dir(walked)
	if deny != wantDeny {
		t.Errorf("Canonical kept the config's spelling: %q, listed %q", deny, wantDeny)
	}
	if c, err := Canonical(walked); err != nil || c != walked {
		t.Errorf("Canonical(%q) = %q, %v", walked, c, err)
	}
	for _, r := range []Rules{LinuxRules, DarwinRules} {
		if !r.Within(deny, walked) {
			t.Errorf("%+v: %q escapes deny root %q", r, walked, deny)
		}
		if r.Within(deny, sibling) {
			t.Errorf("%+v: sibling %q inside %q", r, sibling, deny)
		}
	}
	if !MayBeWithin(filepath.Join(d, "code", "PRIVATE"), walked) {
		t.Error("MayBeWithin lets the uncanonical deny root leak")
	}
	if ok, err := ProbeCaseInsensitive(d); err != nil || !ok {
		t.Errorf("ProbeCaseInsensitive(%q) = %v, %v", d, ok, err)
	}
	a, err1 := FileID(filepath.Join(d, "CODE", "private"))
	b, err2 := FileID(walked + "/..")
	if err1 != nil || err2 != nil || a != b {
		t.Logf("file ids across spellings differ here (%v %v %v %v): ids are a second opinion only", a, b, err1, err2)
	}
}

func TestProbeCaseSensitiveTemp(t *testing.T) {
	d := t.TempDir()
	if _, err := ProbeCaseInsensitive(d); err != ErrNoProbe {
		t.Errorf("empty dir: err = %v, want ErrNoProbe", err)
	}
	mkdir(t, d, "Probe")
	ok, err := ProbeCaseInsensitive(d)
	if err != nil {
		t.Fatal(err)
	}
	if ok {
		t.Skipf("the temp directory %s ignores case; nothing to check", d)
	}
}

func listedName(t *testing.T, dir, name string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.EqualFold(e.Name(), name) {
			return e.Name()
		}
	}
	t.Fatalf("%s not listed in %s", name, dir)
	return ""
}
