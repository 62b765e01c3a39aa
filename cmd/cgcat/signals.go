package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// signalGrace is how long a command has, after SIGTERM or SIGINT, to stop
// by itself: its context is cancelled at once, and every wait in cgcat
// (a lease, a scan slice, stdin, a GBrain call, a child process) ends on
// it. A command still busy after signalGrace is stuck where nothing can
// cancel it (a system call on a hung mount, a child that ignores its
// signal), and the process exits anyway: every command honours a signal
// within a second (issue 23). That is safe because cgcat is built to be
// killed at any point (SIGKILL): the store and the views are written
// atomically, a lease dies with its process, and the scan queue resumes.
const signalGrace = 700 * time.Millisecond

// runUntilSignalled runs the command named by args until it returns or a
// signal stops it. A command that returns within signalGrace of the
// signal gives its own exit status (a serve whose host said stop exits 0);
// otherwise the status is 128 plus the signal's number, as a shell
// reports a process killed by it. A second signal exits at once.
func runUntilSignalled(args []string, in io.Reader, out, errOut io.Writer) int {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() { done <- run(ctx, args, in, out, errOut) }()
	var sig os.Signal
	select {
	case code := <-done:
		return code
	case sig = <-sigs:
	}
	cancel()
	grace := time.NewTimer(signalGrace)
	defer grace.Stop()
	select {
	case code := <-done:
		return code
	case <-sigs:
	case <-grace.C:
	}
	fmt.Fprintf(errOut, "cgcat: stopped by %s; the command was still waiting (on a file, a mount or a child process) %v after it\n", signalName(sig), signalGrace)
	return 128 + signalNumber(sig)
}

func signalName(sig os.Signal) string {
	if sig == syscall.SIGTERM {
		return "SIGTERM"
	}
	return "SIGINT"
}

func signalNumber(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return int(s)
	}
	return 2
}
