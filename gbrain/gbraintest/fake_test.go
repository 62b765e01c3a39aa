package gbraintest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cgcat/cgcat/gbrain"
	"github.com/cgcat/cgcat/gbrain/gbraintest"
)

// These tests hold the fake to shared/GBRAIN.md with a plain mcp-go client,
// so that they do not depend on cgcat's own client.

func TestMain(m *testing.M) { os.Exit(gbraintest.Main(m)) }

var ctx = context.Background()

type raw struct {
	t *testing.T
	c *client.Client
}

func dialRaw(t *testing.T, f *gbraintest.Fake, env ...string) (*raw, *mcp.InitializeResult) {
	t.Helper()
	conn := f.Connection()
	for k, v := range conn.Env {
		env = append(env, k+"="+v)
	}
	c, err := client.NewStdioMCPClient(f.Bin, env, "serve")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	req.Params.ClientInfo = mcp.Implementation{Name: "test", Version: "1"}
	ictx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	res, err := c.Initialize(ictx, req)
	if err != nil {
		t.Fatal(err)
	}
	return &raw{t, c}, res
}

// call returns content[0] text, the other text blocks, and isError.
func (r *raw) call(tool string, args map[string]any) (string, []string, bool) {
	r.t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := r.c.CallTool(ctx, req)
	if err != nil {
		r.t.Fatalf("%s: %v", tool, err)
	}
	var texts []string
	for _, c := range res.Content {
		tc, ok := mcp.AsTextContent(c)
		if !ok {
			r.t.Fatalf("%s: non-text content", tool)
		}
		texts = append(texts, tc.Text)
	}
	if len(texts) == 0 {
		r.t.Fatalf("%s: no content", tool)
	}
	return texts[0], texts[1:], res.IsError
}

func (r *raw) json(tool string, args map[string]any, out any) {
	r.t.Helper()
	text, _, isErr := r.call(tool, args)
	if isErr {
		r.t.Fatalf("%s: error %s", tool, text)
	}
	if err := json.Unmarshal([]byte(text), out); err != nil {
		r.t.Fatalf("%s: %v: %s", tool, err, text)
	}
}

func (r *raw) errCode(tool string, args map[string]any) string {
	r.t.Helper()
	text, _, isErr := r.call(tool, args)
	if !isErr {
		r.t.Fatalf("%s: want an error, got %s", tool, text)
	}
	var e struct{ Error, Message string }
	if err := json.Unmarshal([]byte(text), &e); err != nil || e.Error == "" || e.Message == "" {
		r.t.Fatalf("%s: error text is not {error, message}: %s", tool, text)
	}
	return e.Error
}

type put struct {
	Slug, Status string
	Chunks       int
}

func TestFakeHandshake(t *testing.T) {
	f := gbraintest.New(t)
	_, res := dialRaw(t, f)
	if res.ProtocolVersion != "2025-06-18" || res.ServerInfo.Name != "gbrain" || res.ServerInfo.Version != "0.46.28.0" {
		t.Errorf("initialize %+v", res)
	}
}

