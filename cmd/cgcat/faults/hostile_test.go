//go:build linux

package faults

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// secret is a project under a deny root: none of its words may ever come
// out of cgcat, under any spelling of its path.
type secret struct {
	dir   string
	words []string // name, description word, package keyword
}

func mkSecret(t *testing.T, dir string) secret {
	t.Helper()
	mkProject(t, dir, "zebrasecretpkg", "quokkaclassified internal payroll")
	return secret{dir: dir, words: []string{"zebrasecretpkg", "quokkaclassified", "payroll"}}
}

// leaks returns the secret's words found in out.
func (s secret) leaks(out string) []string {
	var found []string
	for _, w := range s.words {
		if strings.Contains(out, w) {
			found = append(found, w)
		}
	}
	return found
}

// searchAll asks every answerer for each of the secret's words and for the
// plain listing; it returns what leaked, and where. A path under the deny
// root by another spelling (a symlink, a bind mount) is a leak too.
func searchAll(t *testing.T, e []string, cfg string, s secret, extra ...*serveProc) []string {
	t.Helper()
	var leaks []string
	queries := append([]string{""}, s.words...)
	for _, q := range queries {
		args := []string{"projects", "--json", "--limit", "50", "--config", cfg}
		if q != "" {
			args = append(args, q)
		}
		r := run(e, 60*time.Second, "", args...)
		if w := s.leaks(r.out()); len(w) > 0 {
			leaks = append(leaks, fmt.Sprintf("`cgcat projects %s` shows %v", q, w))
		}
	}
	srv, err := startServe(t, e, 20*time.Second, "--config", cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range append([]*serveProc{srv}, extra...) {
		for _, q := range queries {
			args := map[string]any{"limit": 50}
			if q != "" {
				args["query"] = q
			}
			_, raw, err := p.call(20*time.Second, "local_codegraph_projects", args)
			if err != nil {
				t.Fatalf("serve: %v", err)
			}
			if w := s.leaks(raw); len(w) > 0 {
				leaks = append(leaks, fmt.Sprintf("serve search %q shows %v", q, w))
			}
		}
	}
	srv.kill()
	return leaks
}

// Issue 11 item 5: with one directory per slice, a directory already
// queued is swapped for a symlink into the deny root between two slices.
// The walk must not follow it (O_NOFOLLOW / openat), so nothing of the
// denied project comes out.
func TestSymlinkSwapBetweenSlices(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	base := canonTemp(t)
	code := filepath.Join(base, "code")
	s := mkSecret(t, filepath.Join(code, "private", "secretproj"))
	mkProject(t, filepath.Join(code, "public", "app"), "public-app", "an ordinary project")
	trap := filepath.Join(code, "trap")
	if err := os.MkdirAll(trap, 0o755); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(base, "data")
	e := env(base)
	cfg := writeConfig(t, filepath.Join(base, "config.json"), cfgOpts{data: data, roots: []string{code}, deny: []string{filepath.Join(code, "private")}, slice: 1})
	once := run(e, 60*time.Second, "", "scan", "--once", "--config", cfg)
	if once.code != 0 {
		t.Fatalf("scan --once: %s", once)
	}
	// code/trap is queued now; swap it for a symlink into the deny root.
	if err := os.Remove(trap); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("private/secretproj", trap); err != nil {
		t.Fatal(err)
	}
	if r := run(e, 60*time.Second, "", "scan", "--config", cfg); r.code != 0 {
		t.Fatalf("scan: %s", r)
	}
	if leaks := searchAll(t, e, cfg, s); len(leaks) > 0 {
		t.Fatalf("a directory swapped for a symlink into the deny root between two slices leaks the denied project:\n%s", strings.Join(leaks, "\n"))
	}
}

// Issue 11 item 5, second form: a discovery root is swapped for a symlink
// into the deny root while a serve runs; its refresh walks the "root".
func TestRootSwappedForSymlinkIntoDenyRoot(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	base := canonTemp(t)
	code := filepath.Join(base, "code")
	libs := filepath.Join(base, "libs")
	s := mkSecret(t, filepath.Join(code, "private", "secretproj"))
	mkProject(t, filepath.Join(libs, "lib"), "ordinary-lib", "an ordinary library")
	mkProject(t, filepath.Join(code, "app"), "ordinary-app", "an ordinary app")
	data := filepath.Join(base, "data")
	e := env(base)
	cfg := writeConfig(t, filepath.Join(base, "config.json"), cfgOpts{data: data, roots: []string{code, libs}, deny: []string{filepath.Join(code, "private")}, refresh: 5})
	if r := run(e, 60*time.Second, "", "scan", "--config", cfg); r.code != 0 {
		t.Fatalf("scan: %s", r)
	}
	srv, err := startServe(t, e, 20*time.Second, "--config", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(libs); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(code, "private"), libs); err != nil {
		t.Fatal(err)
	}
	// A new project after the swap: once the serve lists it and is idle,
	// a pass that began after the swap has finished.
	mkProject(t, filepath.Join(code, "after-swap"), "after-swap-app", "made after the swap")
	deadline := time.Now().Add(30 * time.Second)
	for {
		e1, _, err := srv.call(20*time.Second, "local_codegraph_projects", map[string]any{"refresh": true, "query": "after-swap-app"})
		if err != nil {
			t.Fatal(err)
		}
		if len(e1.Projects) > 0 && e1.ScanState == "idle" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the serve never rescanned after the swap (scanState %s, %d hits)", e1.ScanState, len(e1.Projects))
		}
		time.Sleep(300 * time.Millisecond)
	}
	if leaks := searchAll(t, e, cfg, s, srv); len(leaks) > 0 {
		t.Fatalf("a discovery root swapped for a symlink into the deny root leaks the denied project:\n%s", strings.Join(leaks, "\n"))
	}
}

