package hostlaunch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
)

// child is a started server whose pipes and exit this package owns (the
// MCP transport only reads and writes the pipes), so that when a call fails
// it can say what happened to the process: that it ended, with its exit
// status, or that it is still running.
type child struct {
	cmd    *exec.Cmd
	stdin  *os.File      // our end of the child's stdin
	stdout *os.File      // our end of the child's stdout
	exited chan struct{} // closed once Wait returned; state is then set
	state  *os.ProcessState
}

// Closing the child's stdin lets a well-behaved server exit by itself;
// after stopGrace it gets SIGTERM, after killGrace more SIGKILL (the
// shutdown CodeGraph taught: stdin first, then a signal).
const (
	stopGrace = 2 * time.Second
	killGrace = 3 * time.Second
	// A grandchild that keeps the stderr pipe open must not hold Wait.
	stderrWait = time.Second
)

// startChild starts l with stdin and stdout as plain pipes (as a host makes
// them) and stderr written to stderr. It reaps the child in the background:
// exited is closed when the child has ended.
func startChild(ctx context.Context, l Launch, stderr io.Writer) (*child, error) {
	command, _ := l.Resolve()
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	cmd := exec.CommandContext(ctx, command, l.Args...)
	cmd.Env = l.Env
	cmd.Dir = l.Dir
	if cmd.Dir == "" {
		cmd.Dir = os.TempDir()
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, stderr
	cmd.WaitDelay = stderrWait
	err = cmd.Start()
	// The child holds its own copies of its ends now.
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, err
	}
	c := &child{cmd: cmd, stdin: inW, stdout: outR, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		c.state = cmd.ProcessState
		close(c.exited)
	}()
	return c, nil
}

// transport is an MCP stdio transport over the child's pipes.
func (c *child) transport() *transport.Stdio {
	return transport.NewIO(c.stdout, c.stdin, nil)
}

// hasExited reports whether the child has ended (and been reaped).
func (c *child) hasExited() bool {
	select {
	case <-c.exited:
		return true
	default:
		return false
	}
}

// awaitExit waits until the child has ended or ctx is done; it reports
// whether the child ended.
func (c *child) awaitExit(ctx context.Context) bool {
	select {
	case <-c.exited:
		return true
	case <-ctx.Done():
		return c.hasExited()
	}
}

// stop closes the child's stdin, then signals it if it does not exit, and
// returns once it has been reaped.
func (c *child) stop() {
	_ = c.stdin.Close()
	if !c.awaitFor(stopGrace) {
		if c.cmd.Process.Signal(syscall.SIGTERM) != nil { // no SIGTERM on Windows
			_ = c.cmd.Process.Kill()
		}
		if !c.awaitFor(killGrace) {
			_ = c.cmd.Process.Kill()
			<-c.exited
		}
	}
	_ = c.stdout.Close()
}

func (c *child) awaitFor(d time.Duration) bool {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return c.awaitExit(ctx)
}

// EndedError: the server process ended (or closed its pipes) before it
// answered Step. Status is how it ended ("exit status 3", "signal:
// killed"), empty while it still runs.
type EndedError struct {
	Step   string
	Status string
	// StillRunning: it closed its stdin or stdout but had not exited when
	// the step's time ran out.
	StillRunning bool
	Timeout      time.Duration
	// Err is how the transport noticed (EOF, a broken pipe, ...).
	Err error
}

func (e *EndedError) Unwrap() error { return e.Err }

func (e *EndedError) Error() string {
	if e.StillRunning {
		return fmt.Sprintf("the process closed its standard input or output before answering %s and was still running %s later (an MCP server keeps both open)", e.Step, e.Timeout)
	}
	if e.Status == "" {
		return "the process ended before answering " + e.Step
	}
	return fmt.Sprintf("the process ended before answering %s (%s)", e.Step, e.Status)
}

// explain turns the error of a failed MCP step into what happened to the
// process. Whatever way the transport noticed that the child is gone (end
// of its output, a closed transport, a broken pipe, a reset), the answer is
// the same: the process ended, with its exit status once it has been
// reaped. ctx bounds the wait for that exit (the step's own deadline).
func (c *child) explain(ctx context.Context, step string, err error, timeout time.Duration) error {
	if c.hasExited() || lostPipe(err) {
		// One that closed its stdin but lingers ends when it reads EOF.
		_ = c.stdin.Close()
		if !c.awaitExit(ctx) {
			return &EndedError{Step: step, StillRunning: true, Timeout: timeout, Err: err}
		}
		return &EndedError{Step: step, Status: exitStatus(c.state), Err: err}
	}
	if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("no answer to %s within %s (the host gives up after that too)", step, timeout)
	}
	return fmt.Errorf("%s failed: %v", step, err)
}

// lostPipe reports whether err says that the other end of a pipe is gone.
func lostPipe(err error) bool {
	for _, target := range []error{transport.ErrTransportClosed, io.EOF, io.ErrUnexpectedEOF, io.ErrClosedPipe,
		os.ErrClosed, syscall.EPIPE, syscall.ECONNRESET} {
		if errors.Is(err, target) {
			return true
		}
	}
	return lostPipeOS(err)
}

// exitStatus says how a process ended: "exit status 3", "signal: killed".
func exitStatus(s *os.ProcessState) string {
	if s == nil {
		return ""
	}
	return s.String()
}
