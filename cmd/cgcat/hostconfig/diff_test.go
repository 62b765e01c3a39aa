package hostconfig

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

func TestUnifiedDiffEqual(t *testing.T) {
	if d := UnifiedDiff("f", []byte("a\nb\n"), []byte("a\nb\n")); d != "" {
		t.Fatalf("equal inputs gave %q", d)
	}
	if d := UnifiedDiff("f", nil, nil); d != "" {
		t.Fatalf("nil inputs gave %q", d)
	}
}

func TestUnifiedDiffSimple(t *testing.T) {
	before := "a\nb\nc\nd\ne\nf\ng\nh\n"
	after := "a\nb\nc\nd\nE\nf\ng\nh\ni\n"
	want := `--- /x/config.toml
+++ /x/config.toml
@@ -2,7 +2,8 @@
 b
 c
 d
-e
+E
 f
 g
 h
+i
`
	if got := UnifiedDiff("/x/config.toml", []byte(before), []byte(after)); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

func TestUnifiedDiffNewFileAndNoNewline(t *testing.T) {
	got := UnifiedDiff("/x/opencode.json", nil, []byte("{\n}"))
	want := "--- /dev/null\n+++ /x/opencode.json\n@@ -0,0 +1,2 @@\n+{\n+}\n\\ No newline at end of file\n"
	if got != want {
		t.Fatalf("got\n%q\nwant\n%q", got, want)
	}
	got = UnifiedDiff("f", []byte("a"), []byte("a\n"))
	want = "--- f\n+++ f\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+a\n"
	if got != want {
		t.Fatalf("got\n%q\nwant\n%q", got, want)
	}
}

func TestUnifiedDiffTwoHunks(t *testing.T) {
	var a, b strings.Builder
	for i := range 30 {
		fmt.Fprintf(&a, "line %d\n", i)
		switch i {
		case 2:
			b.WriteString("changed 2\n")
		case 25:
			b.WriteString("changed 25\n")
		default:
			fmt.Fprintf(&b, "line %d\n", i)
		}
	}
	d := UnifiedDiff("f", []byte(a.String()), []byte(b.String()))
	if n := strings.Count(d, "\n@@ "); n != 2 {
		t.Fatalf("%d hunks, want 2:\n%s", n, d)
	}
	if !strings.Contains(d, "@@ -1,6 +1,6 @@") || !strings.Contains(d, "@@ -23,7 +23,7 @@") {
		t.Fatalf("unexpected hunk headers:\n%s", d)
	}
}

// applyUnified applies a diff made by UnifiedDiff to before.
func applyUnified(t *testing.T, before, diff string) string {
	t.Helper()
	a := splitLines([]byte(before))
	lines := strings.SplitAfter(diff, "\n")
	var out []string
	pos := 0 // next line of a to copy
	for i := 2; i < len(lines) && lines[i] != ""; {
		h := lines[i]
		var as, an, bs, bn int
		if _, err := fmt.Sscanf(h, "@@ -%s +%s @@", new(string), new(string)); err != nil {
			t.Fatalf("bad hunk header %q", h)
		}
		f := strings.Fields(h)
		parse := func(s string) (int, int) {
			s = s[1:]
			n := 1
			if j := strings.IndexByte(s, ','); j >= 0 {
				n, _ = strconv.Atoi(s[j+1:])
				s = s[:j]
			}
			st, _ := strconv.Atoi(s)
			return st, n
		}
		as, an = parse(f[1])
		bs, bn = parse(f[2])
		_, _ = bs, bn
		start := as - 1
		if an == 0 {
			start = as
		}
		out = append(out, a[pos:start]...)
		pos = start
		i++
		for i < len(lines) && lines[i] != "" && !strings.HasPrefix(lines[i], "@@") {
			l := lines[i]
			i++
			body := l[1:]
			if i < len(lines) && strings.HasPrefix(lines[i], `\ No newline`) {
				body = strings.TrimSuffix(body, "\n")
				i++
			}
			switch l[0] {
			case ' ':
				out = append(out, a[pos])
				pos++
			case '-':
				if a[pos] != body {
					t.Fatalf("diff removes %q, file has %q", body, a[pos])
				}
				pos++
			case '+':
				out = append(out, body)
			}
		}
	}
	out = append(out, a[pos:]...)
	return strings.Join(out, "")
}

func TestUnifiedDiffApplies(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	gen := func() string {
		var b strings.Builder
		n := r.IntN(25)
		for range n {
			fmt.Fprintf(&b, "%c\n", 'a'+r.IntN(4))
		}
		if r.IntN(4) == 0 {
			b.WriteString("tail")
		}
		return b.String()
	}
	for i := range 2000 {
		a, b := gen(), gen()
		d := UnifiedDiff("f", []byte(a), []byte(b))
		if a == b {
			if d != "" {
				t.Fatalf("equal gave diff")
			}
			continue
		}
		if got := applyUnified(t, a, d); got != b {
			t.Fatalf("case %d: applying\n%s\nto %q gave %q, want %q", i, d, a, got, b)
		}
	}
}

func TestUnifiedDiffLargeFallback(t *testing.T) {
	var a, b strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&a, "a%d\n", i)
		fmt.Fprintf(&b, "b%d\n", i)
	}
	d := UnifiedDiff("f", []byte(a.String()), []byte(b.String()))
	if got := applyUnified(t, a.String(), d); got != b.String() {
		t.Fatal("fallback diff does not apply")
	}
}
