package hostconfig

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// Codex is the Codex CLI (and the IDE extensions that share its
// config.toml).
const Codex = "codex"

var _ = register(&Host{
	Name: Codex, Title: "Codex", order: 10,
	ServersKey: codexServersKey,
	FileHelp:   "$CODEX_HOME/config.toml (default ~/.codex/config.toml): [mcp_servers.NAME]",
	ConfigFile: func(env Env, _ string) (string, error) {
		home := env.get("CODEX_HOME")
		if home == "" {
			if env.Home == "" {
				return "", errors.New("cannot find the Codex config: no $CODEX_HOME and no home directory")
			}
			home = filepath.Join(env.Home, ".codex")
		}
		home, err := filepath.Abs(home)
		if err != nil {
			return "", err
		}
		return CodexPath(home), nil
	},
	DirMode: 0o700, // Codex keeps its credentials there
	Upsert:  UpsertCodex,
	Remove:  RemoveCodex,
	Leftover: func(src []byte) bool {
		doc, err := serverShape{toml: true}.decode(src)
		if err != nil {
			return false
		}
		m, _ := doc[codexServersKey].(map[string]any)
		return len(doc) == 0 || (len(doc) == 1 && m != nil && len(m) == 0)
	},
	Snippet:      func(e Entry) string { return renderCodexTable(e, "\n") },
	SnippetWhere: "add to %s",
	SnippetTOML:  true,
	shape: serverShape{toml: true, timeout: func(m map[string]any) time.Duration {
		if d := timeoutKey("startup_timeout_sec", time.Second)(m); d > 0 {
			return d
		}
		return timeoutKey("startup_timeout_ms", time.Millisecond)(m)
	}},
	PromptPolicy: "Codex runs tools annotated readOnlyHint (both of cgcat's) without asking, unless the entry's approval_mode says \"prompt\"",
	Launch: LaunchPolicy{
		// What Codex passes from its own environment to an MCP server
		// (measured with codex-cli 0.171.0: everything else is dropped,
		// notably XDG_* and CGCAT_CONFIG, which is why the entry names
		// --config).
		EnvAllowlist: []string{
			"HOME", "LOGNAME", "PATH", "SHELL", "USER", "__CF_USER_TEXT_ENCODING", "LANG", "LC_ALL", "TERM", "TMPDIR", "TZ",
			"SSL_CERT_FILE", "SSL_CERT_DIR", "CURL_CA_BUNDLE", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS", "GIT_SSL_CAINFO", "PIP_CERT",
		},
		Timeout:       10 * time.Second,
		TimeoutSource: "Codex's startup_timeout_sec default",
	},
	CodeGraphAdd: "codex mcp add codegraph -- codegraph serve --mcp",
	EntryChecks:  codexEntryChecks,
	Approval:     codexApproval,
})

func codexEntryChecks(s Server, at EntryAt) (fs []Finding, ok bool) {
	for _, t := range []string{ToolProjects, ToolResolve} {
		if list, ok := s.Raw["enabled_tools"].([]any); ok && !containsAny(list, t) {
			fs = append(fs, found(Fail, "add it to enabled_tools, or: "+at.Reinstall, "", "%s does not enable %s (enabled_tools)", at.Where, t))
		}
		if list, ok := s.Raw["disabled_tools"].([]any); ok && containsAny(list, t) {
			fs = append(fs, found(Fail, "remove it from disabled_tools", "", "%s disables %s (disabled_tools)", at.Where, t))
		}
	}
	return fs, true
}

// codexToolMode is the approval mode Codex 0.171 applies to one tool of an
// entry: tools.<tool>.approval_mode, else default_tools_approval_mode,
// else "auto"; where names the key that set it ("" for the default).
func codexToolMode(entry map[string]any, tool string) (mode, where string) {
	tools, _ := entry["tools"].(map[string]any)
	if t, ok := tools[tool].(map[string]any); ok {
		if m, ok := t["approval_mode"].(string); ok {
			return m, "tools." + tool + ".approval_mode"
		}
	}
	if m, ok := entry["default_tools_approval_mode"].(string); ok {
		return m, "default_tools_approval_mode"
	}
	return "auto", ""
}

