package watch

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"unsafe"

	"github.com/cgcat/cgcat/local/nofollow"
	"golang.org/x/sys/unix"
)

// Watcher is one inotify instance and what its watches stand for.
//
// Memory: one map entry per watched directory (descriptor → paths),
// about 100 bytes plus the path; a 112k-directory tree costs some 15 MB.
//
// One directory can have several paths (a bind mount shows it twice, and
// the kernel hands back one descriptor for both): each path the walk
// reached is kept, and an event names the change under every one of them,
// since each is a root of its own records (R14).
type Watcher struct {
	opt  Options
	file *os.File // the inotify descriptor, non-blocking, in Go's poller
	fd   int
	// ready is signalled (never blocks) when work is pending.
	ready chan struct{}
	done  chan struct{}

	mu      sync.Mutex
	dirs    map[int32][]string // watch descriptor → the directory's paths (a .codegraph too)
	pend    pending
	events  uint64
	overs   uint64
	limited bool // a watch was refused for the limit
}

// Masks: a directory's entries and its files written and closed (a
// manifest saved in place changes no entry: only Options.Source's names
// count), and a .codegraph's database (written in place too: a database
// that grows past the header becomes a project).
const (
	dirMask    = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_CLOSE_WRITE | unix.IN_ONLYDIR | unix.IN_EXCL_UNLINK
	markerMask = dirMask | unix.IN_MODIFY | unix.IN_ATTRIB
)

// New starts a watcher with no watches.
func New(opt Options) (*Watcher, error) {
	if opt.MaxPending <= 0 {
		opt.MaxPending = 16384
	}
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		if errors.Is(err, unix.EMFILE) {
			return nil, fmt.Errorf("%w (fs.inotify.max_user_instances)", ErrLimit)
		}
		return nil, fmt.Errorf("start file events: %w", err)
	}
	w := &Watcher{opt: opt, fd: fd, file: os.NewFile(uintptr(fd), "inotify"), ready: make(chan struct{}, 1), done: make(chan struct{}), dirs: map[int32][]string{}}
	w.pend.reset()
	go w.read()
	return w, nil
}

// Ready is signalled when Take has something to give.
func (w *Watcher) Ready() <-chan struct{} { return w.ready }

// Take returns the work gathered since the last call, and whether events
// were lost meanwhile (the queue overflowed, a watched volume went away):
// then the change is empty and everything must be walked again.
func (w *Watcher) Take() (c Change, overflow bool, why string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.pend.take()
}

// Pending reports whether work is waiting for Take.
func (w *Watcher) Pending() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.pend.size() > 0 || w.pend.overflow
}

// Stats reports the watcher's counters.
func (w *Watcher) Stats() Stats {
	w.mu.Lock()
	defer w.mu.Unlock()
	return Stats{Watches: len(w.dirs), Events: w.events, Overflows: w.overs}
}

// AddDir watches the open directory d (the walk opened it with no symlink
// in its path; the watch names that very directory, through its
// descriptor). A directory watched already keeps its watch (the kernel
// hands back the same descriptor), and this path is added to the ones it
// has (a bind mount: the same directory under two paths). ErrLimit when the
// kernel refuses more watches; a directory that vanished meanwhile is not
// an error.
func (w *Watcher) AddDir(d *nofollow.Dir) error {
	return w.add("/proc/self/fd/"+strconv.Itoa(d.Fd()), d.Path(), dirMask)
}

// AddMarkerIn watches the .codegraph directory inside the open directory
// d, opened relative to d with no symlink.
func (w *Watcher) AddMarkerIn(d *nofollow.Dir) error {
	m, err := d.OpenDir(markerDir)
	if err != nil {
		return nil // gone, or not a directory: the probe says so
	}
	defer m.Close()
	return w.add("/proc/self/fd/"+strconv.Itoa(m.Fd()), filepath.Join(d.Path(), markerDir), markerMask)
}

func (w *Watcher) add(name, path string, mask uint32) error {
	wd, err := unix.InotifyAddWatch(w.fd, name, mask)
	if err != nil {
		switch {
		case errors.Is(err, unix.ENOSPC), errors.Is(err, unix.ENOMEM):
			w.mu.Lock()
			w.limited = true
			w.mu.Unlock()
			return ErrLimit
		case errors.Is(err, unix.ENOENT), errors.Is(err, unix.EACCES), errors.Is(err, unix.ENOTDIR):
			return nil // gone or closed to us: the walk says so itself
		case errors.Is(err, unix.EBADF) && w.closed():
			return nil
		}
		return fmt.Errorf("watch %s: %w", path, err)
	}
	path = filepath.Clean(path)
	w.mu.Lock()
	if ps := w.dirs[int32(wd)]; !slices.Contains(ps, path) {
		w.dirs[int32(wd)] = append(ps, path)
	}
	w.mu.Unlock()
	return nil
}

// Limited reports whether a watch was ever refused for the system's limit.
func (w *Watcher) Limited() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.limited
}

func (w *Watcher) closed() bool {
	select {
	case <-w.done:
		return true
	default:
		return false
	}
}

