package server

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/catalog"
)

// TestLookalikeListsAreBounded: a page of many clones of one repository
// names at most lookalikeListMax look-alikes per candidate and counts the
// rest, so the answer grows with the page, not with its square (50 clones
// once cost 54 KB of ids), and the text says how many it left out.
func TestLookalikeListsAreBounded(t *testing.T) {
	const n = 50
	ps := make([]Project, n)
	recs := make([]*local.Project, n)
	for i := range ps {
		path := fmt.Sprintf("/code/clone-%02d/widgets", i)
		ps[i] = Project{ProjectID: fmt.Sprintf("cg_%02d", i), Name: "widgets", ProjectPath: &path}
	}
	markLookalikes(ps, recs, catalog.Policy{})
	for i, p := range ps {
		l := p.Lookalike
		if l == nil {
			t.Fatalf("candidate %d has no look-alike though all %d share a name", i, n)
		}
		if len(l.Of) != lookalikeListMax || l.More != n-1-lookalikeListMax {
			t.Fatalf("candidate %d: of %d ids and %d more, want %d and %d", i, len(l.Of), l.More, lookalikeListMax, n-1-lookalikeListMax)
		}
		for _, id := range l.Of {
			if id == p.ProjectID {
				t.Fatalf("candidate %d lists itself as its own look-alike", i)
			}
		}
	}
	b, err := json.Marshal(ps)
	if err != nil {
		t.Fatal(err)
	}
	if perProject := len(b) / n; perProject > 400 {
		t.Errorf("%d bytes a candidate for %d look-alikes: the lists are not bounded", perProject, n)
	}
	num := map[string]int{}
	for i, p := range ps {
		num[p.ProjectID] = i + 1
	}
	line := string(appendLookalike(nil, ps[0].Lookalike, num))
	if want := fmt.Sprintf("look-alike of #2, #3, #4, #5 and %d more:", n-1-lookalikeListMax); !strings.HasPrefix(line, want) {
		t.Errorf("text %q, want it to start %q", line, want)
	}
}