// codexApproval reads what decides whether Codex asks before an MCP call
// (codex-rs mcp_tool_call, 0.171): the tool's approval mode — "approve"
// never asks, "prompt" always asks, "auto" (the default) and "writes" ask
// unless the tool is annotated readOnlyHint. approval_policy governs the
// agent's commands; it does not make a read-only tool ask.
func codexApproval(in ApprovalInput) []Finding {
	doc, _ := serverShape{toml: true}.decode(in.Src)
	policy, _ := doc["approval_policy"].(string)
	if policy == "" {
		policy = "the default"
	} else {
		policy = fmt.Sprintf("%q", policy)
	}
	var fs []Finding
	var quiet []string
	for _, t := range []string{ToolProjects, ToolResolve} {
		mode, where := codexToolMode(in.Ours.Raw, t)
		key := fmt.Sprintf("mcp_servers.%s.%s", in.Name, where)
		switch {
		case mode == "approve":
			quiet = append(quiet, fmt.Sprintf("%s: %s = \"approve\"", t, key))
		case mode == "prompt":
			fs = append(fs, found(Warn, fmt.Sprintf("remove %s from %s, or set it to \"auto\"", key, in.File), WillPrompt,
				"approval: Codex will ask before every call of %s (%s = \"prompt\"; readOnlyHint does not help then; approval_policy is %s)", t, key, policy))
		case mode != "auto" && mode != "writes":
			fs = append(fs, found(Warn, fmt.Sprintf("set %s to \"auto\", \"writes\", \"approve\" or \"prompt\" in %s", key, in.File), "",
				"approval: %s = %q, which Codex 0.171 does not know; it may refuse the config", key, mode))
		case !in.ReadOnly:
			fs = append(fs, found(Info, "", "", "approval: not checked for %s: with approval mode %q Codex asks unless the tool is annotated readOnlyHint, and the server did not show its tools", t, mode))
		default:
			how := "approval mode \"auto\" (the default)"
			if where != "" {
				how = fmt.Sprintf("%s = %q", key, mode)
			}
			quiet = append(quiet, fmt.Sprintf("%s: %s and readOnlyHint", t, how))
		}
	}
	if len(quiet) == 2 {
		fs = append(fs, found(OK, "", "", "approval: Codex runs cgcat's tools without asking (%s; approval_policy %s governs commands, not these calls)", strings.Join(quiet, "; "), policy))
	}
	return fs
}

func containsAny(list []any, s string) bool {
	return slices.Contains(list, any(s))
}

// CodexPath returns the Codex user configuration file inside codexHome
// ($CODEX_HOME, by default ~/.codex; the caller resolves it). It returns ""
// when codexHome is empty.
func CodexPath(codexHome string) string {
	if codexHome == "" {
		return ""
	}
	return filepath.Join(codexHome, "config.toml")
}

const codexServersKey = "mcp_servers"

// codexValue is our entry as go-toml decodes it into map[string]any.
func codexValue(e Entry) map[string]any {
	args := make([]any, 0, 3)
	for _, a := range e.args() {
		args = append(args, a)
	}
	return map[string]any{
		"command":             e.Command,
		"args":                args,
		"enabled":             true,
		"enabled_tools":       []any{ToolProjects, ToolResolve},
		"startup_timeout_sec": int64(codexStartupTimeoutSec),
		"tool_timeout_sec":    int64(codexToolTimeoutSec),
	}
}

// renderCodexTable renders our [mcp_servers.<name>] table with the given
// line ending. The name is a bare key (validName guarantees it).
func renderCodexTable(e Entry, nl string) string {
	var b strings.Builder
	line := func(s string) { b.WriteString(s); b.WriteString(nl) }
	line("[" + codexServersKey + "." + e.Name + "]")
	line("command = " + tomlString(e.Command))
	args := e.args()
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = tomlString(a)
	}
	line("args = [" + strings.Join(quoted, ", ") + "]")
	line("enabled = true")
	line("enabled_tools = [" + tomlString(ToolProjects) + ", " + tomlString(ToolResolve) + "]")
	line("startup_timeout_sec = " + strconv.Itoa(codexStartupTimeoutSec))
	line("tool_timeout_sec = " + strconv.Itoa(codexToolTimeoutSec))
	return b.String()
}

// codexBlock is a table of our entry: the header line through the line of
// its last key-value. Comments and blank lines after the last key-value are
// left out: they usually introduce what follows.
type codexBlock struct {
	start, end int
	main       bool // [mcp_servers.<name>] itself, not a sub-table
	// bounds for extending a removal over adjacent blank lines
	prevEnd, nextStart int
}

type codexDoc struct {
	src    []byte
	nl     string
	before map[string]any
	blocks []codexBlock
}

