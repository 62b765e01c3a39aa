package server

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// A misspelt query is answered with the close names (didYouMean) of
// projects this frontend may see, never of one it hides.
func TestDidYouMean(t *testing.T) {
	fx := newFixture(t, nil)
	ctx := context.Background()
	e, err := fx.deny.Projects(ctx, ProjectsArgs{Query: "alpah", Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(e.DidYouMean, "alpha-svc") || !strings.Contains(Text(e), `Did you mean: "alpha-svc"`) {
		t.Fatalf("a misspelt name: didYouMean %q\n%s", e.DidYouMean, Text(e))
	}
	for _, q := range []string{"zebracron", "zebarcorn vault", "okapo"} {
		e, err := fx.deny.Projects(ctx, ProjectsArgs{Query: q, Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		if s := fx.leak(e, q); s != "" {
			t.Fatalf("%q: the answer shows the hidden %q (didYouMean %q)", q, s, e.DidYouMean)
		}
	}
	// The open frontend may suggest it.
	if e, _ := fx.open.Projects(ctx, ProjectsArgs{Query: "zebracron", Limit: 5}); !slices.Contains(e.DidYouMean, "zebracorn-vault") {
		t.Fatalf("the open frontend does not suggest its own project: %q", e.DidYouMean)
	}
	// An exact hit needs no suggestion.
	if e, _ := fx.deny.Projects(ctx, ProjectsArgs{Query: "alpha-svc", Limit: 5}); len(e.DidYouMean) != 0 {
		t.Fatalf("suggestions for an exact name: %q", e.DidYouMean)
	}
}
