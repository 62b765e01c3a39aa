//go:build linux

package faults

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Issue 11 item 1: a host that starts and stops a server quickly (a health
// probe, `opencode mcp list`) on a fresh data dir. `echo '{}' | cgcat serve`
// exits while the store is being created; it must leave either no store or
// a complete one, and every command must work afterwards without `cgcat
// store recover`. Twenty fresh data dirs.
func TestFirstServeEarlyExit(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	base := canonTemp(t)
	root := filepath.Join(base, "code")
	mkProject(t, filepath.Join(root, "alpha"), "alpha-pkg", "the alpha project")
	mkProject(t, filepath.Join(root, "beta", "gamma"), "gamma-pkg", "the gamma project")
	e := env(base)
	damaged := 0
	var failures []string
	for i := range 20 {
		data := filepath.Join(base, fmt.Sprintf("data%02d", i))
		flags := []string{"--root", root, "--data-dir", data}
		first := run(e, 20*time.Second, "{}\n", append([]string{"serve"}, flags...)...)
		if first.timedOut {
			failures = append(failures, fmt.Sprintf("run %d: serve did not exit after stdin closed: %s", i, first))
			continue
		}
		state := storeFiles(filepath.Join(data, "catalog.db"))
		var bad []string
		if state != "absent" && !strings.Contains(state, "CURRENT") {
			bad = append(bad, "the first serve left an incomplete store: "+state)
		}
		for _, args := range [][]string{
			append([]string{"projects", "--json"}, flags...),
			append([]string{"resolve", "cg_aaaaaaaaaaaaaaaa", "--json"}, flags...),
			append([]string{"scan"}, flags...),
			append([]string{"projects", "gamma", "--json"}, flags...),
			append([]string{"doctor"}, flags...),
		} {
			r := run(e, 30*time.Second, "", args...)
			okCode := r.code == 0 || (args[0] == "resolve" && r.code == 3) || (args[0] == "doctor" && r.code == 1)
			if !okCode || r.panicked() || strings.Contains(r.out(), "damaged") || strings.Contains(r.out(), "store recover") {
				bad = append(bad, r.String())
			}
		}
		s, err := startServe(t, e, 20*time.Second, flags...)
		if err == nil {
			var en envelope
			en, _, err = s.call(20*time.Second, "local_codegraph_projects", map[string]any{"query": "alpha"})
			if err == nil && (en.Status != "ok" || len(en.Projects) == 0) {
				err = fmt.Errorf("status %s with %d projects: %s", en.Status, len(en.Projects), en.Message)
			}
			s.kill()
		}
		if err != nil {
			bad = append(bad, "a second serve: "+err.Error())
		}
		if len(bad) > 0 {
			damaged++
			failures = append(failures, fmt.Sprintf("run %d (store after the first serve: %s):\n  %s", i, state, strings.Join(bad, "\n  ")))
		}
	}
	t.Logf("first serve exiting early: %d of 20 fresh data dirs left a store some command could not use", damaged)
	if damaged > 0 {
		t.Fatalf("%d of 20 runs of `echo '{}' | cgcat serve --root T --data-dir D` on a fresh data dir broke a later command (a store must be created complete or not at all, issue 11 item 1):\n%s",
			damaged, strings.Join(failures[:min(len(failures), 3)], "\n"))
	}
}

// storeFiles lists a LevelDB directory's files ("absent" without one).
func storeFiles(dir string) string {
	es, err := os.ReadDir(dir)
	if err != nil {
		return "absent"
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return strings.Join(names, " ")
}
