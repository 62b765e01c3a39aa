package gbraintest_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cgcat/cgcat/gbrain/gbraintest"
)

// dialRawInProcess is dialRaw for an in-process fake serving source.
func dialRawInProcess(t *testing.T, f *gbraintest.Fake, source string) *raw {
	t.Helper()
	c := client.NewClient(f.RawTransport(source))
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	req.Params.ClientInfo = mcp.Implementation{Name: "test", Version: "1"}
	if _, err := c.Initialize(ctx, req); err != nil {
		t.Fatal(err)
	}
	return &raw{t, c}
}

// A script of calls covering what cgcat meets (writes, re-serialisation,
// tags, id de-duplication, paging, updated_after, search, soft delete,
// errors): the in-process fake answers it as the process does, byte for
// byte once the clock's readings are masked.
func TestInProcessFakeAnswersAsTheProcess(t *testing.T) {
	type call struct {
		tool string
		args map[string]any
	}
	script := []call{
		{"put_page", map[string]any{"slug": "Cards/One", "content": "---\ntitle: 'One: x'\nzeta: 1\ntags: [card, b]\n---\n\n alpha words \n"}},
		{"put_page", map[string]any{"slug": "cards/two", "content": "---\nid: same\ntags: [card]\n---\nbeta"}},
		{"put_page", map[string]any{"slug": "cards/three", "content": "---\nid: same\n---\ngamma"}},
		{"put_page", map[string]any{"slug": "cards/one", "content": "---\ntitle: 'One: x'\nzeta: 1\ntags: [card]\n---\nalpha words"}},
		{"get_page", map[string]any{"slug": "cards/one", "include_content": true}},
		{"get_page", map[string]any{"slug": "Cards/One"}},
		{"get_page", map[string]any{"slug": "cards/", "fuzzy": true}},
		{"list_pages", map[string]any{"tag": "card", "sort": "slug", "limit": 1, "offset": 1}},
		{"list_pages", map[string]any{"tag": "card", "sort": "updated_asc", "updated_after": "2000-01-01"}},
		{"list_pages", map[string]any{"updated_after": "not a time"}},
		{"list_pages", map[string]any{"prefix": "x"}},
		{"search", map[string]any{"query": "alpha nothing"}},
		{"search", map[string]any{"query": "zzz"}},
		{"delete_page", map[string]any{"slug": "cards/two"}},
		{"delete_page", map[string]any{"slug": "cards/two"}},
		{"get_page", map[string]any{"slug": "cards/two", "include_deleted": true}},
		{"list_pages", map[string]any{"tag": "card"}},
		{"put_page", map[string]any{"slug": "a/../b", "content": "x"}},
		{"get_tags", map[string]any{"slug": "cards/one"}},
		{"sources_list", map[string]any{}},
	}
	clock := regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z`)
	run := func(r *raw) []string {
		var out []string
		for _, c := range script {
			text, extra, isErr := r.call(c.tool, c.args)
			out = append(out, fmt.Sprintf("%s %v\n%s\n%s", c.tool, isErr, clock.ReplaceAllString(text, "TIME"), strings.Join(extra, "\n")))
		}
		return out
	}
	proc := gbraintest.New(t, "cards")
	pr, _ := dialRaw(t, proc, "GBRAIN_SOURCE=cards")
	want := run(pr)
	inproc := gbraintest.NewInProcess(t, "cards")
	got := run(dialRawInProcess(t, inproc, "cards"))
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("call %d answers differently\nin process:\n%s\nprocess:\n%s", i, got[i], want[i])
		}
	}
	if p, q := proc.Calls(t), inproc.Calls(t); fmt.Sprint(p) != fmt.Sprint(q) {
		t.Errorf("call counts differ: process %v, in process %v", p, q)
	}
}

// list_pages' updated_after keeps pages updated strictly later than the
// given time, at GBrain's µs (so a page written in the same millisecond
// after the one a client saw is not missed), and a soft delete does not
// move updated_at: deletions never show in an updated_after listing.
func TestFakeUpdatedAfter(t *testing.T) {
	for _, inproc := range []bool{false, true} {
		t.Run(fmt.Sprintf("inProcess=%v", inproc), func(t *testing.T) {
			var f *gbraintest.Fake
			var r *raw
			if inproc {
				f = gbraintest.NewInProcess(t)
				r = dialRawInProcess(t, f, "default")
			} else {
				f = gbraintest.New(t)
				r, _ = dialRaw(t, f)
			}
			for i := range 5 {
				r.json("put_page", map[string]any{"slug": fmt.Sprintf("c/p%d", i), "content": fmt.Sprintf("---\ntags: [card]\n---\ncard %d", i)}, &put{})
			}
			var rows []struct {
				Slug      string `json:"slug"`
				UpdatedAt string `json:"updated_at"`
			}
			r.json("list_pages", map[string]any{"tag": "card", "sort": "updated_asc"}, &rows)
			if len(rows) != 5 {
				t.Fatalf("rows %v", rows)
			}
			mark := rows[2].UpdatedAt
			at, _ := time.Parse(time.RFC3339Nano, mark)
			var want []string // strictly later at µs: p3, p4, and any page of mark's millisecond past its first µs
			for _, p := range f.Pages(t) {
				if p.UpdatedMicro > at.UnixMicro() {
					want = append(want, p.Slug)
				}
			}
			r.json("list_pages", map[string]any{"tag": "card", "sort": "updated_asc", "updated_after": mark}, &rows)
			var got []string
			for _, row := range rows {
				got = append(got, row.Slug)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) || !strings.Contains(fmt.Sprint(got), "c/p3 c/p4") {
				t.Errorf("updated_after %s: %v, want %v", mark, got, want)
			}
			r.json("list_pages", map[string]any{"tag": "card", "updated_after": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}, &rows)
			if len(rows) != 0 {
				t.Errorf("nothing is later than an hour from now: %v", rows)
			}
			r.json("list_pages", map[string]any{"tag": "card", "sort": "updated_asc"}, &rows)
			last := rows[len(rows)-1].UpdatedAt
			r.json("delete_page", map[string]any{"slug": "c/p4"}, &map[string]any{})
			r.json("list_pages", map[string]any{"tag": "card", "include_deleted": true, "updated_after": last}, &rows)
			for _, row := range rows {
				if row.Slug == "c/p4" && row.UpdatedAt != last {
					t.Errorf("a soft delete moved updated_at: %v", rows)
				}
			}
			r.json("put_page", map[string]any{"slug": "c/p0", "content": "---\ntags: [card]\n---\ncard 0 changed"}, &put{})
			r.json("list_pages", map[string]any{"tag": "card", "sort": "updated_asc", "updated_after": last}, &rows)
			if len(rows) == 0 || rows[len(rows)-1].Slug != "c/p0" {
				t.Errorf("a later write is listed: %v", rows)
			}
			var raw json.RawMessage
			r.json("list_pages", map[string]any{"updated_after": "2026-01-02"}, &raw)
			if code := r.errCode("list_pages", map[string]any{"updated_after": "yesterday"}); code != "internal_error" {
				t.Errorf("a malformed time: %s", code)
			}
		})
	}
}