// parseCodex parses src, finds every table of entry name and refuses the
// forms we cannot edit.
func parseCodex(src []byte, name string) (*codexDoc, error) {
	items, err := scanTOML(src)
	if err != nil {
		return nil, fmt.Errorf("%w as TOML: %v; fix the file (or move it aside) and run again", ErrUnparsable, err)
	}
	before := map[string]any{}
	if err := toml.Unmarshal(src, &before); err != nil {
		return nil, fmt.Errorf("%w as TOML: %v; fix the file (or move it aside) and run again", ErrUnparsable, describeTOMLError(src, err))
	}
	d := &codexDoc{src: src, nl: "\n", before: before}
	if bytes.Contains(src, []byte("\r\n")) {
		d.nl = "\r\n"
	}
	servers := []string{codexServersKey}
	ours := []string{codexServersKey, name}
	hand := fmt.Sprintf("rewrite it by hand as a [%s.%s] table (or remove it), then run again", codexServersKey, name)

	cur := -1 // index into d.blocks of the entry table we are in, or -1
	for i, it := range items {
		switch it.kind {
		case unstable.Table, unstable.ArrayTable:
			cur = -1
			switch {
			case it.kind == unstable.ArrayTable && slices.Equal(it.key, servers):
				return nil, unsafef("%s is written as an array of tables ([[%s]]), which Codex does not read; fix the file by hand", codexServersKey, codexServersKey)
			case it.kind == unstable.ArrayTable && slices.Equal(it.key, ours):
				return nil, unsafef("%s.%s is written as an array of tables ([[%s.%s]]); %s", codexServersKey, name, codexServersKey, name, hand)
			case hasPrefix(it.key, ours):
				b := codexBlock{start: it.start, end: it.end, main: len(it.key) == 2}
				if i > 0 {
					b.prevEnd = items[i-1].end
				}
				d.blocks = append(d.blocks, b)
				cur = len(d.blocks) - 1
			}
		case unstable.KeyValue:
			full := append(slices.Clone(it.table), it.key...)
			switch {
			case hasPrefix(it.table, ours):
				// Part of our entry's table (a key, dotted or not, inside it).
				if cur >= 0 {
					d.blocks[cur].end = it.end
				}
			case hasPrefix(full, ours):
				if len(full) == 2 && it.valueKind == unstable.InlineTable {
					return nil, unsafef("%s.%s is written as an inline table (%s = { ... }); %s", codexServersKey, name, strings.Join(it.key, "."), hand)
				}
				return nil, unsafef("%s.%s is written with dotted keys (%s = ...); %s", codexServersKey, name, strings.Join(it.key, "."), hand)
			case slices.Equal(full, servers):
				return nil, unsafef("%s is written as an inline table or a single value (%s = ...), which cannot be extended; rewrite it as [%s.<name>] tables by hand, then run again", codexServersKey, strings.Join(it.key, "."), codexServersKey)
			}
		}
	}
	// Bounds for blank-line handling: the next expression after each block.
	for bi := range d.blocks {
		d.blocks[bi].nextStart = len(src)
		for _, it := range items {
			if it.start >= d.blocks[bi].end {
				d.blocks[bi].nextStart = it.start
				break
			}
		}
	}
	return d, nil
}

// existing returns our entry's decoded value, if any.
func (d *codexDoc) existing(name string) (any, bool, error) {
	raw, ok := d.before[codexServersKey]
	if !ok {
		return nil, false, nil
	}
	servers, ok := raw.(map[string]any)
	if !ok {
		return nil, false, unsafef("%s is not a table", codexServersKey)
	}
	v, ok := servers[name]
	return v, ok, nil
}

func (d *codexDoc) existingText() string {
	var b strings.Builder
	for _, bl := range d.blocks {
		b.Write(d.src[bl.start:bl.end])
		if !bytes.HasSuffix(d.src[bl.start:bl.end], []byte("\n")) {
			b.WriteString(d.nl)
		}
	}
	return b.String()
}

// removals turns blocks into removal edits. Blocks separated only by blank
// lines are removed as one; each removal also swallows the blank lines
// before it (so the paragraph spacing of the file stays as it was), or the
// ones after it when it starts the file.
func (d *codexDoc) removals(blocks []codexBlock) []edit {
	var groups []codexBlock
	for _, b := range blocks {
		if n := len(groups); n > 0 && groups[n-1].end <= b.start && isBlank(d.src[groups[n-1].end:b.start]) {
			groups[n-1].end = b.end
			groups[n-1].nextStart = b.nextStart
			continue
		}
		groups = append(groups, b)
	}
	edits := make([]edit, 0, len(groups))
	for _, g := range groups {
		start, end := g.start, g.end
		// Swallow the blank lines before the block only when a blank line or
		// the end of the file follows it, so that neighbours stay apart.
		followedByBlank := end == len(d.src) || (end < g.nextStart && isBlank(d.src[end:lineEnd(d.src, end)]))
		for followedByBlank && start > g.prevEnd {
			ls := lineStart(d.src, start-1)
			if ls < g.prevEnd || !isBlank(d.src[ls:start]) {
				break
			}
			start = ls
		}
		if start == 0 {
			for end < g.nextStart {
				le := lineEnd(d.src, end)
				if le > g.nextStart || !isBlank(d.src[end:le]) {
					break
				}
				end = le
			}
		}
		edits = append(edits, edit{start, end, ""})
	}
	return edits
}

