//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cgcat/cgcat/local/config"
	"github.com/cgcat/cgcat/local/lease"
	"github.com/cgcat/cgcat/local/scan"
)

// signalled is one command run to its longest blocking phase, then sent
// SIGTERM.
type signalled struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *lineWatch
	stderr *lineWatch
	exited chan error
}

// lineWatch keeps what a process writes and tells when a line containing
// a given text came.
type lineWatch struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	lines chan string
}

func (w *lineWatch) pump(r io.Reader) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		w.mu.Lock()
		w.buf.WriteString(sc.Text() + "\n")
		w.mu.Unlock()
		select {
		case w.lines <- sc.Text():
		default:
		}
	}
	close(w.lines)
}

func (w *lineWatch) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// startSignalled starts the real cgcat with args and stdin held open.
func startSignalled(t *testing.T, env []string, args ...string) *signalled {
	t.Helper()
	cmd := exec.Command(cgcatBin(t), args...)
	cmd.Env = env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &signalled{cmd: cmd, stdin: stdin, exited: make(chan error, 1),
		stdout: &lineWatch{lines: make(chan string, 64)}, stderr: &lineWatch{lines: make(chan string, 64)}}
	go s.stdout.pump(stdout)
	go s.stderr.pump(errPipe)
	go func() { s.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		stdin.Close()
	})
	return s
}

// waitStderr waits (a hang detector bounds it) for a stderr line holding
// want.
func (s *signalled) waitStderr(t *testing.T, want string) { t.Helper(); s.wait(t, s.stderr, want) }

func (s *signalled) wait(t *testing.T, w *lineWatch, want string) {
	t.Helper()
	deadline := time.After(hangLimit)
	for {
		select {
		case line, ok := <-w.lines:
			if !ok {
				t.Fatalf("exited before saying %q:\n%s", want, w.String())
			}
			if strings.Contains(line, want) {
				return
			}
		case <-deadline:
			t.Fatalf("never said %q:\n%s\nstderr:\n%s", want, w.String(), s.stderr.String())
		}
	}
}

// term sends SIGTERM and waits for the process to exit by itself (a hang
// detector kills it after hangLimit and fails). It returns how long the
// exit took (logged: the figures of PERFORMANCE.md) and the exit status.
func (s *signalled) term(t *testing.T) (time.Duration, int) {
	t.Helper()
	sent := time.Now()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-s.exited:
		took := time.Since(sent)
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
		return took, code
	case <-time.After(hangLimit):
		t.Fatalf("ignored SIGTERM for %s\nstderr:\n%s", hangLimit, s.stderr.String())
	}
	return 0, 0
}

// silentGBrain writes a GBrain "server" that starts, says so in a file,
// ignores SIGTERM and never answers the MCP handshake: a connection that
// waits for it is the longest wait gbrain sync and doctor can have.
func silentGBrain(t *testing.T, dir string) (command, started string) {
	t.Helper()
	command = filepath.Join(dir, "silent-gbrain")
	started = filepath.Join(dir, "silent-gbrain.started")
	writeTestFile(t, command, fmt.Sprintf("#!/bin/sh\ntrap '' TERM\necho $$ > %q\nwhile :; do sleep 1; done\n", started))
	if err := os.Chmod(command, 0o755); err != nil {
		t.Fatal(err)
	}
	return command, started
}

// waitFile waits for a file to exist (a hang detector bounds it).
func waitFile(t *testing.T, p string) {
	t.Helper()
	for deadline := time.Now().Add(hangLimit); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(p); err == nil && len(b) > 0 {
			return
		}
	}
	t.Fatalf("%s never appeared", p)
}

