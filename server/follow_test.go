package server_test

import (
	"path/filepath"
	"strings"
	"testing"
)

// Coverage never claims more than was seen: with file events off (here by
// CGCAT_WATCH=off; the same holds at the system's watch limit), an answer
// after a whole pass is partial, and names the limit and the next step;
// with them on, the same answer is complete once the watcher is live, and
// a project made afterwards shows without refresh. With maxDepth cutting a
// folder, the answer names the setting.
func TestCoverageNamesWhatItRestsOn(t *testing.T) {
	base := tempDir(t)
	project(t, filepath.Join(base, "a", "alpha"), "alpha-svc", "first")
	project(t, filepath.Join(base, "deep", "x", "y", "beta"), "beta-svc", "deep")

	t.Setenv("CGCAT_WATCH", "off")
	off := serve(t, cfg{DataDir: filepath.Join(base, ".data-off"), Roots: []string{base}}.write(t))
	a := off.waitFor(map[string]any{"query": "alpha-svc"}, "a pass", func(a answer) bool { return a.env.ScanState == "idle" && len(a.env.Projects) > 0 })
	if a.env.Coverage != "partial" || !strings.Contains(a.env.Message, "file events are off (CGCAT_WATCH=off)") || !strings.Contains(a.env.Message, "refresh: true") {
		t.Errorf("file events off: coverage %s, message %q", a.env.Coverage, a.env.Message)
	}
	off.Close()

	t.Setenv("CGCAT_WATCH", "")
	on := serve(t, cfg{DataDir: filepath.Join(base, ".data-on"), Roots: []string{base}}.write(t))
	on.waitScanned() // complete: the pass ended and the watcher follows the disk
	project(t, filepath.Join(base, "a", "gamma"), "gamma-svc", "made later")
	a = on.waitFor(map[string]any{"query": "gamma-svc"}, "a project made after the pass, without refresh", func(a answer) bool {
		p := a.byName("gamma-svc")
		return p != nil && p.ProjectPath != nil
	})
	if a.env.Projects[0].Name != "gamma-svc" {
		t.Errorf("the new project is not first: %v", a.names())
	}
	on.Close()

	depth := 2
	cut := serve(t, cfg{DataDir: filepath.Join(base, ".data-depth"), Roots: []string{base}, MaxDepth: &depth}.write(t))
	a = cut.waitFor(map[string]any{"query": "no-such-thing"}, "a pass", func(a answer) bool { return a.env.ScanState == "idle" && strings.Contains(a.env.Message, "maxDepth") })
	if a.env.Status != "no_matches" || a.env.Coverage != "partial" || !strings.Contains(a.env.Message, "discovery.maxDepth 2") || !strings.Contains(a.env.Message, "raise discovery.maxDepth") {
		t.Errorf("maxDepth: %s %s %q", a.env.Status, a.env.Coverage, a.env.Message)
	}
}
