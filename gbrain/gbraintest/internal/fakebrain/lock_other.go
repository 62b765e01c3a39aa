//go:build !unix

package fakebrain

import "sync"

var mu sync.Mutex

// lock serialises access within one process only: the fake's multi-process
// tests run on Unix.
func lock(string) (func(), error) {
	mu.Lock()
	return mu.Unlock, nil
}
