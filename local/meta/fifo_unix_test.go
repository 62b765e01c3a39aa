//go:build unix

package meta_test

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/cgcat/cgcat/local/meta"
)

// A FIFO named like a manifest must neither block Read nor be read.
func TestReadFIFO(t *testing.T) {
	root := tree(t, "proj", map[string]string{"go.mod": "module example.com/fifo\n"})
	for _, n := range []string{"package.json", "README.md"} {
		if err := syscall.Mkfifo(filepath.Join(root, n), 0o644); err != nil {
			t.Skip("mkfifo:", err)
		}
	}
	done := make(chan []string)
	go func() { done <- meta.Read(root, meta.Limits{}).Problems }()
	select {
	case problems := <-done:
		want := []string{"package.json: not a regular file, skipped", "README.md: not a regular file, skipped"}
		if len(problems) != 2 || problems[0] != want[0] || problems[1] != want[1] {
			t.Errorf("problems %q, want %q", problems, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Read blocked on a FIFO")
	}
}
