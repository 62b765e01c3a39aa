//go:build unix

package gbrain_test

import (
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/cgcat/cgcat/gbrain"
	"github.com/cgcat/cgcat/gbrain/gbraintest"
)

func TestCloseEndsChild(t *testing.T) {
	fake := gbraintest.New(t, src)
	c, err := gbrain.Dial(ctx, fake.Connection(), gbrain.Options{ExpectedSource: src})
	if err != nil {
		t.Fatal(err)
	}
	pid := fake.Starts(t)[0].PID
	start := time.Now()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	// stdin EOF is enough: no wait for the 2 s grace or a signal.
	if d := time.Since(start); d > 1500*time.Millisecond {
		t.Errorf("Close took %s", d)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("child %d still there: %v", pid, err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	_, err = c.GetPage(ctx, "catalog/x", false)
	wantClass(t, err, gbrain.Transient, gbrain.ErrClosed)
}
