package doctor

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestReportTextAndJSON(t *testing.T) {
	r := &Report{Version: "v1"}
	r.Add("config", []Check{Okf("config %s is valid", p("/a\x1b[31mb"))})
	c := Failf("upgrade CodeGraph", "backend_incompatible: no codegraph_explore")
	c.Code, c.Notes = "backend_incompatible", []string{"stderr: boom"}
	r.Add("codex", []Check{Infof("codex CLI: 0.171.0"), c, Warnf("", "approval: will ask")})
	if !r.Broken() || r.Problems != 1 || r.Warnings != 1 {
		t.Fatalf("counts %+v", r)
	}
	var text bytes.Buffer
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	want := "cgcat doctor (cgcat v1)\nconfig\n  ✓ config /a\\x1b[31mb is valid\ncodex\n  · codex CLI: 0.171.0\n  ✗ backend_incompatible: no codegraph_explore\n      stderr: boom\n      fix: upgrade CodeGraph\n  ! approval: will ask\nsummary: 1 problem(s) (✗) and 1 warning(s) (!); fix the ✗ lines above\n"
	if text.String() != want {
		t.Fatalf("text:\n%s\nwant:\n%s", text.String(), want)
	}
	var js bytes.Buffer
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var got struct {
		CgcatVersion string
		Problems     int
		Summary      string
		Sections     []struct {
			Title  string
			Checks []map[string]any
		}
	}
	if err := json.Unmarshal(js.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	ck := got.Sections[1].Checks[1]
	if got.CgcatVersion != "v1" || got.Problems != 1 || !strings.HasPrefix(got.Summary, "1 problem") || ck["status"] != "fail" || ck["code"] != "backend_incompatible" || ck["fix"] != "upgrade CodeGraph" {
		t.Fatalf("json:\n%s", js.String())
	}
}
