//go:build !linux

package watch

import "github.com/cgcat/cgcat/local/nofollow"

// Watcher is unavailable here: New reports ErrUnsupported, and discovery
// relies on its periodic refresh alone.
type Watcher struct{}

// New reports ErrUnsupported.
func New(Options) (*Watcher, error) { return nil, ErrUnsupported }

func (w *Watcher) Ready() <-chan struct{}          { return nil }
func (w *Watcher) Take() (Change, bool, string)    { return Change{}, false, "" }
func (w *Watcher) Pending() bool                   { return false }
func (w *Watcher) Stats() Stats                    { return Stats{} }
func (w *Watcher) AddDir(*nofollow.Dir) error      { return ErrUnsupported }
func (w *Watcher) AddMarkerIn(*nofollow.Dir) error { return ErrUnsupported }
func (w *Watcher) Limited() bool                   { return false }
func (w *Watcher) Close() error                    { return nil }
func (w *Watcher) Forget(dir string)               {}
