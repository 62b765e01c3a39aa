//go:build linux

package faults

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// Issue 11 item 4: the data dir is deleted, or deleted and replaced by
// another store, under a running serve. The serve notices (R39) and
// reloads from scratch: it never lists a project twice (old id and new id)
// and never hands out or resolves an id the other processes do not know.
func TestDataDirReplacedUnderServe(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	for _, replaced := range []bool{true, false} {
		name := map[bool]string{true: "replaced", false: "deleted"}[replaced]
		t.Run(name, func(t *testing.T) {
			base := canonTemp(t)
			root := filepath.Join(base, "code")
			paths := genProjects(t, root, 2, 10)
			data := filepath.Join(base, "data")
			e := env(base)
			cfg := writeConfig(t, filepath.Join(base, "config.json"), cfgOpts{data: data, roots: []string{root}, refresh: 5})
			if r := run(e, 60*time.Second, "", "scan", "--config", cfg); r.code != 0 {
				t.Fatalf("first scan: %s", r)
			}
			a, err := startServe(t, e, 20*time.Second, "--config", cfg)
			if err != nil {
				t.Fatal(err)
			}
			before, _, err := a.listAll(20 * time.Second)
			if err != nil || len(before) != len(paths) {
				t.Fatalf("before: %d records (%v)", len(before), err)
			}
			// The serve may be writing (its start-up round): retry until the
			// directory is gone.
			for i := 0; ; i++ {
				err := os.RemoveAll(data)
				if err == nil {
					break
				}
				if i == 100 {
					t.Fatal(err)
				}
				time.Sleep(20 * time.Millisecond)
			}
			if replaced {
				// Another store takes its place: new machine id, new ids, and
				// a catalog revision past the old one (as a store that lived
				// longer would have), so an incremental reload would merge.
				for round := range 3 {
					if round > 0 {
						for i, p := range paths {
							mkProject(t, p, fmt.Sprintf("pkg-r%d-%d", round, i), fmt.Sprintf("edited in round %d", round))
						}
					}
					if r := run(e, 60*time.Second, "", "scan", "--config", cfg); r.code != 0 {
						t.Fatalf("scan of the new data dir: %s", r)
					}
				}
			} else {
				// The serve itself sees the dir gone first.
				if _, _, err := a.call(20*time.Second, "local_codegraph_projects", map[string]any{"limit": 50}); err != nil {
					t.Errorf("after its data dir was deleted, the serve answers with an error: %v", err)
				}
				if r := run(e, 60*time.Second, "", "scan", "--config", cfg); r.code != 0 {
					t.Fatalf("scan after the data dir was deleted: %s", r)
				}
			}
			// What every other process knows now.
			b, err := startServe(t, e, 20*time.Second, "--config", cfg)
			if err != nil {
				t.Fatal(err)
			}
			truth, _, err := b.listAll(20 * time.Second)
			if err != nil || len(truth) != len(paths) {
				t.Fatalf("a new serve lists %d records (%v)", len(truth), err)
			}
			var problems []string
			var got map[string]string
			// It must notice at its next call; 5 s is slack, not a target.
			deadline := time.Now().Add(5 * time.Second)
			for {
				got, _, err = a.listAll(20 * time.Second)
				if err == nil && maps.Equal(got, truth) || time.Now().After(deadline) {
					break
				}
				time.Sleep(200 * time.Millisecond)
			}
			if err != nil {
				problems = append(problems, fmt.Sprintf("the serve's listing fails: %v", err))
			}
			if !maps.Equal(got, truth) {
				byPath := map[string][]string{}
				unknown := 0
				for id, p := range got {
					byPath[p] = append(byPath[p], id)
					if _, ok := truth[id]; !ok {
						unknown++
					}
				}
				dups := 0
				for _, ids := range byPath {
					if len(ids) > 1 {
						dups++
					}
				}
				problems = append(problems, fmt.Sprintf("after its data dir was %s, the serve lists %d records (%d roots twice, %d ids no other process knows); the others list %d",
					name, len(got), dups, unknown, len(truth)))
			}
			oldIDs := slices.Sorted(maps.Keys(before))
			for _, id := range oldIDs[:3] {
				ea, _, err := a.call(20*time.Second, "local_codegraph_resolve", map[string]any{"projectId": id})
				eb, _, errb := b.call(20*time.Second, "local_codegraph_resolve", map[string]any{"projectId": id})
				if err != nil || errb != nil {
					problems = append(problems, fmt.Sprintf("resolve %s: %v / %v", id, err, errb))
					continue
				}
				if ea.Status != eb.Status {
					problems = append(problems, fmt.Sprintf("an id of the old store, %s, resolves %s on the serve that ran through the %s, %s on a new one", id, ea.Status, name, eb.Status))
				}
			}
			if len(problems) > 0 {
				t.Fatalf("data dir %s under a running serve:\n%s\nserve stderr:\n%s", name, strings.Join(problems, "\n"), short(a.stderr.String()))
			}
		})
	}
}
