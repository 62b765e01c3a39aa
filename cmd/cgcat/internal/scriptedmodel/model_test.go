package scriptedmodel

import "testing"

func TestProjectPathAsHostsRenderIt(t *testing.T) {
	env := `{"status":"ok","projects":[{"projectId":"cg_1","projectPath":"/code/b sdk"},{"projectPath":"/code/c"}]}`
	for name, result := range map[string]string{
		"structured (Claude Code)": env,
		"after a preamble (Codex)": "Wall time: 0.01 seconds\nOutput:\n" + env,
		"text (OpenCode)":          "status: ok — 2 project(s)\n\n1. \"b\"  projectId=cg_1\n   projectPath: /code/b sdk\n   state: x\n2. \"c\"\n   projectPath: /code/c\n",
		"wrapped text (Gemini)":    `{"output":"<untrusted_context>\nstatus: ok\n1. \"b\"\n   projectPath: /code/b sdk\n</untrusted_context>"}`,
	} {
		if got := ProjectPath(result); got != "/code/b sdk" {
			t.Errorf("%s: ProjectPath = %q", name, got)
		}
	}
	if got := ProjectPath(`{"status":"no_matches","projects":[]}`); got != "" {
		t.Errorf("no project: %q", got)
	}
}

func TestDecide(t *testing.T) {
	tools := []Tool{{Namespace: "mcp__cat", Name: "local_codegraph_projects"}, {Namespace: "mcp__cg", Name: "codegraph_explore"}}
	turn := Turn{Prompt: Prompt("@fruit/b", "Client"), Tools: tools}
	r := decide(&turn)
	if r.Call == nil || r.Call.Tool.FullName() != "mcp__cat.local_codegraph_projects" || r.Call.Args["query"] != "@fruit/b" {
		t.Fatalf("turn 1: %+v", r)
	}
	turn.Results = []Result{{Tool: "mcp__cat.local_codegraph_projects", Text: "projectPath: /code/b"}}
	r = decide(&turn)
	if r.Call == nil || r.Call.Tool.Name != "codegraph_explore" || r.Call.Args["projectPath"] != "/code/b" || r.Call.Args["query"] != "Client" {
		t.Fatalf("turn 2: %+v", r)
	}
	turn.Results = append(turn.Results, Result{Tool: "mcp__cg.codegraph_explore", Text: "class Client"})
	if r = decide(&turn); r.Call != nil || r.Text != Answer+"/code/b:\nclass Client" {
		t.Fatalf("turn 3: %+v", r)
	}
	// A refused call is reported, never worked around.
	turn.Results = []Result{{Tool: "mcp__cat.local_codegraph_projects", Text: "not granted", IsError: true}}
	if r = decide(&turn); r.Call != nil {
		t.Fatalf("after a refusal: %+v", r)
	}
	// Without the catalog tool, or on a side request, no call.
	if r = decide(&Turn{Prompt: turn.Prompt, Tools: tools[1:]}); r.Call != nil {
		t.Fatalf("no catalog tool: %+v", r)
	}
	if r = decide(&Turn{Prompt: "Generate a title", Tools: tools}); r.Call != nil {
		t.Fatalf("side request: %+v", r)
	}
}
