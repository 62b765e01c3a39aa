package protocol

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cgcat/cgcat/server"
	"github.com/mark3labs/mcp-go/mcp"
)

// FuzzArguments: any JSON a client sends as a call's arguments either
// decodes into arguments within every published bound, or is refused with
// an ArgError that names the argument in readable words.
func FuzzArguments(f *testing.F) {
	for _, s := range []string{
		`{}`, `null`, `[]`, `"x"`, `5`, `{"limit":5}`, `{"limit":0}`, `{"limit":51}`, `{"limit":2.5}`,
		`{"limit":"5"}`, `{"limit":1e308}`, `{"limit":-0}`, `{"query":"订单 客户端","limit":50}`,
		`{"query":null,"cursor":null}`, `{"workspacePath":"rel/dir"}`, `{"workspacePath":"/abs"}`,
		`{"refresh":"true"}`, `{"bogus":1,"query":"x"}`, `{"projectId":"cg_aaaaaaaaaaaaaaaa","expectedRecordRevision":3}`,
		`{"projectId":"","expectedRecordRevision":0}`, `{"expectedRecordRevision":9007199254740993}`,
		`{"query":"` + strings.Repeat("a", 1001) + `"}`, `{"cursor":{"s":1}}`, `{"\u0000":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var v any
		if json.Unmarshal(data, &v) != nil {
			return
		}
		req := mcp.CallToolRequest{}
		req.Params.Arguments = v
		args, err := argsOf(req)
		if err != nil {
			checkArgError(t, err)
			return
		}
		if pa, err := ParseProjects(args); err != nil {
			checkArgError(t, err)
		} else if pa.Limit < 1 || pa.Limit > server.MaxLimit || utf8.RuneCountInString(pa.Query) > server.MaxQuery ||
			utf8.RuneCountInString(pa.Cursor) > server.MaxCursor || pa.WorkspacePath != "" && !filepath.IsAbs(pa.WorkspacePath) {
			t.Fatalf("out-of-range arguments accepted: %+v", pa)
		}
		if ra, err := ParseResolve(args); err != nil {
			checkArgError(t, err)
		} else if ra.ProjectID == "" || utf8.RuneCountInString(ra.ProjectID) > server.MaxProjectID {
			t.Fatalf("bad projectId accepted: %q", ra.ProjectID)
		}
	})
}

func checkArgError(t *testing.T, err error) {
	t.Helper()
	var ae *server.ArgError
	if !errors.As(err, &ae) {
		t.Fatalf("error %T is not an *ArgError: %v", err, err)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "invalid argument") || len(msg) > 400 || !utf8.ValidString(msg) {
		t.Fatalf("unhelpful error text: %q", msg)
	}
	if ae.Arg != "" && !strings.Contains(msg, strconv.Quote(ae.Arg)) {
		t.Fatalf("error does not name %q: %q", ae.Arg, msg)
	}
}

// TestToolsMarshal: both tool definitions go over the wire (a tool with a
// raw and a structured input schema cannot be marshalled, and tools/list
// then never answers).
func TestToolsMarshal(t *testing.T) {
	for _, open := range []bool{false, true} {
		for _, tool := range Tools(open) {
			b, err := json.Marshal(tool)
			if err != nil {
				t.Fatalf("%s: %v", tool.Name, err)
			}
			var m map[string]any
			_ = json.Unmarshal(b, &m)
			for _, k := range []string{"inputSchema", "outputSchema", "annotations"} {
				if _, ok := m[k]; !ok {
					t.Errorf("%s: no %s", tool.Name, k)
				}
			}
		}
	}
}
