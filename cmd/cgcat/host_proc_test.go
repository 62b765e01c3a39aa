//go:build unix

package main

// The host's processes as the acceptance steps see them, from /proc
// (Linux): the cgcat serve a host started, its children, open files and
// sockets, and killing it mid-session.

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// serveProcesses are the cgcat serve processes the running host started.
func (a *acceptance) serveProcesses() []int {
	host := a.r.hostPID()
	if host <= 0 {
		return nil
	}
	var out []int
	for _, pid := range descendants(host) {
		if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err == nil && exe == cgcatBin(a.t) {
			out = append(out, pid)
		}
	}
	return out
}

// noProxyFindings looks at each of the host's cgcat serve processes while
// it is alive: a proxy would have a child, an open CodeGraph database or a
// socket, or be the CodeGraph server's ancestor.
func (a *acceptance) noProxyFindings() []string {
	serves := a.serveProcesses()
	if len(serves) == 0 {
		return []string{"no cgcat serve process under the host while the session ran"}
	}
	var findings []string
	for _, pid := range serves {
		if kids := childPIDs(pid); len(kids) > 0 {
			findings = append(findings, fmt.Sprintf("cgcat serve %d has child processes %v", pid, kids))
		}
		fds, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", pid))
		for _, fd := range fds {
			if n := filepath.Base(fd); n == "0" || n == "1" || n == "2" {
				continue // stdio: a pipe or, from a node host, a socket pair
			}
			target, err := os.Readlink(fd)
			if err != nil {
				continue
			}
			if strings.Contains(target, "/.codegraph/") || strings.HasPrefix(target, "socket:") {
				findings = append(findings, fmt.Sprintf("cgcat serve %d holds %s open", pid, target))
			}
		}
		for _, cg := range descendants(a.r.hostPID()) {
			cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", cg))
			if bytes.Contains(cmdline, []byte("codegraph")) && slices.Contains(ancestors(cg), pid) {
				findings = append(findings, fmt.Sprintf("CodeGraph process %d (%q) descends from cgcat serve %d", cg, cmdline, pid))
			}
		}
	}
	return findings
}

// checkNoQueryLog: nothing cgcat keeps holds a code query of the session.
func (a *acceptance) checkNoQueryLog(t *testing.T) {
	t.Helper()
	err := filepath.WalkDir(a.dataDir, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, q := range []string{sharedSymbol, sdkSymbol} {
			if bytes.Contains(b, []byte(q)) {
				t.Errorf("cgcat's data dir file %s holds the code query %q", path, q)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// killServe kills the host's cgcat serve processes and waits until they
// are gone (or zombies the host has not reaped).
func (a *acceptance) killServe() (int, error) {
	serves := a.serveProcesses()
	if len(serves) == 0 {
		return 0, fmt.Errorf("no cgcat serve under the host")
	}
	for _, pid := range serves {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			return pid, err
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, pid := range serves {
		for alive(pid) {
			if time.Now().After(deadline) {
				return pid, fmt.Errorf("cgcat serve %d still runs after SIGKILL", pid)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	return serves[0], nil
}

// alive: the process exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(rest, "Z") && !strings.HasPrefix(rest, "X")
}

// parentPID reads a process's parent from /proc.
func parentPID(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// "pid (comm) S ppid ...": comm may hold spaces and parentheses.
	_, rest, _ := strings.Cut(string(b), ") ")
	f := strings.Fields(rest)
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

func ancestors(pid int) []int {
	var out []int
	for p := parentPID(pid); p > 1 && len(out) < 64; p = parentPID(p) {
		out = append(out, p)
	}
	return out
}

// descendants lists every process below root.
func descendants(root int) []int {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var out []int
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil || pid == root {
			continue
		}
		if slices.Contains(ancestors(pid), root) {
			out = append(out, pid)
		}
	}
	return out
}

// TestProcHelpersSeeAChild: the no-proxy check would see a proxy — a
// process below the one looked at is found as a child and a descendant
// (and its parent among its ancestors), and a killed one is no longer alive.
func TestProcHelpersSeeAChild(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc here")
	}
	cmd := exec.Command("sh", "-c", "sleep 60 & wait")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	var kid int
	deadline := time.Now().Add(30 * time.Second)
	for kid == 0 {
		if kids := childPIDs(cmd.Process.Pid); len(kids) > 0 {
			kid, _ = strconv.Atoi(kids[0])
		} else if time.Now().After(deadline) {
			t.Fatal("the shell's child never showed in /proc")
		} else {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if !slices.Contains(descendants(cmd.Process.Pid), kid) || !slices.Contains(ancestors(kid), cmd.Process.Pid) || !alive(kid) {
		t.Fatalf("child %d of %d: descendants %v, ancestors %v, alive %v", kid, cmd.Process.Pid, descendants(cmd.Process.Pid), ancestors(kid), alive(kid))
	}
	if err := syscall.Kill(kid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for alive(kid) {
		if time.Now().After(deadline) {
			t.Fatalf("%d still alive after SIGKILL", kid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
