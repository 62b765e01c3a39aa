package view

import (
	"errors"
	"os"
	"runtime/debug"
	"sync/atomic"
)

// A mapped base is memory backed by a file anyone with write access to the
// data dir can truncate or overwrite in place (`truncate`, `cp` or `rsync
// --inplace` restoring a backup). A read of a page past a truncated end is
// SIGBUS, which kills the process (and every other process reading that
// page). So every read of mapped memory runs guarded: a fault becomes a
// panic (debug.SetPanicOnFault), recovered at the method's end into a zero
// answer, and the base is marked faulted; and the file's identity is
// compared before each use (Moved), so a changed file is read again (its
// checksum checked) rather than trusted. The cost is a few nanoseconds a
// call: measured in PERFORMANCE.md ("damaged views").

// mapping is what a reader keeps of a mapped base's file.
type mapping struct {
	file    *os.File // kept open: fstat sees the mapped file, whatever its name now holds
	ident   fileIdent
	faulted atomic.Bool
}

// guard turns faults into panics for the calling goroutine; unguard, the
// deferred call, puts the setting back and recovers a fault. nil (a base
// read into memory) guards nothing.
func (m *mapping) guard() bool {
	if m == nil {
		return false
	}
	return debug.SetPanicOnFault(true)
}

func (m *mapping) unguard(old bool) {
	if m == nil {
		return
	}
	debug.SetPanicOnFault(old)
	if r := recover(); r != nil {
		if !isFault(r) {
			panic(r)
		}
		m.faulted.Store(true)
	}
}

// isFault reports whether a recovered value is a memory fault (the runtime
// error SetPanicOnFault makes of SIGBUS and SIGSEGV carries its address).
func isFault(r any) bool {
	_, ok := r.(interface{ Addr() uintptr })
	return ok
}

// errFault says a mapped file faulted while read (truncated under us).
var errFault = errors.New("a published catalog file changed while it was read")

// moved reports whether the mapped file changed since it was checked: its
// size, modification or status-change time (truncated, written in place),
// or it faulted.
func (m *mapping) moved() bool {
	if m == nil {
		return false
	}
	if m.faulted.Load() {
		return true
	}
	fi, err := m.file.Stat()
	return err != nil || identOf(fi) != m.ident
}

func (m *mapping) close() {
	if m != nil {
		m.file.Close()
	}
}

// Moved reports whether the base's file changed (or faulted) since it was
// opened: its answers can no longer be trusted, and a reader reads the
// published files again. A base read into memory never moves.
func (b *Base) Moved() bool {
	return b.mapped.moved() || b.index.Faulted()
}
