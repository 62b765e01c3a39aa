//go:build unix

package gbrain_test

import (
	"errors"
	"syscall"
	"testing"

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
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	// stdin EOF is enough: the child exits by itself, not by the signal
	// that follows the 2 s grace (the fake exits 1 when SIGTERM stops it,
	// 0 on EOF).
	if pe := gbrain.HowEnded(c); pe.Code != 0 || pe.Signal != "" {
		t.Errorf("the child did not end by itself on stdin EOF: %+v", pe)
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
