package meta_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cgcat/cgcat/local/meta"
)

func TestClean(t *testing.T) {
	tests := []struct {
		name string
		in   string
		max  int
		want string
	}{
		{"plain", "hello world", 0, "hello world"},
		{"whitespace collapsed and trimmed", " \t a \n\r\n b\u00a0\u3000c  ", 0, "a b c"},
		{"C0 and DEL", "a\x00b\x07c\x7fd", 0, "abcd"},
		{"C1", "a\u0085b\u0080c", 0, "a bc"},
		{"bidi overrides and isolates", "\u202eevil\u202c \u2066x\u2069 \u200e\u200f", 0, "evil x"},
		{"zero width", "zero\u200bwidth\u200c\u200d\u2060\ufeff", 0, "zerowidth"},
		{"tag characters", "hi\U000E0041\U000E0042\U000E007F", 0, "hi"},
		{"variation selectors", "a\ufe0fb\U000E0100c", 0, "abc"},
		{"invisible fillers", "a\u3164b\u115fc", 0, "abc"},
		{"ANSI CSI", "\x1b[1;31mred\x1b[0m \x1b[2J\x1b[Hclear", 0, "red clear"},
		{"ANSI OSC hyperlink", "\x1b]8;;https://evil\x07text\x1b]8;;\x1b\\", 0, "text"},
		{"ANSI other", "a\x1b(Bb\x1bcc\x1b=d", 0, "abcd"},
		{"C1 CSI", "x\u009b31my", 0, "xy"},
		{"trailing ESC", "abc\x1b", 0, "abc"},
		{"invalid UTF-8", "a\xffb\xc3(c", 0, "ab(c"},
		{"cut", "abcdef", 4, "abc…"},
		{"no cut at the limit", "abcd", 4, "abcd"},
		{"cut before a space", "abc def", 4, "abc…"},
		{"cut trims the space", "ab cdef", 4, "ab…"},
		{"cut on a rune boundary", "中文字符测试", 3, "中文…"},
		{"cut counts visible runes only", "a\u200b\u200bb\u200bc", 3, "abc"},
		{"max 1", "ab", 1, "…"},
		{"emoji kept", "ok 👍 ✓", 0, "ok 👍 ✓"},
		{"Chinese punctuation kept", "你好，世界。", 0, "你好，世界。"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := meta.Clean(tt.in, tt.max)
			if got != tt.want {
				t.Errorf("Clean(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
			}
			if again := meta.Clean(got, tt.max); again != got {
				t.Errorf("not idempotent: %q then %q", got, again)
			}
		})
	}
}

func TestCleanBound(t *testing.T) {
	s := strings.Repeat("word 字 ", 1000)
	for _, n := range []int{1, 2, 7, 200, 400} {
		got := meta.Clean(s, n)
		if c := utf8.RuneCountInString(got); c > n || !utf8.ValidString(got) {
			t.Errorf("Clean(_, %d): %d runes", n, c)
		}
	}
}
