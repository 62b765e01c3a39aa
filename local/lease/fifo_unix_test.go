//go:build unix

package lease

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A lease file replaced by a FIFO (or anything but a regular file) is
// refused at once, never waited on: taking, reading and judging the lease
// all return.
func TestFIFOLeaseFileIsRefused(t *testing.T) {
	p := filepath.Join(t.TempDir(), "scan.lease")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	done := make(chan string)
	go func() {
		_, err := TryAcquire(p)
		held, _ := Holder(p)
		_, active := Active(p)
		if err == nil || !strings.Contains(err.Error(), "not a regular file") || held || active {
			done <- "a FIFO lease file: " + errString(err)
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
		t.Fatal("blocked on a FIFO lease file")
	}
}

func errString(err error) string {
	if err == nil {
		return "no error"
	}
	return err.Error()
}
