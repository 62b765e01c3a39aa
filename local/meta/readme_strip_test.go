package meta

import (
	"html"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// stripInlineEveryRule is stripInline as it was before its rules were
// skipped where their character is absent: every rule, always.
func stripInlineEveryRule(s string) string {
	s = reEscape.ReplaceAllStringFunc(s, func(e string) string { return string(escapeBase + rune(e[1])) })
	s = reImage.ReplaceAllString(s, "")
	s = reLink.ReplaceAllString(s, "$1")
	s = reRefLink.ReplaceAllString(s, "$1")
	s = reRSTLink.ReplaceAllString(s, "$1")
	s = reAutoLink.ReplaceAllString(s, "$1")
	s = reTag.ReplaceAllString(s, "")
	s = reCode.ReplaceAllString(s, "$1")
	s = reStrong.ReplaceAllString(s, "$1$2$3")
	s = reEmph.ReplaceAllString(s, "$1$2$3$4")
	s = strings.Map(func(r rune) rune {
		if r > escapeBase && r < escapeBase+0x80 {
			return r - escapeBase
		}
		return r
	}, s)
	return html.UnescapeString(s)
}

// TestStripInlineSkipsOnlyRulesThatCannotMatch: random paragraphs made of
// markup pieces give what running every rule gives. Seed printed on
// failure.
func TestStripInlineSkipsOnlyRulesThatCannotMatch(t *testing.T) {
	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewPCG(uint64(seed), 4))
	pieces := []string{"a", "word ", " ", "_", "*", "**", "~~", "`", "``", "[", "]", "(", ")", "!", "<", ">", "\\", "&amp;", "&", "<img src=x>",
		"</b>", "<https://x.y>", "http:", "mailto:", "_x_", "中文", "é", "#", "|", ":", "-", "1.", "\t", "<a href='u'>", "&lt;", "\\*"}
	for i := range 200000 {
		var b strings.Builder
		for range 1 + rng.IntN(12) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		in := b.String()
		if got, want := stripInline(in), stripInlineEveryRule(in); got != want {
			t.Fatalf("seed %d, case %d: stripInline(%q) = %q, every rule gives %q", seed, i, in, got, want)
		}
	}
}
