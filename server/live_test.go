package server_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cgcat/cgcat/server"
)

// rewrite replaces the config file at path with c, as an editor would.
func (c cfg) rewrite(tb testing.TB, path string) {
	tb.Helper()
	tmp := c.write(tb)
	b, err := os.ReadFile(tmp)
	if err != nil {
		tb.Fatal(err)
	}
	// A newer modification time than the file it replaces, whatever the
	// file system's clock granularity.
	next := time.Now().Add(2 * time.Second)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		tb.Fatal(err)
	}
	os.Chtimes(path, next, next)
}

// TestLiveConfig: a running serve applies an edited config before its next
// answer — a deny root added hides the project from search, resolve and
// cursors taken before; an invalid edit keeps the last valid config and
// says so; removing a discovery root makes its projects leave at once.
func TestLiveConfig(t *testing.T) {
	t.Parallel()
	m := newMainTree(t)
	data := filepath.Join(m.base, ".data")
	path := cfg{DataDir: data, Roots: []string{m.base}}.write(t)
	p := serve(t, path)
	all := p.waitScanned()
	secret := all.byName("report-gen")
	if secret == nil {
		t.Fatal("fixture: report-gen not listed")
	}
	page1 := p.projects(map[string]any{"limit": 2})
	if page1.env.NextCursor == nil {
		t.Fatal("fixture: want a second page")
	}

	cfg{DataDir: data, Roots: []string{m.base}, Deny: []string{filepath.Join(m.base, "tools")}}.rewrite(t, path)
	if a := p.projects(map[string]any{"query": "report-gen"}); a.byName("report-gen") != nil {
		t.Fatalf("a deny root added to the config is still searchable:\n%s", a.text)
	}
	if a := p.resolve(map[string]any{"projectId": secret.ProjectID}); a.env.Status != server.StatusNotAvailable || len(a.env.Projects) != 0 {
		t.Fatalf("resolve of a newly denied project: %s\n%s", a.env.Status, a.text)
	}
	if a := p.projects(map[string]any{"limit": 2, "cursor": *page1.env.NextCursor}); a.env.Status != server.StatusCursorExpired {
		t.Fatalf("a cursor of the old view must expire, got %s", a.env.Status)
	}

	// An invalid edit: the last valid config stays in force, and answers say so.
	if err := os.WriteFile(path, []byte(`{"version": 1, "dataDir": "relative/dir"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(4 * time.Second)
	os.Chtimes(path, later, later)
	a := p.projects(map[string]any{"query": "report-gen"})
	if a.byName("report-gen") != nil || a.env.Message == "" || !contains(a.env.Message, "last valid configuration") {
		t.Fatalf("an invalid edit must keep the last valid config and say so:\n%s", a.text)
	}

	// Fixed, with the services folder as the only root: the rest leaves.
	cfg{DataDir: data, Roots: []string{filepath.Join(m.base, "services")}}.rewrite(t, path)
	os.Chtimes(path, later.Add(2*time.Second), later.Add(2*time.Second))
	a = p.projects(map[string]any{"limit": 50})
	for _, pr := range a.env.Projects {
		if pr.ProjectPath == nil || !within(filepath.Join(m.base, "services"), *pr.ProjectPath) {
			t.Fatalf("a project outside the only root left is still listed: %s", pr.Name)
		}
	}
	if a.env.Message != "" && contains(a.env.Message, "last valid configuration") {
		t.Fatalf("the fixed config is not in force: %s", a.env.Message)
	}
}

func contains(s, sub string) bool {
	return len(sub) == 0 || len(s) >= len(sub) && (s == sub || indexOf(s, sub) >= 0)
}

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !filepath.IsAbs(rel) && (len(rel) < 3 || rel[:3] != "../")
}
