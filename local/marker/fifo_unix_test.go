//go:build unix

package marker_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cgcat/cgcat/local/marker"
)

// A FIFO where the index file should be is not a project, and the probe
// never waits on it (a plain open of a FIFO waits for a writer for ever).
func TestProbeFIFOIndex(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, marker.Dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, marker.Dir, marker.File), 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	done := make(chan marker.Verdict)
	go func() { done <- marker.Probe(dir) }()
	select {
	case v := <-done:
		if v.Project || !strings.Contains(v.Why, "not a regular file") {
			t.Errorf("a FIFO index: %+v", v)
		}
	case <-time.After(time.Minute):
		t.Fatal("Probe blocked on a FIFO index")
	}
}
