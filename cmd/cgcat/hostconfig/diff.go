package hostconfig

import (
	"bytes"
	"fmt"
	"strings"
)

// diffContext is the number of unchanged lines shown around a change.
const diffContext = 3

// maxLCSCells bounds the LCS table (middle lines of before × after, after
// the common prefix and suffix are cut). Past it the whole middle is shown
// as one replacement: still a correct diff, just not a minimal one.
const maxLCSCells = 4 << 20

// UnifiedDiff returns a unified diff (3 lines of context) from before to
// after, labelled with path, for --dry-run. It returns "" when they are
// equal. A nil before is shown as a new file (--- /dev/null).
func UnifiedDiff(path string, before, after []byte) string {
	if bytes.Equal(before, after) && (before != nil || after == nil) {
		return ""
	}
	a, b := splitLines(before), splitLines(after)
	ops := diffLines(a, b)

	var out strings.Builder
	from := path
	if before == nil {
		from = "/dev/null"
	}
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", from, path)

	// Group the ops into hunks: runs of changes with up to 2*context equal
	// lines between them.
	i := 0
	for i < len(ops) {
		// find next change
		for i < len(ops) && ops[i].kind == opEqual {
			i++
		}
		if i >= len(ops) {
			break
		}
		start := max(i-diffContext, 0)
		end := i
		for end < len(ops) {
			if ops[end].kind != opEqual {
				end++
				continue
			}
			// count the run of equal lines
			j := end
			for j < len(ops) && ops[j].kind == opEqual {
				j++
			}
			if j == len(ops) || j-end > 2*diffContext {
				end = min(end+diffContext, len(ops))
				break
			}
			end = j
		}
		writeHunk(&out, ops[start:end], a, b)
		i = end
	}
	return out.String()
}

type opKind byte

const (
	opEqual opKind = ' '
	opDel   opKind = '-'
	opIns   opKind = '+'
)

type diffOp struct {
	kind opKind
	ai   int // index in a (equal, delete)
	bi   int // index in b (equal, insert)
}

func writeHunk(out *strings.Builder, ops []diffOp, a, b []string) {
	aStart, bStart := -1, -1
	aN, bN := 0, 0
	for _, op := range ops {
		if op.kind != opIns {
			if aStart < 0 {
				aStart = op.ai
			}
			aN++
		}
		if op.kind != opDel {
			if bStart < 0 {
				bStart = op.bi
			}
			bN++
		}
	}
	// Empty ranges name the line before them (diff(1) convention).
	if aStart < 0 {
		aStart = firstIndex(ops, true)
	}
	if bStart < 0 {
		bStart = firstIndex(ops, false)
	}
	fmt.Fprintf(out, "@@ -%s +%s @@\n", hunkRange(aStart, aN), hunkRange(bStart, bN))
	for _, op := range ops {
		var line string
		switch op.kind {
		case opEqual, opDel:
			line = a[op.ai]
		case opIns:
			line = b[op.bi]
		}
		out.WriteByte(byte(op.kind))
		if strings.HasSuffix(line, "\n") {
			out.WriteString(line)
		} else {
			out.WriteString(line)
			out.WriteString("\n\\ No newline at end of file\n")
		}
	}
}

// firstIndex returns the 0-based position in a (or b) where an empty range
// of the hunk sits.
func firstIndex(ops []diffOp, inA bool) int {
	for _, op := range ops {
		if inA {
			return op.ai
		}
		return op.bi
	}
	return 0
}

func hunkRange(start0, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", start0)
	case 1:
		return fmt.Sprintf("%d", start0+1)
	}
	return fmt.Sprintf("%d,%d", start0+1, n)
}

// splitLines splits s into lines that keep their "\n".
func splitLines(s []byte) []string {
	var lines []string
	for len(s) > 0 {
		i := bytes.IndexByte(s, '\n')
		if i < 0 {
			lines = append(lines, string(s))
			break
		}
		lines = append(lines, string(s[:i+1]))
		s = s[i+1:]
	}
	return lines
}

// diffLines computes an edit script from a to b with a longest common
// subsequence over the lines between the common prefix and suffix.
func diffLines(a, b []string) []diffOp {
	var ops []diffOp
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		ops = append(ops, diffOp{opEqual, pre, pre})
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	am, bm := a[pre:len(a)-suf], b[pre:len(b)-suf]
	n, m := len(am), len(bm)
	if n*m > maxLCSCells {
		for i := range am {
			ops = append(ops, diffOp{kind: opDel, ai: pre + i, bi: pre})
		}
		for j := range bm {
			ops = append(ops, diffOp{kind: opIns, ai: pre + n, bi: pre + j})
		}
	} else {
		// lcs[i][j] = LCS length of am[i:] and bm[j:]
		w := m + 1
		lcs := make([]int32, (n+1)*w)
		for i := n - 1; i >= 0; i-- {
			for j := m - 1; j >= 0; j-- {
				if am[i] == bm[j] {
					lcs[i*w+j] = lcs[(i+1)*w+j+1] + 1
				} else {
					lcs[i*w+j] = max(lcs[(i+1)*w+j], lcs[i*w+j+1])
				}
			}
		}
		i, j := 0, 0
		for i < n || j < m {
			switch {
			case i < n && j < m && am[i] == bm[j]:
				ops = append(ops, diffOp{opEqual, pre + i, pre + j})
				i++
				j++
			case i < n && (j == m || lcs[(i+1)*w+j] >= lcs[i*w+j+1]):
				ops = append(ops, diffOp{kind: opDel, ai: pre + i, bi: pre + j})
				i++
			default:
				ops = append(ops, diffOp{kind: opIns, ai: pre + i, bi: pre + j})
				j++
			}
		}
	}
	for k := 0; k < suf; k++ {
		ops = append(ops, diffOp{opEqual, len(a) - suf + k, len(b) - suf + k})
	}
	return ops
}