// Close ends the watcher and releases every watch.
func (w *Watcher) Close() error {
	if w.closed() {
		return nil
	}
	close(w.done)
	return w.file.Close()
}

// read reads events until Close.
func (w *Watcher) read() {
	buf := make([]byte, 64<<10)
	for {
		n, err := w.file.Read(buf)
		if err != nil {
			if errors.Is(err, os.ErrClosed) || w.closed() {
				return
			}
			if errors.Is(err, syscall.EINTR) {
				continue
			}
			w.overflow("reading file events failed: " + err.Error())
			return
		}
		w.mu.Lock()
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			end := off + unix.SizeofInotifyEvent + int(ev.Len)
			if end > n {
				break
			}
			name := string(trimNUL(buf[off+unix.SizeofInotifyEvent : end]))
			w.events++
			w.handle(ev.Wd, ev.Mask, name)
			off = end
		}
		work := w.pend.size() > 0 || w.pend.overflow
		w.mu.Unlock()
		if work {
			select {
			case w.ready <- struct{}{}:
			default:
			}
		}
	}
}

func trimNUL(b []byte) []byte {
	for i, c := range b {
		if c == 0 {
			return b[:i]
		}
	}
	return b
}

// overflow drops the pending work: everything must be walked again.
func (w *Watcher) overflow(why string) {
	w.mu.Lock()
	w.overflowLocked(why)
	w.mu.Unlock()
	select {
	case w.ready <- struct{}{}:
	default:
	}
}

func (w *Watcher) overflowLocked(why string) {
	w.pend.reset()
	w.pend.overflow, w.pend.why = true, why
	w.overs++
}

// handle turns one event into pending work (w.mu held), under every path
// of the watched directory.
func (w *Watcher) handle(wd int32, mask uint32, name string) {
	if mask&unix.IN_Q_OVERFLOW != 0 {
		w.overflowLocked("the kernel's event queue overflowed (fs.inotify.max_queued_events)")
		return
	}
	if w.pend.overflow {
		return // everything is walked again anyway
	}
	if mask&unix.IN_IGNORED != 0 {
		delete(w.dirs, wd)
		return
	}
	// A copy: handling a move forgets paths of this very descriptor.
	for _, dir := range slices.Clone(w.dirs[wd]) {
		w.handleAt(dir, mask, name)
		if w.pend.overflow {
			return
		}
	}
}

// handleAt turns one event on the directory at dir into pending work.
func (w *Watcher) handleAt(dir string, mask uint32, name string) {
	switch {
	case mask&unix.IN_UNMOUNT != 0:
		w.pend.gone[dir] = true
		w.pend.shallow[filepath.Dir(dir)] = true
		return
	}
	if isMarker(dir) {
		// Only the database (or the directory itself) decides a project.
		if name == markerFile || mask&(unix.IN_DELETE_SELF|unix.IN_MOVE_SELF) != 0 {
			w.pend.shallow[filepath.Dir(dir)] = true
		}
		if mask&unix.IN_MOVE_SELF != 0 {
			w.forget(dir)
		}
		w.bound()
		return
	}
	switch {
	case mask&(unix.IN_DELETE_SELF|unix.IN_MOVE_SELF) != 0:
		w.pend.gone[dir] = true
		w.pend.shallow[filepath.Dir(dir)] = true
		if mask&unix.IN_MOVE_SELF != 0 {
			w.forget(dir)
		}
	case name == "":
	case name == markerDir:
		w.pend.shallow[dir] = true
	case mask&unix.IN_ISDIR != 0:
		child := filepath.Join(dir, name)
		w.pend.shallow[dir] = true
		if mask&(unix.IN_CREATE|unix.IN_MOVED_TO) != 0 {
			w.pend.deep[child] = true
		} else {
			w.pend.gone[child] = true
			if mask&unix.IN_MOVED_FROM != 0 {
				w.forget(child) // its watches now name paths it left
			}
		}
	case w.opt.Source != nil && w.opt.Source(name):
		w.pend.shallow[dir] = true
	}
	w.bound()
}

// bound turns pending work past MaxPending into an overflow.
func (w *Watcher) bound() {
	if w.pend.size() > w.opt.MaxPending {
		w.overflowLocked(fmt.Sprintf("more than %d directories changed at once", w.opt.MaxPending))
	}
}

// forget drops the paths at or below dir (w.mu held): a directory moved
// away keeps its watches, under paths it no longer has; the walk of the
// place it moved to watches it again. A watch whose directory keeps
// another path (a bind mount's other side) stays for that path.
func (w *Watcher) forget(dir string) {
	for wd, ps := range w.dirs {
		kept := slices.DeleteFunc(ps, func(p string) bool { return within(dir, p) })
		if len(kept) == 0 {
			_, _ = unix.InotifyRmWatch(w.fd, uint32(wd))
			delete(w.dirs, wd)
		} else {
			w.dirs[wd] = kept
		}
	}
}

// Forget drops the watches at or below dir (a root no longer configured).
func (w *Watcher) Forget(dir string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.forget(filepath.Clean(dir))
}