// TestSIGTERMEndsEveryCommand: every command stops soon after SIGTERM in
// its longest blocking phase (issue 23: a scan stuck on a FIFO ignored
// SIGTERM for good). Each case waits for the command to be inside that
// phase, signals it, and waits for it to exit by itself; the time it took
// is logged (go test -v -run TestSIGTERMEndsEveryCommand ./cmd/cgcat/).
func TestSIGTERMEndsEveryCommand(t *testing.T) {
	e := newTestEnv(t)
	fakeProject(t, filepath.Join(e.root, "sig-a"), "sig-a-pkg")
	e.writeConfig(t)
	env := os.Environ()
	gbCommand, gbStarted := silentGBrain(t, e.base)
	gbCfg := filepath.Join(e.base, "gbrain-config.json")
	{
		cfg, err := config.AdHoc([]string{e.root}, filepath.Join(e.base, "data-gb"))
		if err != nil {
			t.Fatal(err)
		}
		cfg.GBrain.Enabled = true
		cfg.GBrain.ExpectedSource = "cgcat-test"
		cfg.Connections = map[string]config.Connection{cfg.GBrain.ConnectionRef: {Command: gbCommand}}
		b, err := config.Marshal(cfg)
		if err != nil {
			t.Fatal(err)
		}
		writeTestFile(t, gbCfg, string(b))
	}
	if err := os.MkdirAll(e.dataDir, 0o755); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name string
		// run starts the command and returns once it is in its blocking
		// phase.
		run func(t *testing.T) *signalled
		// wantCode: the exit status a command that stops by itself gives.
		wantCode []int
	}{
		{"scan waiting for the scan lease", func(t *testing.T) *signalled {
			held, err := lease.TryAcquire(scan.LeasePath(e.dataDir))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { held.Release() })
			s := startSignalled(t, env, "scan", "--config", e.cfgPath)
			s.waitStderr(t, "waiting for it")
			return s
		}, []int{1}},
		{"serve waiting for requests", func(t *testing.T) *signalled {
			s := startSignalled(t, env, "serve", "--config", e.cfgPath)
			fmt.Fprintln(s.stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
			s.stdin.Write([]byte("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"local_codegraph_projects\",\"arguments\":{}}}\n"))
			s.wait(t, s.stdout, `"id":2`)
			return s
		}, []int{0}},
		{"gbrain sync waiting for GBrain's handshake", func(t *testing.T) *signalled {
			os.Remove(gbStarted)
			s := startSignalled(t, env, "gbrain", "sync", "--config", gbCfg)
			waitFile(t, gbStarted)
			return s
		}, []int{1}},
		{"doctor waiting for GBrain's handshake", func(t *testing.T) *signalled {
			os.Remove(gbStarted)
			s := startSignalled(t, env, "doctor", "--config", gbCfg)
			waitFile(t, gbStarted)
			return s
		}, []int{1}},
		{"install stuck opening a host file that is a FIFO", func(t *testing.T) *signalled {
			// A plain open of a FIFO waits in the kernel, where no context
			// reaches: only the exit after signalGrace ends it.
			if _, err := os.Stat("/proc/self/task"); err != nil {
				t.Skip("needs /proc to see where the process waits")
			}
			if err := os.MkdirAll(e.codexHome, 0o755); err != nil {
				t.Fatal(err)
			}
			fifo := filepath.Join(e.codexHome, "config.toml")
			if err := syscall.Mkfifo(fifo, 0o644); err != nil {
				t.Skip("mkfifo:", err)
			}
			t.Cleanup(func() { os.Remove(fifo) })
			s := startSignalled(t, env, "install", "codex", "--config", e.cfgPath)
			waitInKernel(t, s.cmd.Process.Pid, "wait_for_partner")
			return s
		}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.run(t)
			took, code := s.term(t)
			t.Logf("exited %v after SIGTERM, status %d", took.Round(time.Millisecond), code)
			ok := code == 128+int(syscall.SIGTERM)
			for _, c := range tc.wantCode {
				ok = ok || code == c
			}
			if !ok {
				t.Errorf("exit status %d after SIGTERM, want %v or %d\nstderr:\n%s", code, tc.wantCode, 128+int(syscall.SIGTERM), s.stderr.String())
			}
		})
	}
	// Nothing was left behind: the scan lease is free, and a scan runs.
	ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
	defer cancel()
	if out, errOut, err := runHangable(t, "scan", "--config", e.cfgPath); err != nil || ctx.Err() != nil {
		t.Fatalf("a scan after the signals: %v\n%s\n%s", err, out, errOut)
	}
}

// waitInKernel waits until a thread of pid waits in the kernel function
// wchan (Linux /proc; a hang detector bounds it).
func waitInKernel(t *testing.T, pid int, wchan string) {
	t.Helper()
	for deadline := time.Now().Add(hangLimit); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/wchan", pid))
		for _, task := range tasks {
			if b, _ := os.ReadFile(task); string(b) == wchan {
				return
			}
		}
	}
	t.Fatalf("pid %d never waited in %s", pid, wchan)
}