// UpsertCodex adds our [mcp_servers.<name>] table to a Codex config.toml, or
// replaces it. Every other byte of src is kept; a new table goes at the end
// after a blank line, an existing one is replaced in place.
//
// The entry is everything under mcp_servers.<name>, including sub-tables
// such as [mcp_servers.<name>.env]. When it already equals what we would
// write, src is returned with changed=false. When it differs, the result is
// a *ConflictError unless force; with force the main table is replaced in
// place and its sub-tables are removed, so that the entry is exactly ours.
//
// It refuses (ErrUnparsable, ErrUnsafe) files that do not parse and entries
// written with dotted keys, inline tables or arrays of tables, and it
// verifies the result by parsing it again (ErrVerify).
func UpsertCodex(src []byte, e Entry, force bool) (out []byte, changed bool, err error) {
	if err := e.validate(); err != nil {
		return nil, false, err
	}
	d, err := parseCodex(src, e.Name)
	if err != nil {
		return nil, false, err
	}
	want := codexValue(e)
	cur, exists, err := d.existing(e.Name)
	if err != nil {
		return nil, false, err
	}
	if exists {
		if equalValue(cur, want) {
			return src, false, nil
		}
		if !force {
			return nil, false, &ConflictError{Host: "codex", Name: e.Name, Existing: d.existingText()}
		}
	}
	table := renderCodexTable(e, d.nl)
	var edits []edit
	var subs []codexBlock
	replaced := false
	for _, b := range d.blocks {
		if b.main && !replaced {
			text := table
			if b.end == len(src) && !bytes.HasSuffix(src, []byte("\n")) {
				text = strings.TrimSuffix(text, d.nl)
			}
			edits = append(edits, edit{b.start, b.end, text})
			replaced = true
			continue
		}
		subs = append(subs, b)
	}
	edits = mergeOverlaps(append(edits, d.removals(subs)...))
	out = applyEdits(src, edits)
	if !replaced {
		out = appendTable(out, table, d.nl)
	}
	if err := verifyCodex(d.before, out, e.Name, want); err != nil {
		return nil, false, err
	}
	return out, true, nil
}

// mergeOverlaps keeps edits from overlapping: a removal widened over blank
// lines into the replaced main table is trimmed back.
func mergeOverlaps(edits []edit) []edit {
	slices.SortFunc(edits, func(a, b edit) int { return a.start - b.start })
	for i := 1; i < len(edits); i++ {
		if edits[i].start < edits[i-1].end {
			if edits[i].text == "" {
				edits[i].start = edits[i-1].end
			} else {
				edits[i-1].end = edits[i].start
			}
		}
	}
	return slices.DeleteFunc(edits, func(e edit) bool { return e.start > e.end })
}

// RemoveCodex removes our [mcp_servers.<name>] table and its sub-tables.
// It returns src unchanged (changed=false) when there is no such entry.
func RemoveCodex(src []byte, name string) (out []byte, changed bool, err error) {
	if !validName(name) {
		return nil, false, fmt.Errorf("%w: server name %q: use letters, digits, '-' and '_' only", ErrInvalidEntry, name)
	}
	d, err := parseCodex(src, name)
	if err != nil {
		return nil, false, err
	}
	if _, exists, err := d.existing(name); err != nil {
		return nil, false, err
	} else if !exists {
		return src, false, nil
	}
	out = applyEdits(src, d.removals(d.blocks))
	if err := verifyCodex(d.before, out, name, nil); err != nil {
		return nil, false, err
	}
	return out, true, nil
}

// verifyCodex parses out and checks it equals before with mcp_servers.<name>
// set to want (or removed, when want is nil).
func verifyCodex(before map[string]any, out []byte, name string, want map[string]any) error {
	after := map[string]any{}
	if err := toml.Unmarshal(out, &after); err != nil {
		return fmt.Errorf("%w: the edited file does not parse (%v); nothing was written", ErrVerify, err)
	}
	expected := make(map[string]any, len(before)+1)
	for k, v := range before {
		expected[k] = v
	}
	servers := map[string]any{}
	if raw, ok := before[codexServersKey]; ok {
		m, ok := raw.(map[string]any)
		if !ok {
			return unsafef("%s is not a table", codexServersKey)
		}
		for k, v := range m {
			servers[k] = v
		}
	}
	if want != nil {
		servers[name] = want
	} else {
		delete(servers, name)
	}
	expected[codexServersKey] = servers
	if _, ok := after[codexServersKey]; !ok && len(servers) == 0 {
		// Removing the last server leaves no [mcp_servers] table at all.
		delete(expected, codexServersKey)
	}
	if !equalValue(expected, after) {
		return fmt.Errorf("%w: the edited file would change more than the %s.%s entry; nothing was written (please report this with the file)", ErrVerify, codexServersKey, name)
	}
	return nil
}
