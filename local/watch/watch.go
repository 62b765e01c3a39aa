// Package watch turns file events under the discovery roots into the
// places discovery must look at again: directories whose own entries
// changed (read them again), directories that appeared (walk them whole)
// and directories that went away (re-check the records below them). It is
// the acceleration of seed 000 section 5: the periodic, directory-cache
// validated refresh stays the safety net, and nothing here is trusted to
// be complete — a full event queue, a watch the kernel refused or a volume
// unmounted is said (Take's overflow, ErrLimit), and the caller walks
// everything again.
//
// It owns one inotify instance (Linux; elsewhere New reports
// ErrUnsupported) and the map from watch descriptors to directories. It
// watches exactly the directories it is handed, opened by the walk with no
// symlink in their path (through /proc/self/fd, so a directory swapped
// between the walk's open and the watch is not the one watched), and the
// .codegraph directories inside them. It never decides what a project is,
// never lists a directory, never writes anything, and knows nothing of the
// store: package scan reads what it names, package refresh decides when.
package watch

import (
	"errors"
	"path/filepath"
	"strings"
)

// ErrUnsupported: this platform has no file events we use.
var ErrUnsupported = errors.New("file events are not available on this platform")

// ErrLimit: the kernel refused another watch (fs.inotify.max_user_watches,
// or the memory behind it). The watch set is incomplete from then on.
var ErrLimit = errors.New("the system's limit on file watches was reached")

// Change is the work a batch of events asks for. Every path is absolute
// and clean; a path may be in more than one list.
type Change struct {
	// Shallow directories had entries added, removed or renamed (or their
	// .codegraph changed): read them again, not what lies below them.
	Shallow []string
	// Deep directories appeared (made, or moved in): walk them whole.
	Deep []string
	// Gone directories went away (deleted, moved out, unmounted): the
	// records at or below them need a direct re-check.
	Gone []string
}

// Empty reports a change with nothing to do.
func (c Change) Empty() bool { return len(c.Shallow)+len(c.Deep)+len(c.Gone) == 0 }

// Options tune a Watcher. The zero value is usable.
type Options struct {
	// MaxPending bounds the directories waiting to be looked at; past it
	// the watcher drops them and reports an overflow (walk everything):
	// a burst of thousands of events costs one full refresh, not memory.
	// Zero means 16384.
	MaxPending int
	// Source, when set, names the files whose appearance, removal or
	// rename in a watched directory matters (a project's manifests and
	// README: its metadata). Other files are ignored.
	Source func(name string) bool
}

// Stats are counters for doctor and benchmarks.
type Stats struct {
	Watches   int    // directories watched now (.codegraph included)
	Events    uint64 // events read
	Overflows uint64 // queue overflows (the kernel's or our own bound)
}

// markerDir is CodeGraph's index directory: watched for its database only.
const markerDir = ".codegraph"

// markerFile is the database whose appearance makes a project.
const markerFile = "codegraph.db"

// pending is the work gathered since the last Take.
type pending struct {
	shallow, deep, gone map[string]bool
	overflow            bool
	why                 string // what overflowed
}

func (p *pending) reset() {
	p.shallow, p.deep, p.gone = map[string]bool{}, map[string]bool{}, map[string]bool{}
	p.overflow, p.why = false, ""
}

func (p *pending) size() int { return len(p.shallow) + len(p.deep) + len(p.gone) }

func (p *pending) take() (Change, bool, string) {
	var c Change
	for d := range p.shallow {
		c.Shallow = append(c.Shallow, d)
	}
	for d := range p.deep {
		c.Deep = append(c.Deep, d)
	}
	for d := range p.gone {
		c.Gone = append(c.Gone, d)
	}
	over, why := p.overflow, p.why
	p.reset()
	return c, over, why
}

// within reports whether p is dir or lies below it (clean absolute paths).
func within(dir, p string) bool {
	return p == dir || strings.HasPrefix(p, dir) && (strings.HasSuffix(dir, "/") || p[len(dir)] == '/')
}

func isMarker(path string) bool { return filepath.Base(path) == markerDir }
