// Package hostconfig owns cgcat's own entry in the MCP configuration files
// of the four hosts it installs into (R24): Codex (config.toml,
// [mcp_servers.<name>]), OpenCode 1.x (opencode.json / opencode.jsonc,
// mcp.<name>), Claude Code (.claude.json, mcpServers.<name>) and Gemini CLI
// (settings.json, mcpServers.<name>); the narrow allow rule that
// `--allow-tools` adds (Claude Code's permissions.allow, Gemini CLI's
// policy file); reading the other entries of a host file to find
// CodeGraph's own server (ReadServers, FindCodeGraph); and the short agent
// usage text of R25.
//
// It is a library of pure byte-to-byte edits plus one careful file writer:
//
//   - Upsert<Host> / Remove<Host> (Codex, OpenCode, Claude, Gemini) take
//     the current file content and return the new content. They add,
//     replace or remove exactly one entry (ours, by name); AddToList and
//     RemoveFromList do the same for our items of one string list (an allow
//     rule). Either keeps every other byte of the file: comments, layout,
//     other servers and settings. Every result is re-parsed and compared
//     with the input ("before with our entry set" must equal "after", key by
//     key); when that does not hold, or when the entry is written in a form
//     that cannot be edited safely (TOML dotted keys or inline tables, a
//     second config generation, a file that does not parse), they refuse
//     with an error and return no output.
//   - WriteWithBackup writes a timestamped backup of the existing file and
//     then replaces it atomically.
//   - UnifiedDiff, Snippets and Instructions only produce text.
//
// What this package must never do: touch any key but our own entry (and
// our own items of an allow list); write a second, shadowing configuration
// file or a second config generation (OpenCode 2 "mcp.servers"); reformat
// a user's file; write AGENTS.md or any other file than the one it is
// asked to write. It holds no mutable global state and reads no
// environment: paths and names come from the caller.
//
// Errors from the Upsert/Remove functions do not know the file's path; the
// caller wraps them with it (fmt.Errorf("%s: %w", path, err)).
package hostconfig
