package hostconfig

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

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