// Issue 11 item 6: a bind mount of the deny root inside a discovery root
// is the same directory: denied by identity (R37). After the unmount, the
// name and description must not stay searchable either. Root only.
func TestBindMountOfDenyRoot(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	if os.Geteuid() != 0 {
		t.Skip("mount --bind needs root; run the suite as root (CI does) to test the bind-mount alias of a deny root")
	}
	base := canonTemp(t)
	code := filepath.Join(base, "code")
	s := mkSecret(t, filepath.Join(code, "private", "secretproj"))
	mkProject(t, filepath.Join(code, "app"), "ordinary-app", "an ordinary app")
	mirror := filepath.Join(code, "mirror")
	if err := os.MkdirAll(mirror, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "--bind", filepath.Join(code, "private"), mirror).CombinedOutput(); err != nil {
		t.Skipf("mount --bind is not permitted here (%v: %s)", err, out)
	}
	mounted := true
	t.Cleanup(func() {
		if mounted {
			_ = exec.Command("umount", "-l", mirror).Run()
		}
	})
	data := filepath.Join(base, "data")
	e := env(base)
	cfg := writeConfig(t, filepath.Join(base, "config.json"), cfgOpts{data: data, roots: []string{code}, deny: []string{filepath.Join(code, "private")}})
	if r := run(e, 60*time.Second, "", "scan", "--config", cfg); r.code != 0 {
		t.Fatalf("scan: %s", r)
	}
	var problems []string
	if leaks := searchAll(t, e, cfg, s); len(leaks) > 0 {
		problems = append(problems, "while code/mirror is a bind mount of the deny root:\n  "+strings.Join(leaks, "\n  "))
	}
	if out, err := exec.Command("umount", mirror).CombinedOutput(); err != nil {
		t.Fatalf("umount: %v %s", err, out)
	}
	mounted = false
	if r := run(e, 60*time.Second, "", "scan", "--config", cfg); r.code != 0 {
		t.Fatalf("scan after umount: %s", r)
	}
	if leaks := searchAll(t, e, cfg, s); len(leaks) > 0 {
		problems = append(problems, "after the unmount (the record read through the alias must not stay searchable):\n  "+strings.Join(leaks, "\n  "))
	}
	if len(problems) > 0 {
		t.Fatalf("a bind mount of the deny root leaks the denied project:\n%s", strings.Join(problems, "\n"))
	}
}

// Issue 11 item 9: names with terminal escapes, BEL and bytes that are not
// UTF-8 are printed escaped by every command that prints for a person.
func TestEscapesInDirectoryNames(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	base := canonTemp(t)
	code := filepath.Join(base, "code")
	// Not UTF-8: a gap that scan and doctor print.
	if err := os.MkdirAll(filepath.Join(code, "gap\x1b]0;PWNED\x07\xffgap", "inner"), 0o755); err != nil {
		t.Fatal(err)
	}
	// Valid UTF-8 with control characters: a project whose path cannot be
	// handed out, and whose name the text answer shows.
	mkProject(t, filepath.Join(code, "evil\x1b[31mred\x07dir"), "evil-pkg", "an ordinary description")
	mkProject(t, filepath.Join(code, "deep", "\x1b[2Jclear"), "clear-pkg", "another one")
	// An unreadable directory below it: a permission gap named by path
	// (root reads everything, so only when not root).
	if os.Geteuid() != 0 {
		locked := filepath.Join(code, "locked\x1b[5mblink")
		_ = os.MkdirAll(locked, 0o755)
		_ = os.Chmod(locked, 0)
		t.Cleanup(func() { _ = os.Chmod(locked, 0o755) })
	}
	data := filepath.Join(base, "data")
	e := env(base)
	cfg := writeConfig(t, filepath.Join(base, "config.json"), cfgOpts{data: data, roots: []string{code}})
	var bad []string
	for _, args := range [][]string{
		{"scan"},
		{"scan", "--once"},
		{"doctor"},
		{"projects"},
		{"projects", "evil"},
		{"projects", "clear"},
	} {
		r := run(e, 60*time.Second, "", append(args, "--config", cfg)...)
		if r.code != 0 && !(args[0] == "doctor" && r.code == 1) {
			bad = append(bad, fmt.Sprintf("`cgcat %s` failed: %s", strings.Join(args, " "), r))
			continue
		}
		for _, stream := range []struct{ name, s string }{{"stdout", r.stdout}, {"stderr", r.stderr}} {
			var what []string
			if strings.ContainsRune(stream.s, 0x1b) {
				what = append(what, "ESC")
			}
			if strings.ContainsRune(stream.s, 0x07) {
				what = append(what, "BEL")
			}
			if !utf8.ValidString(stream.s) {
				what = append(what, "bytes that are not UTF-8")
			}
			if len(what) > 0 {
				bad = append(bad, fmt.Sprintf("`cgcat %s` prints raw %s on %s:\n%q", strings.Join(args, " "), strings.Join(what, ", "), stream.name, excerpt(stream.s)))
			}
		}
	}
	if len(bad) > 0 {
		t.Fatalf("names printed for a person must be escaped (issue 11 item 9):\n%s", strings.Join(bad, "\n"))
	}
}

// excerpt is the part of s around its first control byte or bad byte.
func excerpt(s string) string {
	i := strings.IndexFunc(s, func(r rune) bool { return r == 0x1b || r == 0x07 || r == utf8.RuneError })
	if i < 0 {
		i = 0
	}
	lo := max(0, i-120)
	hi := min(len(s), i+120)
	return s[lo:hi]
}
