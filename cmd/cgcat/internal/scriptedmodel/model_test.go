package scriptedmodel

import (
	"strings"
	"testing"
)

func TestProjectPathAsHostsRenderIt(t *testing.T) {
	env := `{"status":"ok","projects":[{"projectId":"cg_1","projectPath":"/code/b sdk"},{"projectPath":"/code/c"}]}`
	for name, result := range map[string]string{
		"structured (Claude Code)": env,
		"after a preamble (Codex)": "Wall time: 0.01 seconds\nOutput:\n" + env,
		"text (OpenCode)":          "status: ok — 2 project(s)\n\n1. \"b\"  projectId=cg_1 recordRevision=1\n   projectPath: /code/b sdk\n   state: x\n2. \"c\"  projectId=cg_2 recordRevision=1\n   projectPath: /code/c\n",
		"wrapped text (Gemini)":    `{"output":"<untrusted_context>\nstatus: ok\n1. \"b\"  projectId=cg_1 recordRevision=1\n   projectPath: /code/b sdk\n</untrusted_context>"}`,
	} {
		if got := ProjectPath(result); got != "/code/b sdk" {
			t.Errorf("%s: ProjectPath = %q", name, got)
		}
	}
	if got := ProjectPath(`{"status":"no_matches","projects":[]}`); got != "" {
		t.Errorf("no project: %q", got)
	}
}

// TestCandidatesSideBySide: versions and equivalent clones are read from
// the structured envelope and from the text alike.
func TestCandidatesSideBySide(t *testing.T) {
	env := `{"projects":[{"projectId":"cg_a","name":"@acme/sdk","projectPath":"/a","version":"1.4.0"},` +
		`{"projectId":"cg_b","name":"@acme/sdk","projectPath":"/b","version":"2.1.0","lookalike":{"of":["cg_a","cg_c"],"differsBy":["version"],"sameCommitAs":["cg_c"]}},` +
		`{"projectId":"cg_c","name":"@acme/sdk","projectPath":"/c","version":"2.1.0","lookalike":{"of":["cg_a","cg_b"],"differsBy":["version"],"sameCommitAs":["cg_b"]}}]}`
	text := "status: ok — 3 project(s)\n\n" +
		"1. \"@acme/sdk\"  projectId=cg_a recordRevision=1\n   projectPath: /a\n   version: \"1.4.0\"\n   look-alike of #2, #3: differs by version\n\n" +
		"2. \"@acme/sdk\"  projectId=cg_b recordRevision=1\n   projectPath: /b\n   version: \"2.1.0\"\n   look-alike of #1, #3: differs by version; same commit as #3 (equivalent code)\n\n" +
		"3. \"@acme/sdk\"  projectId=cg_c recordRevision=1\n   projectPath: /c\n   version: \"2.1.0\"\n   look-alike of #1, #2: differs by version; same commit as #2 (equivalent code)\n"
	for name, result := range map[string]string{"json": env, "text": text} {
		cs := Candidates(result)
		if len(cs) != 3 || cs[0].Version != "1.4.0" || cs[1].Version != "2.1.0" || cs[1].SameCommitAs[0] != "cg_c" || cs[0].Name != "@acme/sdk" {
			t.Fatalf("%s: %+v", name, cs)
		}
		if c, gap := choose(cs, "1.4.0"); gap != "" || c.Path != "/a" {
			t.Errorf("%s: version 1.4.0 gave %+v %q", name, c, gap)
		}
		if c, gap := choose(cs, "2.1.0"); gap != "" || c.Path != "/b" {
			t.Errorf("%s: version 2.1.0 (two equivalent clones) gave %+v %q", name, c, gap)
		}
	}
	// Without versions the candidates cannot be told apart: a gap.
	noVersions := strings.NewReplacer(`"version":"1.4.0",`, "", `"version":"2.1.0",`, "").Replace(env)
	if c, gap := choose(Candidates(noVersions), "2.1.0"); gap == "" {
		t.Errorf("without versions: chose %+v", c)
	}
}

func TestDecide(t *testing.T) {
	tools := []Tool{{Namespace: "mcp__cat", Name: "local_codegraph_projects"}, {Namespace: "mcp__cat", Name: "local_codegraph_resolve"}, {Namespace: "mcp__cg", Name: "codegraph_explore"}}
	turn := Turn{Prompt: Prompt("@fruit/b", "Client"), Tools: tools}
	r := decide(&turn)
	if r.Call == nil || r.Call.Tool.FullName() != "mcp__cat.local_codegraph_projects" || r.Call.Args["query"] != "@fruit/b" {
		t.Fatalf("turn 1: %+v", r)
	}
	turn.Results = []Result{{Tool: "mcp__cat.local_codegraph_projects", Text: "1. \"b\"  projectId=cg_b recordRevision=1\n   projectPath: /code/b\n"}}
	r = decide(&turn)
	if r.Call == nil || r.Call.Tool.Name != "codegraph_explore" || r.Call.Args["projectPath"] != "/code/b" || r.Call.Args["query"] != "Client" {
		t.Fatalf("turn 2: %+v", r)
	}
	turn.Results = append(turn.Results, Result{Tool: "mcp__cg.codegraph_explore", Text: "**`src/client.ts`** class Client"})
	r = decide(&turn)
	if r.Call != nil || !strings.Contains(r.Text, Answer+"/code/b:\n**`src/client.ts`** class Client") ||
		!strings.Contains(r.Text, "Project: \"b\" at /code/b") || !strings.Contains(r.Text, "Files: src/client.ts") || !strings.Contains(r.Text, "Symbols: Client") {
		t.Fatalf("turn 3: %+v", r)
	}
	// A refused call is reported, never worked around.
	turn.Results = []Result{{Tool: "mcp__cat.local_codegraph_projects", Text: "not granted", IsError: true}}
	if r = decide(&turn); r.Call != nil || !strings.Contains(r.Text, "Gap: ") {
		t.Fatalf("after a refusal: %+v", r)
	}
	// Without the catalog tool, or on a side request, no call.
	if r = decide(&Turn{Prompt: turn.Prompt, Tools: tools[2:]}); r.Call != nil {
		t.Fatalf("no catalog tool: %+v", r)
	}
	if r = decide(&Turn{Prompt: "Generate a title", Tools: tools}); r.Call != nil {
		t.Fatalf("side request: %+v", r)
	}
	// Without codegraph_explore: a gap, no catalog call.
	if r = decide(&Turn{Prompt: turn.Prompt, Tools: tools[:2]}); r.Call != nil || !strings.HasPrefix(r.Text, "Gap: ") {
		t.Fatalf("no native tool: %+v", r)
	}
}

