//go:build unix

package main

import (
	"errors"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// ownGroup starts cmd in a process group of its own, so that what it
// starts (a GBrain connection) can be awaited after it is killed.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// waitGroupGone waits until no process of the group led by pid is left:
// a killed cgcat's GBrain child finishes the writes it had in flight (as a
// real server does), and only then is the brain's state final.
func waitGroupGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		err := syscall.Kill(-pid, 0)
		if errors.Is(err, syscall.ESRCH) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the processes of group %d did not end within a minute (%v)", pid, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
