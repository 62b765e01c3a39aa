//go:build linux

package pathid

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// caseInsensitiveDir returns an empty directory whose lookups ignore case,
// made the first way this machine allows: chattr +F on the temp file
// system, an ext4 casefold image, a vfat image, or an NTFS image mounted
// with lowntfs-3g -o ignore_case (FUSE). It skips the test with every
// reason otherwise.
func caseInsensitiveDir(t *testing.T) string {
	t.Helper()
	var why []string
	try := func(how string, make func() (string, error)) string {
		d, err := make()
		if err == nil {
			ok, perr := probeEmpty(d)
			if ok {
				t.Logf("case-insensitive directory by %s: %s (not available: %s)", how, d, strings.Join(why, "; "))
				return d
			}
			err = perr
		}
		why = append(why, how+": "+err.Error())
		return ""
	}
	run := func(name string, args ...string) error {
		if _, err := exec.LookPath(name); err != nil {
			return err
		}
		out, err := exec.Command(name, args...).CombinedOutput()
		if err != nil {
			return &cmdError{name, strings.TrimSpace(string(out)), err}
		}
		return nil
	}
	mountImage := func(mkfs []string, mount []string, unmount string) func() (string, error) {
		return func() (string, error) {
			dir := t.TempDir()
			img, mnt := filepath.Join(dir, "img"), filepath.Join(dir, "mnt")
			if err := os.Mkdir(mnt, 0o755); err != nil {
				return "", err
			}
			if err := os.WriteFile(img, nil, 0o600); err != nil {
				return "", err
			}
			if err := os.Truncate(img, 16<<20); err != nil {
				return "", err
			}
			if err := run(mkfs[0], append(mkfs[1:], img)...); err != nil {
				return "", err
			}
			if err := run(mount[0], append(mount[1:], img, mnt)...); err != nil {
				return "", err
			}
			t.Cleanup(func() { _ = exec.Command(unmount, mnt).Run() })
			return mnt, nil
		}
	}

	if d := try("chattr +F on the temp file system", func() (string, error) {
		d := filepath.Join(t.TempDir(), "cf")
		if err := os.Mkdir(d, 0o755); err != nil {
			return "", err
		}
		return d, run("chattr", "+F", d)
	}); d != "" {
		return d
	}
	if os.Geteuid() != 0 {
		t.Skipf("no case-insensitive directory (mounting needs root): %s", strings.Join(why, "; "))
	}
	if d := try("ext4 casefold image", func() (string, error) {
		mnt, err := mountImage([]string{"mkfs.ext4", "-q", "-F", "-O", "casefold"}, []string{"mount", "-o", "loop"}, "umount")()
		if err != nil {
			return "", err
		}
		d := filepath.Join(mnt, "cf")
		if err := os.Mkdir(d, 0o755); err != nil {
			return "", err
		}
		return d, run("chattr", "+F", d)
	}); d != "" {
		return d
	}
	if d := try("vfat image", mountImage([]string{"mkfs.vfat"}, []string{"mount", "-t", "vfat", "-o", "loop"}, "umount")); d != "" {
		return d
	}
	if _, err := os.Stat("/dev/fuse"); err == nil {
		if d := try("NTFS image via lowntfs-3g -o ignore_case", mountImage([]string{"mkntfs", "-F", "-q", "-f"}, []string{"lowntfs-3g", "-o", "ignore_case"}, "umount")); d != "" {
			return d
		}
	} else {
		why = append(why, "lowntfs-3g: no /dev/fuse")
	}
	t.Skipf("no case-insensitive directory on this kernel: %s", strings.Join(why, "; "))
	return ""
}

type cmdError struct {
	name, out string
	err       error
}

func (e *cmdError) Error() string { return e.name + ": " + e.err.Error() + ": " + e.out }

// probeEmpty checks that d ignores case by creating one entry in it.
func probeEmpty(d string) (bool, error) {
	if err := os.Mkdir(filepath.Join(d, "Probe"), 0o755); err != nil {
		return false, err
	}
	defer os.Remove(filepath.Join(d, "Probe"))
	ok, err := ProbeCaseInsensitive(d)
	if err == nil && !ok {
		err = errNotInsensitive
	}
	return ok, err
}

var errNotInsensitive = &cmdError{"probe", "lookups are case-sensitive", os.ErrInvalid}

// TestRealCaseInsensitiveDir runs the deny check against a directory the
// kernel really looks up case-insensitively, with Linux's exact rules: the
// canonical deny root takes the listed spelling, so the project the walker
// finds is inside it and the sibling is not.
func TestRealCaseInsensitiveDir(t *testing.T) {
	d := caseInsensitiveDir(t)
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
