// Package nofollowtest is for tests: a witness that reports, from the
// kernel's side (inotify), every directory listed and every file opened or
// read inside a tree, whoever did it and by whatever path. A test that must
// prove a tree was never read watches it with one; the witness does not
// depend on the code under test telling the truth.
package nofollowtest

import "testing"

// Witness watches a tree for opens and reads.
type Witness interface {
	// Seen returns what was opened or read since the last call: one line
	// per event, the watched directory's path with the entry's name.
	Seen() []string
	// Close stops watching.
	Close()
}

// Watch starts a witness over dir and every directory below it (as they
// are when Watch is called) and checks, by reading probe (a file below
// dir), that it really sees reads. Where the platform has no inotify it
// logs so and returns nil: the caller's other checks must stand alone.
func Watch(tb testing.TB, dir, probe string) Witness {
	tb.Helper()
	w, err := watch(dir)
	if err != nil {
		tb.Logf("no file-system witness here (%v): only the outcome is checked", err)
		return nil
	}
	tb.Cleanup(w.Close)
	selfTest(tb, w, probe)
	return w
}
