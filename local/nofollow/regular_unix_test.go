//go:build unix

package nofollow_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cgcat/cgcat/local/nofollow"
)

// ReadRegular never waits on what stands at a path and reads only regular
// files, bounded: a FIFO (whose plain open waits for a writer for ever), a
// device, a directory and a socket are refused from the opened descriptor;
// a symlink as the last name is refused unless followed.
func TestReadRegular(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink("file", link); err != nil {
		t.Fatal(err)
	}
	toDev := filepath.Join(dir, "zero")
	if err := os.Symlink("/dev/zero", toDev); err != nil {
		t.Fatal(err)
	}

	r, err := nofollow.ReadRegular(file, 4, false)
	if err != nil || string(r.Data) != "0123" || r.Whole() || r.Info.Size != 10 {
		t.Errorf("bounded read: %q whole=%v %v", r.Data, r.Whole(), err)
	}
	if r, err = nofollow.ReadRegular(file, 100, false); err != nil || string(r.Data) != "0123456789" || !r.Whole() {
		t.Errorf("whole read: %q %v", r.Data, err)
	}
	for _, tc := range []struct {
		path   string
		follow bool
		want   string
	}{
		{fifo, false, "a FIFO"},
		{fifo, true, "a FIFO"},
		{dir, true, "a directory"},
		{toDev, true, "a device"},
		{"/dev/null", false, "a device"},
	} {
		_, err := nofollow.ReadRegular(tc.path, 100, tc.follow)
		if !nofollow.IsNotRegular(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s (follow %v): %v, want %s refused", tc.path, tc.follow, err, tc.want)
		}
	}
	if _, err := nofollow.ReadRegular(link, 100, false); !nofollow.IsSymlink(err) {
		t.Errorf("a symlink as the last name, not followed: %v", err)
	}
	if r, err := nofollow.ReadRegular(link, 100, true); err != nil || string(r.Data) != "0123456789" {
		t.Errorf("a symlink followed: %q %v", r.Data, err)
	}
	if _, err := nofollow.ReadRegular("relative", 100, true); err == nil {
		t.Error("a relative path was accepted")
	}
}
