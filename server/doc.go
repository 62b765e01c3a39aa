// Package server is the answering service behind cgcat's two tools,
// local_codegraph_projects and local_codegraph_resolve (R15–R23), and their
// CLI twins (`cgcat projects`, `cgcat resolve`): one [Frontend] per process
// answers both, for that process's sharing view, so an agent over MCP and a
// person at the CLI get the same answers. The MCP face itself (tools,
// schemas, JSON arguments, tool results) is package server/protocol.
//
// It owns:
//   - the typed arguments and their bounds ([ProjectsArgs], [ResolveArgs],
//     args.go), validated the same way for every face;
//   - answering: ranking from the in-memory catalog (package local/catalog),
//     GBrain recall and historical cards merged in when GBrain is on, the
//     workspace hint (R5), and the live re-check of every project about to
//     be returned before its path is handed out (R19);
//   - the answer [Envelope], its statuses (R17, R22), its plain-text
//     rendering ([Text]) and the wording of its messages for each reader
//     ([Face]);
//   - cursors (R20): opaque, signed, bound to a snapshot of one listing;
//   - the bound on one stdio message ([BoundStdio]).
//
// It must never:
//   - open the store: answers come from the catalog's published copy, so
//     a writer frozen in the middle of a batch never delays an answer;
//   - talk to GBrain except through the [local.Recall] and
//     [local.CardLookup] it is handed, or trust what GBrain says: recall
//     keeps only ids bound on this machine and visible in this view, and a
//     card shown as a historical candidate never brings a path or a
//     handoff;
//   - hand out a path that the sharing policy hides or the live re-check
//     refused, or any path when paths are not exposed (R4);
//   - walk the roots itself (a call on an empty catalog asks the
//     [Discovery] it is handed for one slice), or proxy a code query:
//     CodeGraph answers those, from the projectPath handed over;
//   - import the store or package refresh: discovery comes in as the
//     [Discovery] and [Processes] interfaces, wired by cmd/cgcat, so this
//     layer links no LevelDB (TestNoLevelDBInTheAnsweringLayer).
package server
