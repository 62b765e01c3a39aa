package local

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/zeebo/xxh3"
)

// Coverage says how much of the configured roots discovery has walked. It is
// a claim an agent relies on ("no match, and everything was looked at"), so
// it is computed against the configuration in force when an answer is made,
// never remembered from an older one.
type Coverage string

const (
	CoverageComplete Coverage = "complete" // every current root walked to the end, no limit hit, no gap
	CoveragePartial  Coverage = "partial"  // something was not (yet) looked at
	CoverageNone     Coverage = "none"     // nothing is configured
)

// GapKind says why a place was not covered.
type GapKind string

const (
	GapUnreadable GapKind = "unreadable" // permission denied or an I/O error
	GapOffline    GapKind = "offline"    // a discovery root is not reachable
	GapName       GapKind = "name"       // a name that cannot travel through JSON exactly
	GapDepth      GapKind = "maxDepth"   // not entered: discovery.maxDepth
	// GapRejected is no gap in coverage: an index file that is there and
	// refused by the project rule (ScanState.Rejected).
	GapRejected GapKind = "rejectedIndex"
)

// Gap is a place discovery did not cover, and why.
type Gap struct {
	Path string  `json:"path"`
	Why  string  `json:"why"`
	Kind GapKind `json:"kind,omitempty"`
}

// RootCoverage is what the last finished pass knows of one discovery root.
type RootCoverage struct {
	Root      string    `json:"root"`
	Completed time.Time `json:"completed"` // when a pass last walked it to the end
	// Walk is the fingerprint of the walk settings that pass used (depth,
	// exclusions, symlinks): a pass under other settings proves nothing
	// about the current ones.
	Walk     uint64 `json:"walk"`
	Gaps     []Gap  `json:"gaps,omitempty"` // at most MaxGaps of them
	GapCount int    `json:"gapCount"`       // all of them
}

// MaxGaps bounds how many gaps are kept by path (per root and per pass);
// the rest are only counted.
const MaxGaps = 200

// ScanState is the persisted progress of discovery (package scan writes it,
// everyone reads it). Vocabulary: a pass is one complete traversal of every
// root; a round is the work done in one budget; a slice is one batch
// committed to the store in one write.
type ScanState struct {
	Pass         uint64    `json:"pass"`        // number of the current (or last) pass
	PassRunning  bool      `json:"passRunning"` // a pass has begun and not finished
	PassStarted  time.Time `json:"passStarted"`
	PassDirs     int       `json:"passDirs"`     // directories read in this pass
	PassProjects int       `json:"passProjects"` // projects seen in this pass
	PassGaps     []Gap     `json:"passGaps"`     // gaps found so far in this pass (bounded)
	PassGapCount int       `json:"passGapCount"`
	// PassRoots are the discovery roots the running pass walks; a root
	// added to the config joins the running pass.
	PassRoots []string `json:"passRoots,omitempty"`
	// ConfigKey fingerprints the walk settings the queue was built with.
	ConfigKey     uint64    `json:"configKey"`
	Queued        int       `json:"queued"`        // directories waiting in the queue
	LastCompleted time.Time `json:"lastCompleted"` // when the last pass finished
	// Roots is, per discovery root (keyed by pathid.Key), what the last pass
	// that finished it found.
	Roots map[string]RootCoverage `json:"roots,omitempty"`
	// Rejected are the index files the last finished pass found and
	// refused (a codegraph.db under 100 bytes, not SQLite, not a regular
	// file), with the reason: named by scan, doctor and config check, never
	// skipped in silence. At most MaxGaps; RejectedCount counts them all.
	// PassRejected gathers them while a pass runs.
	Rejected          []Gap  `json:"rejected,omitempty"`
	RejectedCount     int    `json:"rejectedCount,omitempty"`
	PassRejected      []Gap  `json:"passRejected,omitempty"`
	PassRejectedCount int    `json:"passRejectedCount,omitempty"`
	Rounds            uint64 `json:"rounds"`
	LastRound         Round  `json:"lastRound"`
	// Scanner is the pid of the process that last wrote this state.
	Scanner int `json:"scanner,omitempty"`
}

// Round summarises one budgeted round.
type Round struct {
	Started   time.Time `json:"started"`
	Dirs      int       `json:"dirs"`
	Projects  int       `json:"projects"`
	Elapsed   Millis    `json:"elapsed"`
	Truncated string    `json:"truncated,omitempty"` // which budget ended it early
	Finished  bool      `json:"finished"`            // the pass finished in this round
}

// Millis is a duration that marshals as whole milliseconds.
type Millis time.Duration

func (d Millis) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).Milliseconds()) }
func (d *Millis) UnmarshalJSON(b []byte) error {
	var ms int64
	err := json.Unmarshal(b, &ms)
	*d = Millis(time.Duration(ms) * time.Millisecond)
	return err
}

// GBrainContact is what the process that talks to GBrain last learned of
// it, shared through the store so every host and CLI twin tells the same
// gbrainState.
type GBrainContact struct {
	OK    bool      `json:"ok"`
	At    time.Time `json:"at"`
	Error string    `json:"error,omitempty"`
}

// WalkKey fingerprints the walk settings that decide what a pass can see:
// depth, excluded names and symlinks. Coverage proven under other settings
// proves nothing about the current ones.
func WalkKey(maxDepth int, excludeNames []string, followSymlinks bool) uint64 {
	h := xxh3.New()
	fmt.Fprintf(h, "%d|%v|%q", maxDepth, followSymlinks, excludeNames)
	return h.Sum64()
}
