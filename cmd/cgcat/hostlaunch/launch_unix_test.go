//go:build unix

package hostlaunch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// Every way a server can die before answering gives one message: the
// process ended, with its exit status, and its stderr in the Handshake.
// None of these depends on timing: whichever of "write: broken pipe" and
// "EOF on its stdout" the transport sees first, the answer is the same.

// shLaunch runs script with /bin/sh as a host would, with a deadline far
// beyond what any of these children needs.
func shLaunch(script string) Launch {
	return Launch{Command: "/bin/sh", Args: []string{"-c", script}, Env: []string{"PATH=" + os.Getenv("PATH")}, Timeout: time.Minute}
}

func TestExitBeforeReading(t *testing.T) {
	hs, err := Start(context.Background(), shLaunch("echo this is not MCP; echo broken >&2; exit 3"), "test", "1")
	var ended *EndedError
	if !errors.As(err, &ended) || ended.Status != "exit status 3" || ended.StillRunning {
		t.Fatalf("err %v, want the process ended (exit status 3)", err)
	}
	if got, want := err.Error(), "the process ended before answering initialize (exit status 3)"; got != want {
		t.Fatalf("message %q, want %q", got, want)
	}
	if hs == nil || strings.TrimSpace(hs.Stderr) != "broken" {
		t.Fatalf("stderr tail %+v", hs)
	}
}

func TestKilledBySignal(t *testing.T) {
	hs, err := Start(context.Background(), shLaunch("echo dying >&2; kill -KILL $$"), "test", "1")
	if err == nil || err.Error() != "the process ended before answering initialize (signal: killed)" {
		t.Fatalf("err %v", err)
	}
	if strings.TrimSpace(hs.Stderr) != "dying" {
		t.Fatalf("stderr %q", hs.Stderr)
	}
}

// startReady starts script and returns once it wrote "ready" to stderr.
func startReady(t *testing.T, script string) (*child, *TailBuffer) {
	t.Helper()
	tail := &TailBuffer{Max: 4096}
	ch, err := startChild(context.Background(), shLaunch(script), tail)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ch.stop)
	for !strings.Contains(tail.String(), "ready") {
		select {
		case <-ch.exited:
			t.Fatalf("child ended before it was ready: %s, stderr %q", ch.state, tail.String())
		case <-time.After(5 * time.Millisecond):
		}
	}
	return ch, tail
}

// The child closes its stdin and lingers before it exits: the request's
// write fails with a broken pipe (the failure the issue saw under load),
// and the answer still waits for the exit and gives its status.
func TestClosedStdinThenExit(t *testing.T) {
	ch, _ := startReady(t, "exec 0<&-; echo ready >&2; sleep 0.2; exit 4")
	err := handshake(context.Background(), ch, time.Minute, &Handshake{}, "test", "1")
	if !errors.Is(err, syscall.EPIPE) {
		t.Fatalf("err %v, want the process ended, seen by a broken pipe", err)
	}
	if got, want := err.Error(), "the process ended before answering initialize (exit status 4)"; got != want {
		t.Fatalf("message %q, want %q", got, want)
	}
}

// A child that closes both pipes and never exits is not called ended; it
// is stopped (SIGTERM) once Start gives up.
func TestClosedPipesStillRunning(t *testing.T) {
	ch, _ := startReady(t, "exec 0<&- 1>&-; echo ready >&2; exec sleep 600")
	err := handshake(context.Background(), ch, 200*time.Millisecond, &Handshake{}, "test", "1")
	var ended *EndedError
	if !errors.As(err, &ended) || !ended.StillRunning {
		t.Fatalf("err %v, want still running", err)
	}
	if !strings.HasPrefix(err.Error(), "the process closed its standard input or output before answering initialize and was still running 200ms later") {
		t.Fatalf("message %q", err)
	}
	ch.stop()
	if !ch.hasExited() || ch.state.String() != "signal: terminated" {
		t.Fatalf("after stop: %v", ch.state)
	}
}

// A child that answers initialize and ends before tools/list.
func TestEndedBeforeToolsList(t *testing.T) {
	answer := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":%q,"capabilities":{"tools":{}},"serverInfo":{"name":"half","version":"1"}}}`, mcp.LATEST_LEGACY_PROTOCOL_VERSION)
	hs, err := Start(context.Background(), shLaunch("read line; echo '"+answer+"'; read line; exit 5"), "test", "1")
	if err == nil || err.Error() != "the process ended before answering tools/list (exit status 5)" {
		t.Fatalf("err %v", err)
	}
	if hs.ServerName != "half" {
		t.Fatalf("handshake %+v", hs)
	}
}

// A child that keeps its pipes open and never answers runs into the
// host's timeout, and that is what the message says.
func TestNoAnswer(t *testing.T) {
	_, err := Start(context.Background(), Launch{Command: "/bin/sh", Args: []string{"-c", "exec sleep 600"}, Timeout: 200 * time.Millisecond}, "test", "1")
	if err == nil || err.Error() != "no answer to initialize within 200ms (the host gives up after that too)" {
		t.Fatalf("err %v", err)
	}
}

// The errors the transport gives for a lost peer, as they really arrive.
func TestLostPipe(t *testing.T) {
	write := func(errno error) error {
		return transport.NewError(fmt.Errorf("failed to write request: %w", &fs.PathError{Op: "write", Path: "|1", Err: errno}))
	}
	for _, err := range []error{write(syscall.EPIPE), write(syscall.ECONNRESET), transport.ErrTransportClosed,
		transport.NewError(transport.ErrTransportClosed), io.EOF, fmt.Errorf("read: %w", os.ErrClosed)} {
		if !lostPipe(err) {
			t.Errorf("%v is not seen as a lost pipe", err)
		}
	}
	for _, err := range []error{write(syscall.ENOSPC), context.DeadlineExceeded, errors.New("invalid JSON")} {
		if lostPipe(err) {
			t.Errorf("%v is seen as a lost pipe", err)
		}
	}
}

// A caller that gives up is told so, not that the process it had killed
// ended.
func TestCallerGivesUp(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	ch, _ := startReady(t, "echo ready >&2; exec sleep 600")
	done := make(chan error, 1)
	go func() { done <- handshake(ctx, ch, time.Minute, &Handshake{}, "test", "1") }()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
}
