package hostconfig

import (
	"bytes"
	"errors"
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

// tomlString quotes s as a TOML basic string. Control characters (and DEL)
// are escaped, everything else (including non-ASCII) is written as is.
func tomlString(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		default:
			if r < 0x20 || r == 0x7f {
				fmt.Fprintf(&b, `\u%04X`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// tomlItem is one top-level expression of a TOML document with the byte
// range of the whole lines it occupies.
type tomlItem struct {
	kind      unstable.Kind // Table, ArrayTable, KeyValue or Comment
	key       []string      // header key, or the (possibly dotted) key of a key-value
	table     []string      // for key-values: the header key of the table they are in
	valueKind unstable.Kind // for key-values
	start     int           // offset of the first byte of the expression's first line
	end       int           // offset just after the newline that ends its last line (or len(src))
}

func lineStart(src []byte, off int) int {
	return bytes.LastIndexByte(src[:off], '\n') + 1
}

func lineEnd(src []byte, off int) int {
	i := bytes.IndexByte(src[off:], '\n')
	if i < 0 {
		return len(src)
	}
	return off + i + 1
}

func keyParts(n *unstable.Node) (parts []string, first, last unstable.Range) {
	it := n.Key()
	for i := 0; it.Next(); i++ {
		k := it.Node()
		if i == 0 {
			first = k.Raw
		}
		last = k.Raw
		parts = append(parts, string(k.Data))
	}
	return parts, first, last
}

// scanTOML lists the top-level expressions of src. It fails when src does
// not parse.
func scanTOML(src []byte) (items []tomlItem, err error) {
	defer func() {
		// The unstable parser is not supposed to panic on bad input, but it is
		// "unstable": never let a parser bug take the CLI down.
		if r := recover(); r != nil {
			items, err = nil, fmt.Errorf("toml parser: %v", r)
		}
	}()
	p := unstable.Parser{KeepComments: true}
	p.Reset(src)
	var table []string
	for p.NextExpression() {
		n := p.Expression()
		switch n.Kind {
		case unstable.Table, unstable.ArrayTable:
			key, first, last := keyParts(n)
			items = append(items, tomlItem{
				kind:  n.Kind,
				key:   key,
				start: lineStart(src, int(first.Offset)),
				end:   lineEnd(src, int(last.Offset+last.Length)),
			})
			table = key
		case unstable.KeyValue:
			key, _, _ := keyParts(n)
			items = append(items, tomlItem{
				kind:      n.Kind,
				key:       key,
				table:     table,
				valueKind: n.Value().Kind,
				start:     lineStart(src, int(n.Raw.Offset)),
				end:       lineEnd(src, int(n.Raw.Offset+n.Raw.Length)),
			})
		case unstable.Comment:
			items = append(items, tomlItem{
				kind:  n.Kind,
				start: lineStart(src, int(n.Raw.Offset)),
				end:   lineEnd(src, int(n.Raw.Offset+n.Raw.Length)),
			})
		}
	}
	if err := p.Error(); err != nil {
		return nil, describeTOMLError(src, err)
	}
	return items, nil
}

func describeTOMLError(src []byte, err error) error {
	var derr *toml.DecodeError
	if errors.As(err, &derr) {
		row, col := derr.Position()
		return fmt.Errorf("line %d, column %d: %s", row, col, strings.TrimPrefix(derr.Error(), "toml: "))
	}
	var perr *unstable.ParserError
	if errors.As(err, &perr) && perr.Highlight != nil {
		// Highlight is a subslice of src.
		off := cap(src) - cap(perr.Highlight)
		if off >= 0 && off <= len(src) {
			line := bytes.Count(src[:off], []byte("\n")) + 1
			col := off - lineStart(src, off) + 1
			return fmt.Errorf("line %d, column %d: %s", line, col, perr.Message)
		}
	}
	return err
}

func hasPrefix(s, prefix []string) bool {
	return len(s) >= len(prefix) && slices.Equal(s[:len(prefix)], prefix)
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

func codexUnsafe(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUnsafe, fmt.Sprintf(format, args...))
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
				return nil, codexUnsafe("%s is written as an array of tables ([[%s]]), which Codex does not read; fix the file by hand", codexServersKey, codexServersKey)
			case it.kind == unstable.ArrayTable && slices.Equal(it.key, ours):
				return nil, codexUnsafe("%s.%s is written as an array of tables ([[%s.%s]]); %s", codexServersKey, name, codexServersKey, name, hand)
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
					return nil, codexUnsafe("%s.%s is written as an inline table (%s = { ... }); %s", codexServersKey, name, strings.Join(it.key, "."), hand)
				}
				return nil, codexUnsafe("%s.%s is written with dotted keys (%s = ...); %s", codexServersKey, name, strings.Join(it.key, "."), hand)
			case slices.Equal(full, servers):
				return nil, codexUnsafe("%s is written as an inline table or a single value (%s = ...), which cannot be extended; rewrite it as [%s.<name>] tables by hand, then run again", codexServersKey, strings.Join(it.key, "."), codexServersKey)
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
		return nil, false, codexUnsafe("%s is not a table", codexServersKey)
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

func isBlank(b []byte) bool {
	return len(bytes.Trim(b, " \t\r\n")) == 0
}

type edit struct {
	start, end int
	text       string
}

func applyEdits(src []byte, edits []edit) []byte {
	slices.SortFunc(edits, func(a, b edit) int { return a.start - b.start })
	var out bytes.Buffer
	pos := 0
	for _, e := range edits {
		out.Write(src[pos:e.start])
		out.WriteString(e.text)
		pos = e.end
	}
	out.Write(src[pos:])
	return out.Bytes()
}

// appendTable appends text after src, separated by one blank line.
func appendTable(src []byte, text, nl string) []byte {
	if len(bytes.TrimSpace(src)) == 0 {
		return []byte(text)
	}
	out := slices.Clone(src)
	if !bytes.HasSuffix(out, []byte("\n")) {
		out = append(out, nl...)
	}
	if !bytes.HasSuffix(out, []byte("\n\n")) && !bytes.HasSuffix(out, []byte("\n\r\n")) {
		out = append(out, nl...)
	}
	return append(out, text...)
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
			return codexUnsafe("%s is not a table", codexServersKey)
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
