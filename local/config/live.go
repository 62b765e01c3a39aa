package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/cgcat/cgcat/local/nofollow"
	"github.com/zeebo/xxh3"
)

// Live is the config a long-running process answers with: it notices an
// edited file with one stat per call and loads it again. An edit that does
// not validate keeps the last valid config in force, and Current says why
// the new one was refused until the file is fixed. A process started with
// an invalid file has no valid config yet: Current returns nil and the
// error, and the process can still say so instead of dying.
//
// A file is known by its identity, not by its modification time alone:
// device and inode, size, modification and status-change time. `cp -p`,
// `rsync -a` and `tar` put the old mtime back on a new content of the same
// size, but none of them can set the status-change time back, and a file
// renamed into place has another inode (or, reused at once, a new ctime).
// What a stat cannot tell apart is a rewrite within one clock tick of the
// file system (ctime and mtime equal to the tick, a reused inode): while
// the file last changed within racyConfig of the stat, the stamp is in
// doubt, and Current compares a hash of the content instead.
type Live struct {
	path     string // "" for a config made from flags: it never changes
	override func(*Config)

	mu    sync.Mutex
	cur   *Config
	err   error
	stamp fileStamp
	// sum is the xxh3 of the content cur (or err) came from; doubt: the
	// stamp proves nothing (racy, or taken apart from the read that made
	// cur), so the content is hashed on the next call.
	sum   uint64
	doubt bool
}

// fileStamp is what one stat says of the config file.
type fileStamp struct {
	dev, ino     uint64
	size         int64
	mtime, ctime int64 // nanoseconds; ctime 0 where the platform has none
	ok           bool
}

// racyConfig is longer than any local file system's timestamp tick (ext4
// follows the kernel's coarse clock, a few milliseconds; FAT's is two
// seconds). Tests may shorten it.
var racyConfig = 2 * time.Second

// MaxFileBytes bounds the config file cgcat reads (a real one is a few
// kilobytes).
const MaxFileBytes = 4 << 20

func statConfig(path string) fileStamp {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}
	}
	return stampOfInfo(fi)
}

func stampOfInfo(fi os.FileInfo) fileStamp {
	dev, ino, ctime := fileIdentity(fi)
	return fileStamp{dev: dev, ino: ino, size: fi.Size(), mtime: fi.ModTime().UnixNano(), ctime: ctime, ok: true}
}

// racy reports a stamp of a file that changed within racyConfig of now: a
// rewrite later in the same tick could leave every field as it is.
func (s fileStamp) racy(now time.Time) bool {
	return s.ok && now.UnixNano()-max(s.mtime, s.ctime) < racyConfig.Nanoseconds()
}

// readFile reads the config file without ever waiting on what stands there
// (a FIFO is refused, not opened for reading) and bounded, with the stamp
// of the file read (from its descriptor).
func readFile(path string) ([]byte, fileStamp, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fileStamp{}, err
	}
	r, err := nofollow.ReadRegular(abs, MaxFileBytes, true)
	if err != nil {
		if nofollow.IsNotRegular(err) {
			err = errors.New("it is not a regular file")
		} else {
			err = errors.Unwrap(err)
		}
		return nil, fileStamp{}, err
	}
	if !r.Whole() {
		return nil, fileStamp{}, fmt.Errorf("it is %d bytes; cgcat reads config files of at most %d", r.Info.Size, MaxFileBytes)
	}
	// The stat beside the read: same file, same fields as statConfig's.
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, fileStamp{}, err
	}
	st := stampOfInfo(fi)
	if st.size != r.Info.Size || (!r.Info.ID.IsZero() && (st.dev != r.Info.ID.Dev || st.ino != r.Info.ID.Ino)) {
		st.ok = false // replaced between the read and the stat: look again next time
	}
	return r.Data, st, nil
}

// NewLive follows the file at path, starting from cfg (nil when the file
// did not load; err then says why). override, when set, is applied to
// every config loaded (flags that beat the file, such as --data-dir).
func NewLive(path string, cfg *Config, err error, override func(*Config)) *Live {
	l := &Live{path: path, cur: cfg, err: err, override: override}
	if path != "" {
		// cfg was read before this stat: the file may have changed in
		// between, so the first call compares the content.
		l.stamp, l.doubt = statConfig(path), true
	}
	return l
}

// Fixed is a Live config that never changes (flags, tests).
func Fixed(cfg *Config) *Live { return &Live{cur: cfg} }

// Current returns the config in force and, when the file on disk is not
// (invalid, unreadable), why. It costs one stat of the file; the file is
// read again only when that changed, or when the last stat was in doubt.
func (l *Live) Current() (*Config, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.path == "" {
		return l.cur, l.err
	}
	st := statConfig(l.path)
	if st == l.stamp && st.ok && !l.doubt {
		return l.cur, l.err
	}
	data, rst, rerr := readFile(l.path)
	if rerr != nil {
		// Missing or unreadable: read again once the stat changes.
		l.stamp, l.doubt, l.sum = st, false, 0
		l.err = readError(l.path, rerr)
		return l.cur, l.err
	}
	sum := xxh3.Hash(data)
	same := sum == l.sum && l.sum != 0
	l.stamp, l.doubt, l.sum = rst, !rst.ok || rst.racy(time.Now()), sum
	if same {
		return l.cur, l.err
	}
	abs, _ := filepath.Abs(l.path)
	cfg, err := Parse(data, abs)
	if err != nil {
		l.err = err
		return l.cur, l.err
	}
	if l.override != nil {
		l.override(cfg)
	}
	l.cur, l.err = cfg, nil
	return l.cur, nil
}

// readError is why the config file could not be read.
func readError(path string, err error) error {
	return &Error{File: path, Problem: fmt.Sprintf("cannot read the config file: %v", err)}
}

// Path is the file followed ("" for none).
func (l *Live) Path() string { return l.path }
