package scan

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/store"
	"github.com/cgcat/cgcat/outbox"
)

// mkProject makes dir a CodeGraph project: .codegraph/codegraph.db with the
// SQLite header, as CodeGraph leaves it at rest.
func mkProject(t testing.TB, dir string) {
	t.Helper()
	cg := filepath.Join(dir, ".codegraph")
	if err := os.MkdirAll(cg, 0o755); err != nil {
		t.Fatal(err)
	}
	db := append([]byte("SQLite format 3\x00"), make([]byte, 4080)...)
	if err := os.WriteFile(filepath.Join(cg, "codegraph.db"), db, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cg, ".gitignore"), []byte("*\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func write(t testing.TB, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func git(t testing.TB, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@e", "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func testOptions(roots ...string) Options {
	return Options{
		Roots:        roots,
		MaxDepth:     6,
		ExcludeNames: []string{".git", "node_modules", "dist", "build", ".cache"},
		SliceDirs:    2000,
		SliceTime:    time.Second,
		RoundDirs:    100000,
		RoundTime:    time.Minute,
	}
}

// scanAll runs one full pass with a fresh scanner and returns the records by root.
func scanAll(t testing.TB, st *store.Store, opt Options) map[string]*local.Project {
	t.Helper()
	ctx := context.Background()
	s, err := Start(ctx, st, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for {
		r, err := s.RunRound(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if r.Finished {
			break
		}
	}
	return records(t, st)
}

func records(t testing.TB, st *store.Store) map[string]*local.Project {
	t.Helper()
	out := map[string]*local.Project{}
	err := st.View(context.Background(), func(r *store.Reader) error {
		return r.Projects(func(p *local.Project) error {
			if _, dup := out[p.Root]; dup {
				t.Fatalf("two records for root %s", p.Root)
			}
			out[p.Root] = p
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func presentRoots(recs map[string]*local.Project) []string {
	var roots []string
	for r, p := range recs {
		if p.Availability == local.Present {
			roots = append(roots, r)
		}
	}
	sort.Strings(roots)
	return roots
}

func newStore(t testing.TB) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func canon(t testing.TB, p string) string {
	t.Helper()
	c, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func rel(root string, paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = strings.TrimPrefix(strings.TrimPrefix(p, root), "/")
	}
	return out
}

func readStateT(t testing.TB, st *store.Store) State {
	t.Helper()
	var s State
	err := st.View(context.Background(), func(r *store.Reader) error {
		var err error
		s, err = ReadState(r)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func outboxDepth(t testing.TB, st *store.Store) int {
	t.Helper()
	n := 0
	_ = st.View(context.Background(), func(r *store.Reader) error { n = outbox.Depth(r); return nil })
	return n
}

// summary is coverage over every root a finished pass recorded.
type summary struct {
	Coverage string
	GapCount int
	Gaps     []Gap
}

func covOf(s State) summary {
	out := summary{Coverage: CoverageComplete}
	if len(s.Roots) == 0 {
		out.Coverage = CoveragePartial
	}
	for _, rc := range s.Roots {
		out.GapCount += rc.GapCount
		out.Gaps = append(out.Gaps, rc.Gaps...)
		if rc.GapCount > 0 || rc.Completed.IsZero() {
			out.Coverage = CoveragePartial
		}
	}
	return out
}