// TestDecideTasksInOrder: a session of several tasks — a workspace
// question with no catalog call, a saved id resolved, a project found —
// each done in order, each named in the final answer.
func TestDecideTasksInOrder(t *testing.T) {
	tools := []Tool{{Name: "cat_local_codegraph_projects"}, {Name: "cat_local_codegraph_resolve"}, {Name: "cg_codegraph_explore"}}
	prompt := Prompts(Task{Kind: TaskWorkspace, Code: "formatReceipt"}, Task{Kind: TaskResolve, Project: "cg_b", Code: "X"},
		Task{Kind: TaskFind, Project: "@acme/sdk", Version: "2.1.0", Code: "Y"})
	if got := ParseTasks(prompt); len(got) != 3 || got[2].Version != "2.1.0" || got[1].Project != "cg_b" {
		t.Fatalf("ParseTasks: %+v", got)
	}
	turn := Turn{Prompt: prompt, Tools: tools}
	var calls []string
	results := map[string]string{
		"cg_codegraph_explore":         "**`src/x.ts`** found",
		"cat_local_codegraph_resolve":  "1. \"b\"  projectId=cg_b recordRevision=1\n   projectPath: /code/b\n",
		"cat_local_codegraph_projects": `{"projects":[{"projectId":"cg_1","name":"@acme/sdk","projectPath":"/v1","version":"1.4.0"},{"projectId":"cg_2","name":"@acme/sdk","projectPath":"/v2","version":"2.1.0"}]}`,
	}
	for range 10 {
		r := decide(&turn)
		if r.Call == nil {
			for _, want := range []string{"## Task 1: in this workspace", Answer + "the current workspace", "## Task 2: resolve", Answer + "/code/b", "## Task 3: find", "\"@acme/sdk\" at /v2 (version 2.1.0)", Answer + "/v2"} {
				if !strings.Contains(r.Text, want) {
					t.Fatalf("final answer lacks %q:\n%s", want, r.Text)
				}
			}
			break
		}
		calls = append(calls, r.Call.Tool.Name+" "+argsJSON(r.Call.Args))
		turn.Results = append(turn.Results, Result{Tool: r.Call.Tool.Name, Text: results[r.Call.Tool.Name]})
	}
	want := []string{`cg_codegraph_explore {"query":"formatReceipt"}`, `cat_local_codegraph_resolve {"projectId":"cg_b"}`,
		`cg_codegraph_explore {"projectPath":"/code/b","query":"X"}`, `cat_local_codegraph_projects {"limit":3,"query":"@acme/sdk"}`,
		`cg_codegraph_explore {"projectPath":"/v2","query":"Y"}`}
	if strings.Join(calls, "\n") != strings.Join(want, "\n") {
		t.Fatalf("calls:\n%s\nwant:\n%s", strings.Join(calls, "\n"), strings.Join(want, "\n"))
	}
}

// TestDecideAfterTheCatalogDied: a host drops the tools of a server that
// died (OpenCode does); the catalog's earlier answer still leads to the
// native call, and a task that would need the catalog now is a gap.
func TestDecideAfterTheCatalogDied(t *testing.T) {
	prompt := Prompts(Task{Kind: TaskFind, Project: "b", Code: "X"}, Task{Kind: TaskFind, Project: "c", Code: "Y"})
	onlyNative := []Tool{{Name: "cg_codegraph_explore"}}
	turn := Turn{Prompt: prompt, Tools: onlyNative, Results: []Result{
		{Tool: "cat_local_codegraph_projects", Text: "1. \"b\"  projectId=cg_b recordRevision=1\n   projectPath: /code/b\n"}}}
	r := decide(&turn)
	if r.Call == nil || r.Call.Tool.Name != "cg_codegraph_explore" || r.Call.Args["projectPath"] != "/code/b" {
		t.Fatalf("after the catalog died: %+v", r)
	}
	turn.Results = append(turn.Results, Result{Tool: "cg_codegraph_explore", Text: "found X"})
	r = decide(&turn)
	if r.Call != nil || !strings.Contains(r.Text, Answer+"/code/b:\nfound X") || !strings.Contains(r.Text, "## Task 2: find the project «c» and explore «Y»\nGap: the catalog tools are not offered") {
		t.Fatalf("final answer: %+v", r)
	}
}
