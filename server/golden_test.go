package server_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// normaliser replaces what differs from run to run (ids, machine id, times,
// temp paths, cursors, revisions) with stable placeholders.
type normaliser struct {
	base    string
	ids     map[string]string // projectId → placeholder
	machine string
}

var (
	reValidated = regexp.MustCompile(`validatedAt=\S+`)
	reCursor    = regexp.MustCompile(`cursor=\S+`)
	reRevision  = regexp.MustCompile(`catalog revision \d+`)
	reID        = regexp.MustCompile(`cg_[a-z2-7]{16}`)
)

func (n *normaliser) str(s string) string {
	s = strings.ReplaceAll(s, n.base, "$BASE")
	if n.machine != "" {
		s = strings.ReplaceAll(s, n.machine, "<machineId>")
	}
	return reID.ReplaceAllStringFunc(s, func(id string) string {
		if p, ok := n.ids[id]; ok {
			return p
		}
		return id // an id we made up in the test: stable already
	})
}

func (n *normaliser) value(key string, v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, vv := range x {
			out[k] = n.value(k, vv)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = n.value(key, x[i])
		}
		return out
	case string:
		switch key {
		case "validatedAt":
			return "<validatedAt>"
		case "nextCursor":
			return "<cursor>"
		case "machineId":
			if x != "" {
				return "<machineId>"
			}
		}
		return n.str(x)
	case float64:
		if key == "catalogRevision" && x > 0 {
			return "<revision>"
		}
	}
	return v
}

func (n *normaliser) answer(a answer) []byte {
	var b bytes.Buffer
	if a.res.IsError {
		b.WriteString("# isError\n")
	} else {
		b.WriteString("# structuredContent\n")
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		_ = enc.Encode(n.value("", a.raw))
	}
	b.WriteString("# text\n")
	t := reValidated.ReplaceAllString(a.text, "validatedAt=<validatedAt>")
	t = reCursor.ReplaceAllString(t, "cursor=<cursor>")
	t = reRevision.ReplaceAllString(t, "catalog revision <revision>")
	b.WriteString(n.str(t))
	if !strings.HasSuffix(t, "\n") {
		b.WriteString("\n")
	}
	return b.Bytes()
}

func golden(t *testing.T, n *normaliser, name string, a answer) {
	t.Helper()
	got := n.answer(a)
	path := filepath.Join(moduleRoot(), "testdata", "golden", name+".golden")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run `go test ./server -run TestGolden -update` to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from %s (rerun with -update if the change is intended)\n--- got\n%s\n--- want\n%s", name, path, got, want)
	}
}

// TestGoldenEnvelopes pins the envelopes and texts of every status.
func TestGoldenEnvelopes(t *testing.T) {
	t.Parallel()
	m := newMainTree(t)
	data := filepath.Join(m.base, ".data")
	p := serve(t, cfg{DataDir: data, Roots: []string{m.base}}.write(t))
	all := p.waitScanned()
	n := &normaliser{base: m.base, ids: map[string]string{}, machine: all.env.MachineID}
	id := map[string]string{}
	for _, pr := range all.env.Projects {
		id[pr.Name] = pr.ProjectID
		n.ids[pr.ProjectID] = "<id " + pr.Name + ">"
	}

	page1 := p.projects(map[string]any{"limit": 2})
	golden(t, n, "projects_page1", page1)
	golden(t, n, "projects_page2", p.projects(map[string]any{"limit": 2, "cursor": *page1.env.NextCursor}))
	golden(t, n, "projects_exact_package", p.projects(map[string]any{"query": "@company/order-sdk"}))
	golden(t, n, "projects_chinese", p.projects(map[string]any{"query": "订单 客户端"}))
	golden(t, n, "projects_no_matches", p.projects(map[string]any{"query": "zyxwvut"}))
	golden(t, n, "projects_cursor_expired", p.projects(map[string]any{"cursor": "bm90IGEgY3Vyc29y.AAAA"}))
	golden(t, n, "projects_workspace", p.projects(map[string]any{"workspacePath": filepath.Join(m.payments, "cmd"), "limit": 50}))
	golden(t, n, "resolve_ok", p.resolve(map[string]any{"projectId": id["pay-gateway"]}))
	golden(t, n, "resolve_unknown_project", p.resolve(map[string]any{"projectId": "cg_aaaaaaaaaaaaaaaa"}))
	golden(t, n, "resolve_path_as_id", p.resolve(map[string]any{"projectId": m.payments}))
	golden(t, n, "resolve_record_changed", p.resolve(map[string]any{"projectId": id["payments"], "expectedRecordRevision": 7}))
	golden(t, n, "error_limit", p.projects(map[string]any{"limit": 51}))
	golden(t, n, "error_unknown_argument", p.projects(map[string]any{"projectPath": "/x"}))
	golden(t, n, "error_project_id_missing", p.resolve(map[string]any{}))
	if err := os.RemoveAll(filepath.Join(m.reportGen, ".codegraph")); err != nil {
		t.Fatal(err)
	}
	golden(t, n, "resolve_missing", p.resolve(map[string]any{"projectId": id["report-gen"]}))
	p.Close()

	deny := serve(t, cfg{DataDir: data, Roots: []string{m.base}, Deny: []string{filepath.Join(m.base, "tools")}}.write(t))
	deny.waitScanned()
	golden(t, n, "resolve_not_available", deny.resolve(map[string]any{"projectId": id["report-gen"]}))
	deny.Close()

	browse := serve(t, cfg{DataDir: data, Roots: []string{m.base}, HidePaths: true}.write(t))
	browse.waitScanned()
	golden(t, n, "projects_browse_only", browse.projects(map[string]any{"query": "pay-gateway", "limit": 1}))
	browse.Close()

	setup := serve(t, cfg{DataDir: data}.write(t))
	golden(t, n, "projects_setup_required", setup.projects(nil))
}
