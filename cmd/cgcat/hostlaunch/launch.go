// Package hostlaunch starts an MCP server entry the way its host (Codex,
// OpenCode, Claude Code, Gemini CLI) would start it — the command, the
// arguments, the environment the host passes, the working directory and the
// host's start-up timeout — and speaks MCP to it: initialize, then
// tools/list. doctor and install use it to prove that an entry really
// starts (cgcat's own, and CodeGraph's), instead of trusting a file.
//
// It never writes a host file and never keeps a server running: every
// process it starts is closed (stdin first, then a signal) before it
// returns.
package hostlaunch

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cgcat/cgcat/cmd/cgcat/hostconfig"
)

// Launch is how a host starts an MCP stdio server.
type Launch struct {
	Command string
	Args    []string
	Env     []string // the whole environment of the child
	Dir     string
	Timeout time.Duration // initialize + tools/list
}

// For returns how host h starts s, from the host's own environment environ
// (os.Environ() of the process that runs the host). dir is the working
// directory used when the entry names none.
func For(h *hostconfig.Host, s hostconfig.Server, environ []string, dir string) Launch {
	env := map[string]string{}
	if h.Launch.EnvAllowlist != nil {
		for _, k := range append(slices.Clone(h.Launch.EnvAllowlist), s.EnvVars...) {
			if v, ok := lookup(environ, k); ok {
				env[k] = v
			}
		}
	} else {
		for _, kv := range environ {
			if k, v, ok := strings.Cut(kv, "="); ok {
				env[k] = v
			}
		}
	}
	for k, v := range s.Env {
		env[k] = v
	}
	l := Launch{Command: s.Command, Args: s.Args, Env: envList(env), Dir: s.Cwd, Timeout: s.Timeout}
	if l.Dir == "" {
		l.Dir = dir
	}
	if l.Timeout == 0 {
		l.Timeout = h.Launch.Timeout
	}
	return l
}

func lookup(environ []string, key string) (string, bool) {
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}

func envList(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}

// Resolve returns the file the command runs: an absolute path as is, a
// bare name looked up on the PATH the child gets (not this process's).
func (l Launch) Resolve() (string, bool) {
	if filepath.IsAbs(l.Command) || strings.ContainsRune(l.Command, os.PathSeparator) {
		return l.Command, true
	}
	path, _ := lookup(l.Env, "PATH")
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, l.Command)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode().Perm()&0o111 != 0 {
			return p, true
		}
	}
	return l.Command, false
}
