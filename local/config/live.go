package config

import (
	"os"
	"sync"
	"time"
)

// Live is the config a long-running process answers with: it notices an
// edited file with one stat per call and loads it again. An edit that does
// not validate keeps the last valid config in force, and Current says why
// the new one was refused until the file is fixed. A process started with
// an invalid file has no valid config yet: Current returns nil and the
// error, and the process can still say so instead of dying.
type Live struct {
	path     string // "" for a config made from flags: it never changes
	override func(*Config)

	mu    sync.Mutex
	cur   *Config
	err   error
	stamp fileStamp
}

type fileStamp struct {
	mod  time.Time
	size int64
	ok   bool
}

func stampOf(path string) fileStamp {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}
	}
	return fileStamp{mod: fi.ModTime(), size: fi.Size(), ok: true}
}

// NewLive follows the file at path, starting from cfg (nil when the file
// did not load; err then says why). override, when set, is applied to
// every config loaded (flags that beat the file, such as --data-dir).
func NewLive(path string, cfg *Config, err error, override func(*Config)) *Live {
	l := &Live{path: path, cur: cfg, err: err, override: override}
	if path != "" {
		l.stamp = stampOf(path)
	}
	return l
}

// Fixed is a Live config that never changes (flags, tests).
func Fixed(cfg *Config) *Live { return &Live{cur: cfg} }

// Current returns the config in force and, when the file on disk is not
// (invalid, unreadable), why. It costs one stat of the file; the file is
// read again only when that changed.
func (l *Live) Current() (*Config, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.path == "" {
		return l.cur, l.err
	}
	st := stampOf(l.path)
	if st == l.stamp {
		return l.cur, l.err
	}
	l.stamp = st
	cfg, err := Load(l.path)
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

// Path is the file followed ("" for none).
func (l *Live) Path() string { return l.path }
