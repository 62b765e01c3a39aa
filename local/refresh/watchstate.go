package refresh

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/config"
	"github.com/cgcat/cgcat/local/lease"
	"github.com/cgcat/cgcat/local/pathid"
)

// The process that holds the watch lease tells every other process, through
// dataDir/watch.state, whether the catalog follows the disk right now: file
// events on, every directory a walk reaches watched, nothing read and not
// yet applied. Coverage is complete only while that holds (R36, R42); an
// answer that cannot say so names why (Following.Why).

// Modes of discovery.
const (
	ModeEvents  = "events"  // file events, with the periodic refresh as the safety net
	ModeRefresh = "refresh" // the periodic refresh alone
)

// WatchState is what the watching process publishes.
type WatchState struct {
	Pid  int    `json:"pid"`
	Mode string `json:"mode"`
	// Why says why the mode is refresh, or what the watcher is doing.
	Why string `json:"why,omitempty"`
	// Live: every directory a walk under Roots and Walk reaches is watched,
	// and the catalog was walked after the watches were in place.
	Live bool `json:"live"`
	// Pending: events were read and are not applied yet.
	Pending   bool      `json:"pending"`
	Since     time.Time `json:"since,omitzero"` // live since
	Walk      uint64    `json:"walk"`           // local.WalkKey of the watched settings
	Roots     []string  `json:"roots"`          // pathid.Key of each watched root
	Watches   int       `json:"watches"`
	Events    uint64    `json:"events"`
	Overflows uint64    `json:"overflows"`
	// LastOverflow is when events were last lost (the queue overflowed,
	// or a watch was refused).
	LastOverflow time.Time `json:"lastOverflow,omitzero"`
	// Interval is the refresh interval in force (shorter in refresh mode).
	IntervalSeconds int       `json:"intervalSeconds"`
	Updated         time.Time `json:"updated"`
}

func watchStatePath(dataDir string) string { return filepath.Join(dataDir, "watch.state") }

// WatchLeasePath is the lease of the one process that watches.
func WatchLeasePath(dataDir string) string { return filepath.Join(dataDir, "watch.lease") }

// writeWatchState replaces the file whole (a reader never sees half).
func writeWatchState(dataDir string, s WatchState) {
	s.Pid, s.Updated = os.Getpid(), time.Now().UTC()
	b, err := json.Marshal(s)
	if err != nil {
		return
	}
	tmp := watchStatePath(dataDir) + ".tmp" + fmt.Sprint(os.Getpid())
	if os.WriteFile(tmp, b, 0o644) != nil || os.Rename(tmp, watchStatePath(dataDir)) != nil {
		os.Remove(tmp)
	}
}

// ReadWatchState returns what the watching process last published, and
// whether that process is alive and running (a dead or stopped one
// publishes nothing true).
func ReadWatchState(dataDir string) (WatchState, bool) {
	path := watchStatePath(dataDir)
	fi, err := os.Stat(path)
	if err != nil {
		return WatchState{}, false
	}
	st := stateStamp{path: path, size: fi.Size(), mod: fi.ModTime().UnixNano()}
	if id, err := pathid.FileID(path); err == nil {
		st.ino = id.Ino
	}
	now := time.Now()
	stateCache.Lock()
	defer stateCache.Unlock()
	c := &stateCache
	// The file is read again when it looks changed, or was written within
	// the last second (a rewrite in the same clock tick can look alike).
	if c.stamp != st || now.Sub(fi.ModTime()) < time.Second {
		var s WatchState
		b, err := os.ReadFile(path)
		if err != nil || json.Unmarshal(b, &s) != nil {
			c.stamp = stateStamp{}
			return WatchState{}, false
		}
		c.stamp, c.state, c.checked = st, s, time.Time{}
	}
	// The watcher's process is looked at again every 100 ms at most: a
	// call burst does not pay for /proc each time.
	if now.Sub(c.checked) > 100*time.Millisecond {
		alive, stopped := lease.Process(c.state.Pid)
		c.running, c.checked = alive && !stopped, now
	}
	return c.state, c.running
}

// stateCache keeps the last watch state read, by what its file looked like.
var stateCache struct {
	sync.Mutex
	stamp   stateStamp
	state   WatchState
	running bool
	checked time.Time
}

type stateStamp struct {
	path      string
	ino       uint64
	size, mod int64
}

// Following says whether the catalog follows the disk for a configuration:
// when it does not, Why names the limit in force.
type Following struct {
	OK  bool
	Why string
}

// Follows reports whether every change under cfg's discovery roots since
// the last finished pass has been applied, as far as any process can
// know: a live watcher of these roots under these walk settings, with
// nothing pending.
func Follows(cfg *config.Config) Following {
	s, running := ReadWatchState(cfg.DataDir)
	switch {
	case s.Pid == 0:
		return Following{Why: "no cgcat serve is watching the discovery roots for changes, so a project made, moved or deleted since the last scan may be missing"}
	case !running:
		if alive, stopped := lease.Process(s.Pid); alive && stopped {
			return Following{Why: fmt.Sprintf("the process that watches the discovery roots (pid %d) is stopped, so recent changes may be missing", s.Pid)}
		}
		return Following{Why: "no cgcat serve is watching the discovery roots for changes, so a project made, moved or deleted since the last scan may be missing"}
	case s.Mode != ModeEvents:
		return Following{Why: fmt.Sprintf("file events are off (%s); changes are found by a refresh every %d s", s.Why, s.IntervalSeconds)}
	case s.Walk != local.WalkKey(cfg.Discovery.MaxDepth, cfg.Discovery.ExcludeNames, cfg.Discovery.FollowSymlinks) || !coversRoots(s.Roots, cfg.Discovery.Roots):
		return Following{Why: "the watcher follows other discovery settings than this configuration's (it catches up within seconds)"}
	case !s.Live:
		why := "the watcher is setting up its watches"
		if s.Why != "" {
			why = s.Why
		}
		return Following{Why: why + ", so recent changes may be missing for a moment"}
	case s.Pending:
		return Following{Why: "changes just seen on disk are being applied"}
	}
	return Following{OK: true}
}

func coversRoots(watched, roots []string) bool {
	for _, r := range roots {
		if !slices.Contains(watched, pathid.Key(r)) {
			return false
		}
	}
	return true
}
