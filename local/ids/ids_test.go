package ids

import "testing"

func TestIDsAreOpaque(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := NewProjectID()
		if !ValidProjectID(id) {
			t.Fatalf("NewProjectID gave %q, which ValidProjectID refuses", id)
		}
		if seen[id] {
			t.Fatalf("duplicate id %q", id)
		}
		seen[id] = true
	}
	for _, bad := range []string{"", "cg_", "cg_ABCDEFGHIJKLMNOP", "/etc/passwd", "cg_aaaaaaaaaaaaaaa1", "cg_aaaaaaaaaaaaaaaaa"} {
		if ValidProjectID(bad) {
			t.Errorf("ValidProjectID(%q) = true", bad)
		}
	}
}