func TestFakeSlugsAndReserialisation(t *testing.T) {
	f := gbraintest.New(t)
	r, _ := dialRaw(t, f)
	written := "---\ntitle: 'Mixed: case'\nzeta: 1\nalpha: two words\ndate: 2024-01-02\nslug: ignored\nlist: [b, a]\ntags: [x, y]\n---\n\n\n  Body text.  \n\n"
	var p put
	r.json("put_page", map[string]any{"slug": "Notes/Mixed", "content": written}, &p)
	if p.Slug != "notes/mixed" || p.Status != "created_or_updated" || p.Chunks != 1 {
		t.Fatalf("put %+v", p)
	}
	if code := r.errCode("get_page", map[string]any{"slug": "Notes/Mixed"}); code != "page_not_found" {
		t.Errorf("uppercase read: %s", code)
	}
	var page map[string]any
	r.json("get_page", map[string]any{"slug": "notes/mixed", "include_content": true}, &page)
	want := "---\ntype: note\ntitle: 'Mixed: case'\ndate: '2024-01-02T00:00:00.000Z'\nlist:\n  - b\n  - a\nzeta: 1\nalpha: two words\ntags:\n  - x\n  - y\n---\n\nBody text.\n"
	if page["content"] != want {
		t.Errorf("content:\n%q\nwant\n%q", page["content"], want)
	}
	for _, k := range []string{"id", "slug", "type", "title", "compiled_truth", "frontmatter", "content_hash", "created_at", "updated_at", "deleted_at", "source_id", "tags"} {
		if _, ok := page[k]; !ok {
			t.Errorf("get_page lacks %s", k)
		}
	}
	if page["source_id"] != "default" || page["compiled_truth"] != "Body text." {
		t.Errorf("page %v", page)
	}
	var bare map[string]any
	r.json("get_page", map[string]any{"slug": "notes/mixed"}, &bare)
	if _, ok := bare["content"]; ok {
		t.Error("content without include_content")
	}

	// Writing the read-back form back makes a new version; the second time
	// it is skipped.
	for i, wantStatus := range []string{"created_or_updated", "skipped", "skipped"} {
		r.json("put_page", map[string]any{"slug": "notes/mixed", "content": want}, &p)
		if p.Status != wantStatus {
			t.Errorf("write-back %d: %s, want %s", i, p.Status, wantStatus)
		}
		r.json("get_page", map[string]any{"slug": "notes/mixed", "include_content": true}, &page)
		if page["content"] != want {
			t.Errorf("write-back %d changed the content: %q", i, page["content"])
		}
	}
	if v := f.Page(t, "default", "notes/mixed").Versions; v != 1 {
		t.Errorf("versions %d", v)
	}

	// Invalid slugs and frontmatter.
	for _, slug := range []string{"", "/abs", "a/../b", "a\\b", "a%2Fb", "a\u202eb", "a\x01b"} {
		if code := r.errCode("put_page", map[string]any{"slug": slug, "content": "x"}); code != "internal_error" {
			t.Errorf("slug %q: %s", slug, code)
		}
	}
	text, _, isErr := r.call("put_page", map[string]any{"slug": "notes/bad", "content": "---\na: b: c\n---\nx"})
	if isErr || !strings.Contains(text, `"status": "error"`) {
		t.Errorf("invalid YAML: %v %s", isErr, text)
	}
	// Empty content over an existing page needs allow_empty.
	if code := r.errCode("put_page", map[string]any{"slug": "notes/mixed", "content": ""}); code != "invalid_params" {
		t.Errorf("empty overwrite: %s", code)
	}
	r.json("put_page", map[string]any{"slug": "notes/mixed", "content": "", "allow_empty": true}, &p)
}

