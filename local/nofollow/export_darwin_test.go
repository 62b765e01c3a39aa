package nofollow

import "testing"

const runtimeHasLookupOnly = true

// forceWalk makes this test take the component walk instead of
// O_NOFOLLOW_ANY.
func forceWalk(t *testing.T) {
	old := noFollowAny.Load()
	noFollowAny.Store(true)
	t.Cleanup(func() { noFollowAny.Store(old) })
}
