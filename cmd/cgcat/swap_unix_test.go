//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cgcat/cgcat/local/nofollow/nofollowtest"
)

// TestScanSymlinkSwapBetweenSlices is issue 11's reproduction with the
// real binary: one directory per slice, `scan --once`, then code/trap is
// replaced by a symlink to a denied project, then the next slices. The
// secret project is never found: not by a search for its words, not in
// the full listing, and (the kernel says) none of its files was read.
func TestScanSymlinkSwapBetweenSlices(t *testing.T) {
	base := canonTemp(t)
	code := filepath.Join(base, "code")
	private := filepath.Join(base, "private")
	fakeProject(t, filepath.Join(code, "public"), "public-pkg")
	if err := os.MkdirAll(filepath.Join(code, "trap"), 0o755); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(private, "secretproj")
	fakeProject(t, secret, "secretword-pkg")
	writeTestFile(t, filepath.Join(secret, "README.md"), "secretword readme\n")
	cfg := map[string]any{
		"version": 1,
		"dataDir": filepath.Join(base, "data"),
		"discovery": map[string]any{
			"roots":                  []string{code},
			"maxDirectoriesPerSlice": 1,
		},
		"sharing": map[string]any{"roots": []string{code}, "denyRoots": []string{private}, "exposeAbsolutePaths": true},
	}
	b, _ := json.Marshal(cfg)
	cfgPath := filepath.Join(base, "config.json")
	writeTestFile(t, cfgPath, string(b))
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(cgcatBin(t), append(args, "--config", cfgPath)...)
		cmd.Env = append(os.Environ(), "HOME="+base, "CGCAT_CONFIG=")
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			t.Fatalf("cgcat %s: %v\n%s\n%s", strings.Join(args, " "), err, out.String(), errOut.String())
		}
		return out.String() + errOut.String()
	}
	run("scan", "--once") // reads code/ and queues public and trap
	w := nofollowtest.Watch(t, private, filepath.Join(secret, "README.md"))
	if err := os.Remove(filepath.Join(code, "trap")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(code, "trap")); err != nil {
		t.Fatal(err)
	}
	run("scan", "--once")
	run("scan")
	search := run("projects", "secretword", "--json")
	listing := run("projects", "--json", "--limit", "50")
	for what, out := range map[string]string{"search": search, "listing": listing} {
		if strings.Contains(out, "secretword") || strings.Contains(out, "trap") {
			t.Errorf("%s shows the secret project:\n%s", what, out)
		}
	}
	if !strings.Contains(listing, "public-pkg") {
		t.Errorf("the public project is not listed (the test saw nothing):\n%s", listing)
	}
	if w != nil {
		if seen := w.Seen(); len(seen) > 0 {
			t.Errorf("the denied project was read: %q", seen)
		}
	}
}