func TestFakeTagsIDsAndDelete(t *testing.T) {
	f := gbraintest.New(t)
	r, _ := dialRaw(t, f)
	var p put
	r.json("put_page", map[string]any{"slug": "a/one", "content": "---\nid: shared\ntags: [t1, t2]\n---\nalpha words"}, &p)
	// Tags only grow through put_page.
	r.json("put_page", map[string]any{"slug": "a/one", "content": "---\nid: shared\ntags: [t1]\n---\nalpha words again"}, &p)
	var tags []string
	r.json("get_tags", map[string]any{"slug": "a/one"}, &tags)
	if !reflect.DeepEqual(tags, []string{"t1", "t2"}) {
		t.Errorf("tags %v", tags)
	}
	r.json("remove_tag", map[string]any{"slug": "a/one", "tag": "t2"}, &map[string]any{})
	r.json("get_tags", map[string]any{"slug": "a/one"}, &tags)
	if !reflect.DeepEqual(tags, []string{"t1"}) {
		t.Errorf("tags after remove %v", tags)
	}
	// A second slug with the same frontmatter id is skipped, naming the first.
	r.json("put_page", map[string]any{"slug": "a/two", "content": "---\nid: shared\n---\nother"}, &p)
	if p.Slug != "a/one" || p.Status != "skipped" || f.Page(t, "default", "a/two") != nil {
		t.Errorf("id de-duplication: %+v", p)
	}
	// Fuzzy get: one match answers the page, several an ambiguous_slug
	// answer that is not flagged isError.
	r.json("put_page", map[string]any{"slug": "a/three", "content": "beta"}, &p)
	var amb struct {
		Error      string
		Candidates []string
	}
	text, _, isErr := r.call("get_page", map[string]any{"slug": "a/", "fuzzy": true})
	if err := json.Unmarshal([]byte(text), &amb); err != nil || isErr || amb.Error != "ambiguous_slug" || len(amb.Candidates) != 2 {
		t.Errorf("ambiguous fuzzy get: %v %s", isErr, text)
	}

	// Soft delete hides the page from get, list and search; a put revives it.
	var del map[string]any
	r.json("delete_page", map[string]any{"slug": "a/one"}, &del)
	if del["status"] != "soft_deleted" || del["slug"] != "a/one" {
		t.Errorf("delete_page answered %v", del)
	}
	r.json("delete_page", map[string]any{"slug": "a/one"}, &del)
	if del["status"] != "already_soft_deleted" || del["deleted_at"] == nil {
		t.Errorf("second delete_page answered %v", del)
	}
	if code := r.errCode("delete_page", map[string]any{"slug": "a/never"}); code != "page_not_found" {
		t.Errorf("delete of an unknown page: %s", code)
	}
	if code := r.errCode("get_page", map[string]any{"slug": "a/one"}); code != "page_not_found" {
		t.Errorf("deleted get: %s", code)
	}
	var page map[string]any
	r.json("get_page", map[string]any{"slug": "a/one", "include_deleted": true}, &page)
	if page["deleted_at"] == nil {
		t.Error("deleted_at not set")
	}
	var rows []map[string]any
	r.json("list_pages", map[string]any{}, &rows)
	if len(rows) != 1 || rows[0]["slug"] != "a/three" {
		t.Errorf("list after delete %v", rows)
	}
	text, extra, _ := r.call("search", map[string]any{"query": "alpha"})
	if strings.TrimSpace(text) != "[]" || len(extra) != 1 || !strings.HasPrefix(extra[0], "0 results.") {
		t.Errorf("search after delete: %s %v", text, extra)
	}
	r.json("put_page", map[string]any{"slug": "a/one", "content": "---\nid: shared\n---\nalpha back"}, &p)
	r.json("get_page", map[string]any{"slug": "a/one"}, &page)
	if page["deleted_at"] != nil {
		t.Error("put did not revive the page")
	}
}

