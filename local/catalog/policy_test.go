package catalog

import "testing"

func TestPolicyAllows(t *testing.T) {
	pol := Policy{
		Discovery: []string{"/code", "/libs"},
		Share:     []string{"/code"},
		Deny:      []string{"/code/Private"},
	}
	for _, tc := range []struct {
		root string
		want bool
	}{
		{"/code/app", true},
		{"/code", true},
		{"/libs/x", false},         // discovered but not shared
		{"/code/Private/x", false}, // denied
		{"/code/private/x", false}, // denied by case on any file system
		{"/code/Private2/x", true}, // whole segments only
		{"/codebase/x", false},     // not under /code by segments
		{"/code/app/../Private/x", false},
	} {
		if got := pol.AllowsPath(tc.root); got != tc.want {
			t.Errorf("AllowsPath(%q) = %v, want %v", tc.root, got, tc.want)
		}
	}
	other := pol
	other.Deny = nil
	if pol.ViewKey() == other.ViewKey() {
		t.Fatal("different deny roots must give different view keys")
	}
}
