package hostconfig

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"
	"github.com/tailscale/hujson"
)

// Host names, as the CLI spells them.
const (
	Codex    = "codex"
	OpenCode = "opencode"
	Claude   = "claude"
	Gemini   = "gemini"
)

// Hosts lists every host cgcat installs into, in the order it shows them.
var Hosts = []string{Codex, OpenCode, Claude, Gemini}

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

// ReadServers returns the MCP servers a host's config file declares,
// sorted by name. src is the file's content.
func ReadServers(host string, src []byte) ([]Server, error) {
	doc := map[string]any{}
	var key string
	switch host {
	case Codex:
		if err := toml.Unmarshal(src, &doc); err != nil {
			return nil, fmt.Errorf("%w as TOML: %v", ErrUnparsable, describeTOMLError(src, err))
		}
		key = codexServersKey
	case OpenCode, Claude, Gemini:
		std, err := hujson.Standardize(slices.Clone(src)) // it works in place
		if err == nil {
			err = json.Unmarshal(std, &doc)
		}
		if err != nil {
			return nil, fmt.Errorf("%w as JSON/JSONC: %v", ErrUnparsable, err)
		}
		key = "mcpServers"
		if host == OpenCode {
			key = "mcp"
		}
	default:
		return nil, fmt.Errorf("unknown host %q", host)
	}
	raw, _ := doc[key].(map[string]any)
	var out []Server
	for name, v := range raw {
		m, ok := v.(map[string]any)
		if !ok {
			out = append(out, Server{Name: name, Problem: fmt.Sprintf("%s.%s is not an object/table", key, name)})
			continue
		}
		if host == OpenCode && name == "servers" {
			continue // the OpenCode 2 shape: not a server
		}
		out = append(out, readServer(host, name, m))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func readServer(host, name string, m map[string]any) Server {
	s := Server{Name: name, Raw: m, Env: map[string]string{}}
	s.URL, _ = m["url"].(string)
	if s.URL == "" {
		s.URL, _ = m["httpUrl"].(string) // Gemini CLI
	}
	if host == OpenCode {
		if t, _ := m["type"].(string); t == "remote" {
			s.URL, _ = m["url"].(string)
		}
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
	envKey := "env"
	if host == OpenCode {
		envKey = "environment"
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
	switch host {
	case Codex:
		if n, ok := number(m["startup_timeout_sec"]); ok && n > 0 {
			s.Timeout = time.Duration(n * float64(time.Second))
		} else if n, ok := number(m["startup_timeout_ms"]); ok && n > 0 {
			s.Timeout = time.Duration(n * float64(time.Millisecond))
		}
	case OpenCode, Gemini:
		if n, ok := number(m["timeout"]); ok && n > 0 {
			s.Timeout = time.Duration(n * float64(time.Millisecond))
		}
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

// FindCodeGraph returns the name of the entry that starts CodeGraph's MCP
// server: an enabled one first, and the conventional name before others.
func FindCodeGraph(servers []Server) (Server, bool) {
	var found []Server
	for _, s := range servers {
		if IsCodeGraph(s) {
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

// CodeGraphAddCommand is how a person registers CodeGraph's MCP server in
// host under the conventional name.
func CodeGraphAddCommand(host string) string {
	switch host {
	case Codex:
		return "codex mcp add codegraph -- codegraph serve --mcp"
	case Claude:
		return "claude mcp add --scope user codegraph -- codegraph serve --mcp"
	case Gemini:
		return "gemini mcp add --scope user codegraph codegraph serve --mcp"
	}
	// CodeGraph 1.6.1's own installer writes OpenCode 2's "mcp.servers".
	return `add "codegraph": {"type": "local", "command": ["codegraph", "serve", "--mcp"], "enabled": true} to the "mcp" object by hand`
}
