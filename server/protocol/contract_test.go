package protocol

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cgcat/cgcat/server"
)

// contractRules is seed 000 section 7, rule by rule: the text that carries
// each rule and words it must hold there. "projects" and "resolve" are the
// tool descriptions, "instructions" the server's instructions, "answer" the
// text of an answer with look-alike candidates.
var contractRules = []struct {
	rule  string
	where string
	words []string
}{
	{"catalog finds projects only", "instructions", []string{"only finds local projects", "code facts come from the native CodeGraph"}},
	{"hosts prefix tool names", "instructions", []string{"Hosts prefix tool names", "use the names in your tool list"}},
	{"main workspace: native first", "instructions", []string{"Current workspace: call codegraph_explore directly, no catalog call"}},
	{"main workspace: native first", "projects", []string{"for the current workspace call codegraph_explore directly"}},
	{"projectPath unchanged, never projectId", "instructions", []string{"pass its projectPath unchanged to codegraph_explore", "never pass projectId", "never append .codegraph"}},
	{"projectPath unchanged, never projectId", "projects", []string{"projectPath unchanged as projectPath to the native CodeGraph tool codegraph_explore", "never pass projectId"}},
	{"projectPath unchanged, never projectId", "answer", []string{"pass its projectPath unchanged", "never the projectId"}},
	{"tell look-alikes apart, never at random", "instructions", []string{"tell them apart by package, purpose, version, branch and path", "never pick at random"}},
	{"tell look-alikes apart, never at random", "projects", []string{"tell them apart by package, purpose, version, branch and path before choosing", "never pick at random"}},
	{"tell look-alikes apart, never at random", "answer", []string{"choose by package, purpose, version, branch and path, never at random", "differs by version", "same commit as #3 (equivalent code)"}},
	{"saved ids are resolved first", "instructions", []string{"A saved projectId", "GBrain card", "local_codegraph_resolve it first"}},
	{"saved ids are resolved first", "resolve", []string{"saved projectId", "GBrain card", "Takes an id, never a path"}},
	{"report a gap instead of indexing", "instructions", []string{"codegraph_explore missing or without projectPath: report the gap", "do not ask the catalog for code, install or index anything"}},
	{"respect warnings; empty is no proof", "instructions", []string{"Respect CodeGraph's warnings", "never work around a refusal", "an empty result is no proof that code does not exist"}},
	{"respect warnings; empty is no proof", "projects", []string{"no match is no proof the code does not exist"}},
	{"final answer names sources; links are inference", "instructions", []string{"name the project, files and symbols", "any warning", "are inference", "no cross-repository edges"}},
	{"final answer names sources; links are inference", "answer", []string{"Name the project, files and symbols in your answer"}},
}

// contractAnswer is an answer with two checkouts of one package and two
// clones of one commit, as server.Text renders it.
func contractAnswer() string {
	path := func(s string) *string { return &s }
	p := func(id, root, version, commit string, l *server.Lookalike) server.Project {
		return server.Project{ProjectID: id, RecordRevision: 1, Name: "@acme/sdk", Reason: []string{}, ProjectPath: path(root),
			Availability: "present", IndexState: "marker_present", Freshness: "unknown", Packages: []string{"@acme/sdk"},
			Version: version, Commit: commit, Lookalike: l,
			Handoff: &server.Handoff{MCPServerHint: "codegraph", ToolName: "codegraph_explore", Arguments: map[string]string{"projectPath": root}, RequiredFromAgent: []string{"query"}}}
	}
	e := &server.Envelope{SchemaVersion: 1, Status: server.StatusOK, Projects: []server.Project{
		p("cg_a", "/code/sdk", "2.1.0", "", &server.Lookalike{Of: []string{"cg_b", "cg_c"}, DiffersBy: []string{"version"}}),
		p("cg_b", "/code/old/sdk", "1.4.0", "0123456789abcdef0123456789abcdef01234567", &server.Lookalike{Of: []string{"cg_a", "cg_c"}, DiffersBy: []string{"version"}, SameCommitAs: []string{"cg_c"}}),
		p("cg_c", "/code/copy/sdk", "1.4.0", "0123456789abcdef0123456789abcdef01234567", &server.Lookalike{Of: []string{"cg_a", "cg_b"}, DiffersBy: []string{"version"}, SameCommitAs: []string{"cg_b"}}),
	}}
	return server.Text(e)
}

// TestContractInWhatTheModelReads: every rule of seed section 7 is in the
// text that carries it. Removing a rule's line fails here.
func TestContractInWhatTheModelReads(t *testing.T) {
	texts := map[string]string{"answer": contractAnswer(), "instructions": Instructions}
	for _, tl := range Tools(false) {
		texts[strings.TrimPrefix(tl.Name, "local_codegraph_")] = tl.Description
	}
	for _, r := range contractRules {
		for _, w := range r.words {
			if !strings.Contains(texts[r.where], w) {
				t.Errorf("rule %q: the %s text lacks %q:\n%s", r.rule, r.where, w, texts[r.where])
			}
		}
	}
	// The instructions are short imperative lines, one rule each.
	for _, line := range strings.Split(Instructions, "\n") {
		if len(line) > 220 {
			t.Errorf("instruction line of %d bytes (keep each under 220): %q", len(line), line)
		}
	}
}

// TestContractBudget: the text every model request carries stays within
// the budgets set in contract.go. The figures are logged for PERFORMANCE.md.
func TestContractBudget(t *testing.T) {
	desc, schemas := 0, 0
	for _, tl := range Tools(false) {
		desc += len(tl.Description)
		schemas += len(tl.RawInputSchema)
		b, _ := json.Marshal(tl)
		t.Logf("%s: description %d bytes, input schema %d bytes, whole definition %d bytes", tl.Name, len(tl.Description), len(tl.RawInputSchema), len(b))
	}
	t.Logf("descriptions %d bytes (budget %d), instructions %d bytes (budget %d), input schemas %d bytes", desc, DescriptionBudget, len(Instructions), InstructionsBudget, schemas)
	if desc > DescriptionBudget {
		t.Errorf("tool descriptions take %d bytes, over the budget of %d", desc, DescriptionBudget)
	}
	if len(Instructions) > InstructionsBudget {
		t.Errorf("instructions take %d bytes, over the budget of %d", len(Instructions), InstructionsBudget)
	}
}
