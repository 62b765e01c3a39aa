package refresh

import (
	"os"
	"path/filepath"
	"strconv"

	"github.com/cgcat/cgcat/local/config"
	"github.com/cgcat/cgcat/local/lease"
	"github.com/cgcat/cgcat/local/scan"
)

// A process whose loop keeps discovery going leaves a file named by its pid
// in dataDir/refreshers while the loop runs: an unfinished pass that nobody
// walks right now is resumed by such a process at its next round, or, when
// none lives, by the next scan. Either way it is idle until then: "running"
// is only a live lease holder (Scanning).

func presenceDir(dataDir string) string { return filepath.Join(dataDir, "refreshers") }

func register(dataDir string) (unregister func()) {
	dir := presenceDir(dataDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return func() {}
	}
	f := filepath.Join(dir, strconv.Itoa(os.Getpid()))
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		return func() {}
	}
	return func() { os.Remove(f) }
}

// Alive reports whether a live (and not stopped) process keeps discovery
// going on dataDir. Files of dead processes are removed on the way.
func Alive(dataDir string) bool {
	ents, err := os.ReadDir(presenceDir(dataDir))
	if err != nil {
		return false
	}
	found := false
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		alive, stopped := lease.Process(pid)
		switch {
		case !alive:
			os.Remove(filepath.Join(presenceDir(dataDir), e.Name()))
		case !stopped:
			found = true
		}
	}
	return found
}

// Scanning reports whether a live process holds the scan lease of dataDir
// and keeps it fresh: a pass is being walked right now.
func Scanning(dataDir string) bool {
	_, ok := lease.Active(scan.LeasePath(dataDir))
	return ok
}

// Processes tells the answering layer (package server, wired by cmd) what
// the processes of a data dir do for discovery.
type Processes struct{}

// Scanning is [Scanning].
func (Processes) Scanning(dataDir string) bool { return Scanning(dataDir) }

// Alive is [Alive].
func (Processes) Alive(dataDir string) bool { return Alive(dataDir) }

// Follows is [Follows], as a verdict and its reason.
func (Processes) Follows(cfg *config.Config) (bool, string) {
	f := Follows(cfg)
	return f.OK, f.Why
}
