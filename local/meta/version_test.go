package meta

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// Every source file of the package shapes what it derives, so every one
// is part of Derivation (a file added and not listed would be a change no
// version shows).
func TestDerivationCoversEverySourceFile(t *testing.T) {
	ents, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, e := range ents {
		n := e.Name()
		if strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") && n != "version.go" {
			want = append(want, n)
		}
	}
	if got := derivedFiles(); !slices.Equal(got, want) {
		t.Fatalf("the derivation covers %v, the package's sources are %v", got, want)
	}
}

// A stamp carries the derivation: the same files stamped by other code
// (another Derivation) give another stamp, so a record read by an earlier
// release is read again.
func TestStampCarriesTheDerivation(t *testing.T) {
	old := RacyStamp
	RacyStamp = 0
	defer func() { RacyStamp = old }()
	dir := t.TempDir()
	if err := os.WriteFile(dir+"/package.json", []byte(`{"name":"x"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	a := StampNames(dir, []string{"package.json"})
	stampVersion = func() uint64 { return Derivation() + 1 }
	defer func() { stampVersion = Derivation }()
	if b := StampNames(dir, []string{"package.json"}); a == 0 || b == a {
		t.Fatalf("stamps %x and %x by two derivations", a, b)
	}
}
