package local

import "testing"

func TestPrintable(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"/code/order-sdk", "/code/order-sdk"},
		{"/代码/订单 客户端", "/代码/订单 客户端"},
		{"gap\x1b]0;PWNED\x07\xffgap", `gap\x1b]0;PWNED\x07\xffgap`},
		{"tab\there", `tab\x09here`},
		{"a\u202eb", `a\u202eb`},
		{`back\slash`, `back\\slash`},
		{"c1\u009bx", `c1\x9bx`},
		{"del\x7f", `del\x7f`},
	} {
		if got := Printable(c.in); got != c.want {
			t.Errorf("Printable(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func FuzzPrintable(f *testing.F) {
	f.Add("gap\x1b]0;x\x07\xff")
	f.Fuzz(func(t *testing.T, s string) {
		out := Printable(s)
		for _, r := range out {
			if needsEscape(r) || r == 0xfffd && !containsRuneError(s) {
				t.Fatalf("Printable(%q) = %q still holds %U", s, out, r)
			}
		}
	})
}

func containsRuneError(s string) bool {
	for _, r := range s {
		if r == 0xfffd {
			return true
		}
	}
	return false
}
