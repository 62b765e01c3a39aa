package nofollowtest

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// inotify is read synchronously: the kernel queues an event inside the
// system call that caused it, so once that call returned, Seen finds the
// event queued. No goroutine, no timing.
type inotify struct {
	fd   int
	dirs map[int32]string
}

func watch(dir string) (*inotify, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, err
	}
	w := &inotify{fd: fd, dirs: map[int32]string{}}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		wd, err := unix.InotifyAddWatch(fd, p, unix.IN_OPEN|unix.IN_ACCESS|unix.IN_DONT_FOLLOW)
		if err != nil {
			return err
		}
		w.dirs[int32(wd)] = p
		return nil
	})
	if err != nil {
		w.Close()
		return nil, err
	}
	return w, nil
}

// Seen drains the queued events: "open PATH" or "read PATH" per event, and
// "overflow" if the kernel dropped some (which a test must count as seen).
func (w *inotify) Seen() []string {
	var seen []string
	buf := make([]byte, 64<<10)
	for {
		n, err := unix.Read(w.fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			return seen
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := bytes.TrimRight(buf[off+unix.SizeofInotifyEvent:off+unix.SizeofInotifyEvent+int(ev.Len)], "\x00")
			off += unix.SizeofInotifyEvent + int(ev.Len)
			switch {
			case ev.Mask&unix.IN_Q_OVERFLOW != 0:
				seen = append(seen, "overflow")
			case ev.Mask&unix.IN_ACCESS != 0:
				seen = append(seen, "read "+filepath.Join(w.dirs[ev.Wd], string(name)))
			case ev.Mask&unix.IN_OPEN != 0:
				seen = append(seen, "open "+filepath.Join(w.dirs[ev.Wd], string(name)))
			}
		}
	}
}

func (w *inotify) Close() {
	if w.fd >= 0 {
		unix.Close(w.fd)
		w.fd = -1
	}
}

func selfTest(tb testing.TB, w Witness, probe string) {
	tb.Helper()
	if _, err := os.ReadFile(probe); err != nil {
		tb.Fatalf("witness self-test: %v", err)
	}
	if len(w.Seen()) == 0 {
		tb.Fatalf("witness self-test: reading %s was not seen", probe)
	}
}
