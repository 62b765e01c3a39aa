package store

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// identityEnv points the identity home at a temp dir and plays machine.
func identityEnv(t *testing.T, machine string) (home string) {
	t.Helper()
	home = filepath.Join(t.TempDir(), "state")
	t.Setenv(IdentityDirEnv, home)
	t.Setenv(OSMachineIDEnv, machine)
	return home
}

func openID(t *testing.T, dataDir string) Identity {
	t.Helper()
	st, err := Open(context.Background(), dataDir)
	if err != nil {
		t.Fatal(err)
	}
	return st.Identity()
}

// The whole data dir lost on the same machine and user: the identity comes
// back from the copy kept outside it — same machine id, same secret (so
// the same root keys, so the same project ids from GBrain's cards).
func TestIdentitySurvivesLosingTheDataDir(t *testing.T) {
	identityEnv(t, "machine-a-0001")
	dataDir := filepath.Join(t.TempDir(), "data")
	first := openID(t, dataDir)
	if first.Binding == "" || first.KeptAt == "" {
		t.Fatalf("a new identity is bound and kept outside the data dir: %+v", first)
	}
	if fi, err := os.Stat(first.KeptAt); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the copy outside the data dir: %v %v (want mode 0600: it holds the secret)", fi, err)
	}
	if err := os.RemoveAll(dataDir); err != nil {
		t.Fatal(err)
	}
	again := openID(t, dataDir)
	if again.MachineID != first.MachineID || string(again.Secret) != string(first.Secret) || !again.Restored {
		t.Fatalf("after losing the data dir: %s restored=%v, want %s", again.MachineID, again.Restored, first.MachineID)
	}
	if again.RootKey("/code/x") != first.RootKey("/code/x") {
		t.Fatal("root keys differ after the identity came back")
	}
	// The copy outside is lost too (the data dir file rebuilds it on the
	// next open).
	if err := os.Remove(first.KeptAt); err != nil {
		t.Fatal(err)
	}
	if id := openID(t, dataDir); id.MachineID != first.MachineID || id.KeptAt == "" {
		t.Fatalf("the copy outside is rebuilt from the data dir: %+v", id)
	}
	if _, err := os.Stat(first.KeptAt); err != nil {
		t.Fatalf("the copy outside was not rebuilt: %v", err)
	}
}

// A home directory (data dir and identity home) copied to another machine:
// neither copy verifies there, so the other machine never takes this
// one's identity over — not from the data dir's file, and not after its
// data dir is lost.
func TestIdentityOfAnotherMachineIsNeverTakenOver(t *testing.T) {
	home := identityEnv(t, "machine-a-0001")
	base := t.TempDir()
	dataDir := filepath.Join(base, "data")
	a := openID(t, dataDir)

	t.Setenv(OSMachineIDEnv, "machine-b-0002") // the same files on machine B
	b := openID(t, dataDir)
	if b.MachineID == a.MachineID || b.Replaced == "" || !strings.Contains(b.Replaced, a.MachineID) {
		t.Fatalf("machine B opened machine A's data dir as %s (A is %s), replaced %q", b.MachineID, a.MachineID, b.Replaced)
	}
	aside, _ := filepath.Glob(filepath.Join(dataDir, "identity.json.other-machine-*"))
	if len(aside) != 1 {
		t.Fatalf("A's identity file is moved aside, not deleted: %v", aside)
	}
	// B loses the data dir; the identity home still holds what was kept
	// (now B's for this path). A copy of A's kept identity under another
	// path is not B's either.
	if err := os.RemoveAll(dataDir); err != nil {
		t.Fatal(err)
	}
	if again := openID(t, dataDir); again.MachineID == a.MachineID {
		t.Fatal("machine B took A's identity back from the identity home")
	}
	t.Setenv(OSMachineIDEnv, "machine-a-0001")
	other := filepath.Join(base, "data-a")
	a2 := openID(t, other)
	t.Setenv(OSMachineIDEnv, "machine-b-0002")
	if err := os.RemoveAll(other); err != nil {
		t.Fatal(err)
	}
	if b2 := openID(t, other); b2.MachineID == a2.MachineID || b2.Restored {
		t.Fatalf("machine B restored A's kept identity %s", a2.MachineID)
	}
	_ = home
}

// A data dir of an older release (identity.json without a binding): its
// identity is kept as it is (R14/R40: the same machine id and secret), and
// bound and kept outside from now on.
func TestIdentityOfAnOlderReleaseIsKeptAndBound(t *testing.T) {
	identityEnv(t, "machine-a-0001")
	dataDir := filepath.Join(t.TempDir(), "data")
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		t.Fatal(err)
	}
	old := []byte(`{"machineId":"m_aaaaaaaaaaaaaaaa","secret":"MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=","created":"2026-01-01T00:00:00Z"}`)
	if err := os.WriteFile(IdentityFile(dataDir), old, 0o600); err != nil {
		t.Fatal(err)
	}
	id := openID(t, dataDir)
	if id.MachineID != "m_aaaaaaaaaaaaaaaa" || string(id.Secret) != "0123456789abcdef0123456789abcdef" || id.Replaced != "" {
		t.Fatalf("an older release's identity: %+v", id)
	}
	if f, err := ReadIdentity(dataDir); err != nil || f.Binding == "" || id.KeptAt == "" {
		t.Fatalf("the file is bound and kept outside now: %+v %v", f, err)
	}
	if err := os.RemoveAll(dataDir); err != nil {
		t.Fatal(err)
	}
	if again := openID(t, dataDir); again.MachineID != "m_aaaaaaaaaaaaaaaa" {
		t.Fatalf("an upgraded identity survives losing the data dir: %s", again.MachineID)
	}
}

// Without an OS machine id nothing can be bound: the identity lives in the
// data dir only, as before, and nothing is kept outside (an unbound copy
// could be taken over on another machine).
func TestIdentityWithoutAnOSMachineID(t *testing.T) {
	identityEnv(t, "uninitialized")
	dataDir := filepath.Join(t.TempDir(), "data")
	id := openID(t, dataDir)
	if id.Binding != "" || id.KeptAt != "" || MachineBound() {
		t.Fatalf("no machine id: %+v bound=%v", id, MachineBound())
	}
	if again := openID(t, dataDir); again.MachineID != id.MachineID {
		t.Fatal("the data dir's identity changed")
	}
}

// No identity home for a data dir in the temporary directory unless one is
// named, nor inside the data dir itself.
func TestIdentityHomePlaces(t *testing.T) {
	t.Setenv(IdentityDirEnv, "")
	if h := identityHome(filepath.Join(os.TempDir(), "x", "data")); h != "" {
		t.Errorf("a throwaway data dir kept at %s", h)
	}
	dataDir := t.TempDir()
	t.Setenv(IdentityDirEnv, filepath.Join(dataDir, "ids"))
	if h := identityHome(dataDir); h != "" {
		t.Errorf("kept inside the data dir: %s", h)
	}
	t.Setenv(IdentityDirEnv, "/somewhere/ids")
	a, b := identityHome("/a/data"), identityHome("/b/data")
	if a == "" || a == b || filepath.Dir(a) != "/somewhere/ids" {
		t.Errorf("homes %q %q", a, b)
	}
}
