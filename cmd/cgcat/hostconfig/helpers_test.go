package hostconfig

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/hostconfig")

// testdataDir is the repository's testdata/hostconfig.
var testdataDir = filepath.Join("..", "..", "..", "testdata", "hostconfig")

// testEntry is the entry most tests install.
var testEntry = Entry{
	Name:       DefaultName,
	Command:    "/opt/cgcat/bin/cgcat",
	ConfigPath: "/home/u/.config/cgcat/config.json",
}

func readFixture(t testing.TB, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testdataDir, rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkGolden compares got with the golden file rel (or rewrites it with
// -update).
func checkGolden(t *testing.T, rel string, got []byte) {
	t.Helper()
	p := filepath.Join(testdataDir, rel)
	if *update {
		if err := os.WriteFile(p, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs from golden:\n%s", rel, UnifiedDiff(rel, want, got))
	}
}
