package server

import (
	"testing"

	"github.com/cgcat/cgcat/local"
)

// TestShownFollowsTheRecordsMetadata: what an answer shows of a record is
// worked out once per metadata, and a record whose metadata changed (a
// new hash) shows the new metadata, never the remembered one.
func TestShownFollowsTheRecordsMetadata(t *testing.T) {
	p := &local.Project{ID: "cg_shown_test_1", MetaHash: 11, Meta: local.Metadata{Name: "old\x1b[31m-name", Description: "old words", Packages: []string{"a", "b"}}}
	first := shownOf(p)
	if first.name != "old-name" && first.name != dataText(p.Meta.Name, 120) {
		t.Fatalf("name not cleaned: %q", first.name)
	}
	if again := shownOf(p); again != first {
		t.Fatal("the same record and metadata were cleaned twice")
	}
	q := *p
	q.MetaHash, q.Meta = 12, local.Metadata{Name: "new-name", Readme: "new readme words", Packages: []string{"c"}, Version: "2.0.1"}
	got := shownOf(&q)
	want := cleanShown(&q)
	if got.name != want.name || got.description != want.description || len(got.packages) != 1 || got.packages[0] != "c" || got.version != "2.0.1" {
		t.Fatalf("changed metadata shows %+v, want %+v", got, want)
	}
	// No hash: nothing to key it by, cleaned afresh each time.
	r := &local.Project{ID: "cg_shown_test_2", Meta: local.Metadata{Name: "x"}}
	if shownOf(r) == shownOf(r) {
		t.Fatal("a record without a metadata hash was remembered")
	}
}