func TestFakeListPagingAndParams(t *testing.T) {
	f := gbraintest.New(t)
	for i := 0; i < 120; i++ {
		f.Put(t, "default", fmt.Sprintf("cards/p%03d", i), fmt.Sprintf("---\ntags: [card]\n---\ncard %d", i))
	}
	f.Put(t, "default", "people/ann", "---\ntags: [person]\n---\nAnn")
	r, _ := dialRaw(t, f)
	var rows []map[string]any
	text, extra, _ := r.call("list_pages", map[string]any{"tag": "card", "sort": "slug", "limit": 500, "prefix": "people/"})
	if err := json.Unmarshal([]byte(text), &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 100 || rows[0]["slug"] != "cards/p000" || rows[99]["slug"] != "cards/p099" {
		t.Errorf("first page: %d rows", len(rows))
	}
	if len(extra) != 1 || !strings.Contains(extra[0], `unknown parameter "prefix" ignored`) {
		t.Errorf("warning %v", extra)
	}
	r.json("list_pages", map[string]any{"tag": "card", "sort": "slug", "limit": 100, "offset": 100}, &rows)
	if len(rows) != 20 || rows[19]["slug"] != "cards/p119" {
		t.Errorf("second page: %d rows", len(rows))
	}
	for _, k := range []string{"slug", "source_id", "type", "title", "updated_at"} {
		if _, ok := rows[0][k]; !ok {
			t.Errorf("row lacks %s", k)
		}
	}
	r.json("list_pages", map[string]any{}, &rows)
	if len(rows) != 50 || rows[0]["slug"] != "people/ann" {
		t.Errorf("default list: %d rows, first %v", len(rows), rows[0]["slug"])
	}
	f.SetControl(t, gbraintest.Control{StrictParams: true})
	if code := r.errCode("list_pages", map[string]any{"prefix": "x"}); code != "invalid_params" {
		t.Errorf("strict params: %s", code)
	}
	if n := f.Calls(t)["list_pages"]; n != 4 {
		t.Errorf("list_pages calls %d", n)
	}
}

func TestFakeSourcesAndSharedState(t *testing.T) {
	f := gbraintest.New(t, "cards")
	// A malformed GBRAIN_SOURCE is ignored silently: writes go to default.
	bad, _ := dialRaw(t, f, "GBRAIN_SOURCE=Bad_Source")
	var p put
	bad.json("put_page", map[string]any{"slug": "x/one", "content": "one"}, &p)
	if f.Page(t, "default", "x/one") == nil {
		t.Error("malformed source did not fall back to default")
	}
	// Well-formed but unregistered: every put fails its foreign key.
	unreg, _ := dialRaw(t, f, "GBRAIN_SOURCE=nope")
	text, _, isErr := unreg.call("put_page", map[string]any{"slug": "x/one", "content": "one"})
	if !isErr || !strings.Contains(text, "pages_source_id_fkey") || !strings.Contains(text, "internal_error") {
		t.Errorf("unregistered source: %s", text)
	}
	var srcs struct{ Sources []map[string]any }
	unreg.json("sources_list", map[string]any{}, &srcs)
	if len(srcs.Sources) != 2 {
		t.Errorf("sources %v", srcs)
	}
	unreg.json("sources_add", map[string]any{"id": "nope"}, &map[string]any{})
	unreg.json("put_page", map[string]any{"slug": "x/one", "content": "one"}, &p)
	if p.Status != "created_or_updated" {
		t.Errorf("after sources_add: %+v", p)
	}

	// Two processes share one state; a restart keeps it.
	a, _ := dialRaw(t, f, "GBRAIN_SOURCE=cards")
	b, _ := dialRaw(t, f, "GBRAIN_SOURCE=cards")
	a.json("put_page", map[string]any{"slug": "x/shared", "content": "shared"}, &p)
	var page map[string]any
	b.json("get_page", map[string]any{"slug": "x/shared"}, &page)
	if page["source_id"] != "cards" {
		t.Errorf("page %v", page)
	}
	a.c.Close()
	c, _ := dialRaw(t, f, "GBRAIN_SOURCE=cards")
	c.json("get_page", map[string]any{"slug": "x/shared"}, &page)

	// Without GBRAIN_SOURCE, a .gbrain-source file in the working
	// directory or a parent picks the source (cgcat's client passes Cwd).
	dir := filepath.Join(f.Dir, "work", "sub")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.Dir, "work", ".gbrain-source"), []byte("cards\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	conn := f.Connection()
	conn.Cwd = dir
	cl, err := gbrain.Dial(ctx, conn, gbrain.Options{HandshakeTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	starts := f.Starts(t)
	last := starts[len(starts)-1]
	if last.Cwd != dir || last.Source != "cards" || last.EnvSource != "" || last.SkipHooks != "1" {
		t.Errorf("start %+v", last)
	}
}
