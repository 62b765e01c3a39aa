//go:build unix

package meta_test

import (
	"fmt"
	"os"
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

// A FIFO where a linked worktree's git dir keeps commondir (or where .git
// itself stands, or in place of the root) must neither block Stamp nor
// Read: a plain open of a FIFO waits for a writer that never comes (issue
// 23: `cgcat scan` hung for good on one). The healthy parts still count.
func TestStampFIFO(t *testing.T) {
	root := tree(t, "proj", map[string]string{"go.mod": "module example.com/fifo\n"})
	gd := filepath.Join(filepath.Dir(root), "gitdir")
	if err := os.MkdirAll(gd, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(gd, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(gd, "commondir"), 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	if err := os.WriteFile(filepath.Join(root, ".git"), []byte("gitdir: "+gd+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	other := tree(t, "proj2", map[string]string{"go.mod": "module example.com/fifo2\n"})
	if err := syscall.Mkfifo(filepath.Join(other, ".git"), 0o644); err != nil {
		t.Fatal(err)
	}
	asRoot := filepath.Join(filepath.Dir(root), "fifo-root")
	if err := syscall.Mkfifo(asRoot, 0o644); err != nil {
		t.Fatal(err)
	}
	old := meta.RacyStamp
	meta.RacyStamp = 0 // the files were all just made
	defer func() { meta.RacyStamp = old }()
	done := make(chan string)
	go func() {
		s1, s2, s3 := meta.Stamp(root), meta.Stamp(other), meta.Stamp(asRoot)
		m := meta.Read(root, meta.Limits{})
		if s1 == 0 || s2 == 0 || s3 != 0 {
			done <- fmt.Sprintf("stamps %d %d %d: want a stamp for both projects and none for a FIFO root", s1, s2, s3)
			return
		}
		if m.Git.Branch != "main" || m.Name == "" {
			done <- fmt.Sprintf("metadata %+v: the HEAD beside the FIFO is still read", m)
			return
		}
		done <- ""
	}()
	select {
	case msg := <-done:
		if msg != "" {
			t.Error(msg)
		}
	case <-time.After(time.Minute):
		t.Fatal("Stamp or Read blocked on a FIFO")
	}
}
