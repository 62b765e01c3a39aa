package meta_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/cgcat/cgcat/local/meta"
)

// TestHintUnknownKeys: a key the hint file does not know is reported with
// the known key it most likely means; the known keys around it still count.
func TestHintUnknownKeys(t *testing.T) {
	for _, tt := range []struct {
		name, hint string
		problems   []string
	}{
		{"one edit", `{"alias": ["acme"], "tags": ["go"]}`,
			[]string{`codegraph/project.json: unknown key "alias" (did you mean "aliases"?)`}},
		{"transposition", `{"tgas": ["go"]}`,
			[]string{`codegraph/project.json: unknown key "tgas" (did you mean "tags"?)`}},
		{"two slips", `{"ralatid": ["x"]}`,
			[]string{`codegraph/project.json: unknown key "ralatid" (did you mean "related"?)`}},
		{"three slips are not close", `{"rxlxtxd": ["x"]}`,
			[]string{`codegraph/project.json: unknown key "rxlxtxd" (known keys: name, aliases, description, tags, related)`}},
		{"a prefix", `{"desc": "x"}`,
			[]string{`codegraph/project.json: unknown key "desc" (did you mean "description"?)`}},
		{"a longer name", `{"relatedProjects": ["x"]}`,
			[]string{`codegraph/project.json: unknown key "relatedProjects" (did you mean "related"?)`}},
		{"nothing close", `{"owner": "me"}`,
			[]string{`codegraph/project.json: unknown key "owner" (known keys: name, aliases, description, tags, related)`}},
		{"case is not a typo", `{"Aliases": ["acme"], "TAGS": ["go"]}`, nil},
		{"many, bounded", `{"a1": 1, "a2": 2, "a3": 3, "a4": 4, "a5": 5}`, []string{
			`codegraph/project.json: unknown key "a1" (known keys: name, aliases, description, tags, related)`,
			`codegraph/project.json: unknown key "a2" (known keys: name, aliases, description, tags, related)`,
			`codegraph/project.json: unknown key "a3" (known keys: name, aliases, description, tags, related)`,
			"codegraph/project.json: 2 more unknown keys",
		}},
		{"an invisible character in a key", "{\"\\u202ealias\": 1}",
			[]string{`codegraph/project.json: unknown key "alias" (did you mean "aliases"?)`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := read(t, tree(t, "proj", map[string]string{"codegraph/project.json": tt.hint}), meta.Limits{})
			if !reflect.DeepEqual(m.Problems, tt.problems) {
				t.Errorf("problems %q, want %q", m.Problems, tt.problems)
			}
		})
	}
	// The known keys of a file with an unknown one are still used.
	m := read(t, tree(t, "proj", map[string]string{"codegraph/project.json": `{"alias": ["x"], "tags": ["go"], "Aliases": ["acme"]}`}), meta.Limits{})
	if !reflect.DeepEqual(m.Tags, []string{"go"}) || !reflect.DeepEqual(m.Aliases, []string{"acme"}) {
		t.Errorf("tags %q, aliases %q: the known keys were dropped", m.Tags, m.Aliases)
	}
	// A file that does not parse is one problem, not a list of keys.
	m = read(t, tree(t, "proj", map[string]string{"codegraph/project.json": `{"alias": [}`}), meta.Limits{})
	if len(m.Problems) != 1 || strings.Contains(m.Problems[0], "unknown key") {
		t.Errorf("problems %q", m.Problems)
	}
}
