package nofollow

import "testing"

const runtimeHasLookupOnly = true

// forceWalk makes this test take the component walk instead of openat2.
func forceWalk(t *testing.T) {
	old := noOpenat2.Load()
	noOpenat2.Store(true)
	t.Cleanup(func() { noOpenat2.Store(old) })
}
