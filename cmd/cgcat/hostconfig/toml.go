package hostconfig

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

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
