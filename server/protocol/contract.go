package protocol

// The agent contract of seed 000 section 7, in the text every model reads
// (R46): the tool descriptions carry what an agent needs to use a tool
// right even when a host drops the server's instructions; the instructions
// carry the whole contract as short imperative lines; each answer's text
// repeats what matters at the moment of choosing (package server). The
// installable snippet (`cgcat instructions`) is the seed's optional text,
// printed for a person to paste, never written anywhere.
//
// Every byte here goes into every model request of every session that has
// cgcat installed, so the text keeps within the budgets below, measured by
// TestContractBudget and in each host by the agent-turn tests.

const projectsDescription = `Find other local code projects that have a CodeGraph index, by package name, project name, alias or purpose (matches catalog metadata, not code). Use it for code outside the current workspace (an SDK, a service, a shared library); for the current workspace call codegraph_explore directly. Pass a result's projectPath unchanged as projectPath to the native CodeGraph tool codegraph_explore; never pass projectId. When candidates look alike (same name, versions, worktrees, clones), tell them apart by package, purpose, version, branch and path before choosing; never pick at random. Results are top matches, not a complete list; no match is no proof the code does not exist.`

const resolveDescription = `Get the current path and state of a project from a saved projectId (an earlier answer, an old session, a GBrain card). Returns the same record and handoff as local_codegraph_projects, or unknown_project / record_changed / missing / not_available. Takes an id, never a path. A fresh local_codegraph_projects result needs no resolve.`

// Instructions is the server's MCP instructions: the contract, one rule a
// line.
const Instructions = `cgcat only finds local projects with a CodeGraph index; code facts come from the native CodeGraph. Hosts prefix tool names (mcp__<server>__...): use the names in your tool list.
- Current workspace: call codegraph_explore directly, no catalog call.
- Another project: call local_codegraph_projects, then pass its projectPath unchanged to codegraph_explore; never pass projectId, never append .codegraph.
- Look-alikes (same name, versions, worktrees, clones): tell them apart by package, purpose, version, branch and path first; never pick at random.
- A saved projectId (old answer, session, GBrain card): local_codegraph_resolve it first.
- codegraph_explore missing or without projectPath: report the gap; do not ask the catalog for code, install or index anything.
- Respect CodeGraph's warnings (not indexed, refused, stale); never work around a refusal; an empty result is no proof that code does not exist.
- Final answer: name the project, files and symbols of each fact, and any warning. Cross-project links (HTTP calls, shared types) are inference: CodeGraph has no cross-repository edges.`

// Byte budgets of the text above (UTF-8 bytes, as sent).
const (
	// DescriptionBudget bounds both tool descriptions together (812 bytes
	// before the contract's lines).
	DescriptionBudget = 1100
	// InstructionsBudget bounds the server's instructions (254 bytes
	// before the contract).
	InstructionsBudget = 1100
)
