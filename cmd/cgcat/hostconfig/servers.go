package hostconfig

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// Server is one MCP server entry as a host config declares it, read for
// checks (doctor) and for finding CodeGraph's own entry (install).
type Server struct {
	Name    string
	Command string
	Args    []string
	// Env is what the entry adds to the environment (Codex env, OpenCode
	// environment, Claude Code and Gemini CLI env).
	Env map[string]string
	// EnvVars are names the entry passes through from the host's own
	// environment (Codex env_vars).
	EnvVars []string
	Cwd     string
	URL     string // an HTTP/SSE server instead of a command
	// Disabled says why the host does not start it ("" when it does).
	Disabled string
	// Timeout is the entry's own start-up (or listing) timeout; zero means
	// the host's default.
	Timeout time.Duration
	// Raw is the entry as decoded, for host-specific checks.
	Raw map[string]any
	// Problem says why the entry is not usable as read ("" when it is).
	Problem string
}

// ReadServers returns the MCP servers the config file of the host called
// host declares, sorted by name.
func ReadServers(host string, src []byte) ([]Server, error) {
	h, ok := ByName(host)
	if !ok {
		return nil, fmt.Errorf("unknown host %q", host)
	}
	return h.ReadServers(src)
}

// read decodes one server entry.
func (sh serverShape) read(name string, m map[string]any) Server {
	s := Server{Name: name, Raw: m, Env: map[string]string{}}
	s.URL, _ = m["url"].(string)
	if s.URL == "" {
		s.URL, _ = m["httpUrl"].(string) // Gemini CLI
	}
	if sh.commandList {
		cmd, ok := stringList(m["command"])
		switch {
		case !ok:
			s.Problem = `"command" is not a list of strings`
		case len(cmd) > 0:
			s.Command, s.Args = cmd[0], cmd[1:]
		}
	} else {
		s.Command, _ = m["command"].(string)
		args, ok := stringList(m["args"])
		if !ok {
			s.Problem = "args is not a list of strings"
		}
		s.Args = args
	}
	envKey := sh.envKey
	if envKey == "" {
		envKey = "env"
	}
	if env, ok := m[envKey].(map[string]any); ok {
		for k, v := range env {
			if str, ok := v.(string); ok {
				s.Env[k] = str
			}
		}
	}
	s.EnvVars, _ = stringList(m["env_vars"])
	s.Cwd, _ = m["cwd"].(string)
	if en, ok := m["enabled"].(bool); ok && !en {
		s.Disabled = "enabled = false"
	}
	if dis, ok := m["disabled"].(bool); ok && dis {
		s.Disabled = "disabled = true"
	}
	if sh.timeout != nil {
		s.Timeout = sh.timeout(m)
	}
	return s
}

func stringList(v any) ([]string, bool) {
	if v == nil {
		return nil, true
	}
	list, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(list))
	for _, x := range list {
		s, ok := x.(string)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case float64:
		return n, true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// CodeGraphPackage is CodeGraph's npm package.
const CodeGraphPackage = "@colbymchenry/codegraph"

// IsCodeGraph reports whether s starts CodeGraph's own MCP server: the
// `codegraph` command (or a node/npx run of the npm package) with
// "serve --mcp".
func IsCodeGraph(s Server) bool {
	if s.URL != "" {
		return false
	}
	words := append([]string{s.Command}, s.Args...)
	named := false
	for _, w := range words {
		base := strings.ToLower(w[strings.LastIndexAny(w, `/\`)+1:]) // a Windows path too
		base = strings.TrimSuffix(strings.TrimSuffix(base, ".exe"), ".cmd")
		if base == "codegraph" || strings.Contains(w, CodeGraphPackage) {
			named = true
			break
		}
	}
	return named && slices.Contains(s.Args, "serve") && slices.Contains(s.Args, "--mcp")
}

// IsCodeGraphHTTP reports whether s is CodeGraph's MCP server reached over
// HTTP: a URL entry under CodeGraph's conventional name, or whose URL names
// codegraph. A URL alone cannot say more; doctor checks what it can of
// such an entry (the path space, seed section 10).
func IsCodeGraphHTTP(s Server) bool {
	if s.URL == "" {
		return false
	}
	return s.Name == DefaultCodeGraphServer || strings.Contains(strings.ToLower(s.URL), "codegraph")
}

// FindCodeGraph returns CodeGraph's own entry: an enabled one first, a
// stdio one before one over HTTP, and the conventional name before others.
func FindCodeGraph(servers []Server) (Server, bool) {
	var found []Server
	for _, s := range servers {
		if IsCodeGraph(s) || IsCodeGraphHTTP(s) {
			found = append(found, s)
		}
	}
	if len(found) == 0 {
		return Server{}, false
	}
	sort.SliceStable(found, func(i, j int) bool {
		a, b := found[i], found[j]
		if (a.Disabled == "") != (b.Disabled == "") {
			return a.Disabled == ""
		}
		if (a.URL == "") != (b.URL == "") {
			return a.URL == ""
		}
		return a.Name == DefaultCodeGraphServer && b.Name != DefaultCodeGraphServer
	})
	return found[0], true
}

// CodeGraphFlag is the cgcat serve flag that names the host's CodeGraph
// server; CodeGraphServerOf reads it from an entry's arguments.
const CodeGraphFlag = "--codegraph-server"

// CodeGraphServerOf returns the CodeGraph server name a cgcat entry passes
// (DefaultCodeGraphServer when it passes none).
func CodeGraphServerOf(args []string) string {
	for i, a := range args {
		if a == CodeGraphFlag && i+1 < len(args) {
			return args[i+1]
		}
		if v, ok := strings.CutPrefix(a, CodeGraphFlag+"="); ok {
			return v
		}
	}
	return DefaultCodeGraphServer
}
