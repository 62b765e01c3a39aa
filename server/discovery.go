package server

import (
	"context"
	"time"

	"github.com/cgcat/cgcat/local/config"
)

// What answers need of discovery comes in through two interfaces that the
// composition root (cmd/cgcat) fills with package refresh's values. The
// answering layer never imports refresh, nor the store behind it, so it
// links no LevelDB (a test in this package checks that).

// Discovery is this process's discovery loop (refresh.Refresher).
type Discovery interface {
	// Running: this process walks right now.
	Running() bool
	// LastError is this process's last discovery failure (nil once a
	// round succeeds again).
	LastError() error
	// Kick asks for a round soon, from whichever process walks.
	Kick()
	// SliceNow moves an empty catalog's first pass on by one slice (R11).
	SliceNow(ctx context.Context, budget time.Duration)
	// RefreshNow walks every root to the end within budget; true when it
	// did.
	RefreshNow(ctx context.Context, budget time.Duration) bool
}

// Processes is what the processes of a data dir publish about discovery,
// whichever of them runs it (refresh.Processes).
type Processes interface {
	// Scanning: a live process walks a pass of dataDir now.
	Scanning(dataDir string) bool
	// Alive: a live process keeps discovery of dataDir going.
	Alive(dataDir string) bool
	// Follows: every change under cfg's roots since the last finished
	// pass has been applied; why not, when not.
	Follows(cfg *config.Config) (ok bool, why string)
}

// nobody is the Processes of a frontend that was given none: it knows of
// no process, so it never claims that one walks or follows the disk.
type nobody struct{}

func (nobody) Scanning(string) bool { return false }
func (nobody) Alive(string) bool    { return false }
func (nobody) Follows(*config.Config) (bool, string) {
	return false, "no process is known to watch the discovery roots for changes, so a project made, moved or deleted since the last scan may be missing"
}

// follows reports whether every change under cfg's roots has been applied.
func (f *Frontend) follows(cfg *config.Config) bool {
	ok, _ := f.opt.Processes.Follows(cfg)
	return ok
}
