package doctor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cgcat/cgcat/cmd/cgcat/hostconfig"
	"github.com/cgcat/cgcat/cmd/cgcat/hostlaunch"
	"github.com/cgcat/cgcat/local/config"
	"github.com/cgcat/cgcat/local/pathid"
)

// HostInput is where one host keeps its files, as the command found them
// from its environment.
type HostInput struct {
	Host  string // hostconfig.Codex, OpenCode, Claude or Gemini
	Title string // "Codex", "OpenCode", "Claude Code", "Gemini CLI"
	// File is the config file holding the host's MCP servers; FileErr says
	// why it could not be located.
	File    string
	FileErr error
	// Install is the command that installs cgcat into this host.
	Install string
	// Name is cgcat's entry name (--name).
	Name string
	// CfgPath is the cgcat config doctor checked ("" when none).
	CfgPath string
	// Environ is the environment the host would run with; Dir the working
	// directory for servers whose entry names none.
	Environ []string
	Dir     string
	// Version is the host CLI's version line ("" when not read).
	Version string
	// AllowFile is where the allow rule lives: Claude Code's settings.json,
	// Gemini CLI's policy file for Name.
	AllowFile string
	// Version of this cgcat, sent in initialize.
	CgcatVersion string
}

// Host checks one host: cgcat's entry (started as the host starts it),
// CodeGraph's own entry (started, codegraph_explore with projectPath),
// and whether calls to both will ask for approval.
func Host(ctx context.Context, in HostInput) []Check {
	switch {
	case errors.Is(in.FileErr, hostconfig.ErrUnsafe):
		return []Check{Failf("merge the two files into one ("+in.Title+" reads both)", "%s", p(in.FileErr.Error()))}
	case in.FileErr != nil && in.Dir != "":
		return []Check{Failf("name an existing project directory", "%s", p(in.FileErr.Error()))}
	case in.FileErr != nil:
		return []Check{Infof("%s config not checked: %s", in.Title, p(in.FileErr.Error()))}
	}
	src, err := os.ReadFile(in.File)
	if errors.Is(err, fs.ErrNotExist) {
		return []Check{Infof("no %s config at %s (to use cgcat from %s: %s)", in.Title, p(in.File), in.Title, in.Install)}
	}
	if err != nil {
		return []Check{Failf("make it readable by this user", "cannot read %s: %s", p(in.File), p(err.Error()))}
	}
	var cs []Check
	if in.Version != "" {
		cs = append(cs, Infof("%s", p(in.Version)))
	}
	servers, err := hostconfig.ReadServers(in.Host, src)
	if err != nil {
		return append(cs, Failf(fmt.Sprintf("fix the syntax (%s cannot read the file either)", in.Title), "%s does not parse: %s", p(in.File), p(err.Error())))
	}
	var ours *hostconfig.Server
	for i := range servers {
		if servers[i].Name == in.Name {
			ours = &servers[i]
		}
	}
	if ours == nil {
		return append(cs, Infof("no MCP server named %q in %s (to add it: %s)", p(in.Name), p(in.File), in.Install))
	}
	where := fmt.Sprintf("%s.%s in %s", serversKey(in.Host), p(in.Name), p(in.File))
	reinstall := in.Install + " --force (from the cgcat binary you want " + in.Title + " to run)"
	entry, ok := entryChecks(in, *ours, where, reinstall)
	cs = append(cs, entry...)
	if ok {
		cs = append(cs, launchChecks(ctx, in, *ours, where, reinstall)...)
	}
	cs = append(cs, codegraphChecks(ctx, in, servers, *ours)...)
	return append(cs, promptChecks(in, src, servers, *ours)...)
}

func serversKey(host string) string {
	switch host {
	case hostconfig.Codex:
		return "mcp_servers"
	case hostconfig.OpenCode:
		return "mcp"
	}
	return "mcpServers"
}

// entryChecks reads what the host does with cgcat's entry before starting
// it; ok is false when it cannot be started at all.
func entryChecks(in HostInput, s hostconfig.Server, where, reinstall string) (cs []Check, ok bool) {
	if s.Problem != "" {
		return []Check{Failf(reinstall, "%s: %s", where, s.Problem)}, false
	}
	if s.URL != "" {
		return []Check{Failf(reinstall, "%s is an HTTP server (%s), not cgcat's stdio server", where, p(s.URL))}, false
	}
	if s.Disabled != "" {
		cs = append(cs, Failf("enable it, or: "+reinstall, "%s is disabled (%s)", where, s.Disabled))
	}
	m := s.Raw
	switch in.Host {
	case hostconfig.Codex:
		for _, t := range []string{hostconfig.ToolProjects, hostconfig.ToolResolve} {
			if list, ok := m["enabled_tools"].([]any); ok && !containsAny(list, t) {
				cs = append(cs, Failf("add it to enabled_tools, or: "+reinstall, "%s does not enable %s (enabled_tools)", where, t))
			}
			if list, ok := m["disabled_tools"].([]any); ok && containsAny(list, t) {
				cs = append(cs, Failf("remove it from disabled_tools", "%s disables %s (disabled_tools)", where, t))
			}
		}
	case hostconfig.OpenCode:
		if t, _ := m["type"].(string); t != "local" {
			return append(cs, Failf(reinstall, "%s has type %q; cgcat is a \"local\" (stdio) server", where, p(t))), false
		}
		if _, has := m["args"]; has {
			cs = append(cs, Failf("put the arguments into \"command\" (one list), or: "+reinstall, "%s has an \"args\" key, which OpenCode 1.x ignores", where))
		}
	case hostconfig.Claude:
		if t, _ := m["type"].(string); t != "" && t != "stdio" {
			return append(cs, Failf(reinstall, "%s has type %q; cgcat is a stdio server", where, p(t))), false
		}
	case hostconfig.Gemini:
		for _, key := range []string{"includeTools", "excludeTools"} {
			list, _ := m[key].([]any)
			for _, t := range []string{hostconfig.ToolProjects, hostconfig.ToolResolve} {
				if (key == "includeTools" && list != nil && !containsAny(list, t)) || (key == "excludeTools" && containsAny(list, t)) {
					cs = append(cs, Failf(fmt.Sprintf("fix %s, or: %s", key, reinstall), "%s hides %s (%s)", where, t, key))
				}
			}
		}
	}
	if s.Command == "" {
		return append(cs, Failf(reinstall, "%s has no command", where)), false
	}
	return cs, true
}

func containsAny(list []any, s string) bool {
	for _, x := range list {
		if x == any(s) {
			return true
		}
	}
	return false
}

// launchChecks checks the entry's command and config, then starts it as
// the host would and speaks MCP to it.
func launchChecks(ctx context.Context, in HostInput, s hostconfig.Server, where, reinstall string) []Check {
	var cs []Check
	l := hostlaunch.For(in.Host, s, in.Environ, in.Dir)
	if !filepath.IsAbs(l.Command) {
		cs = append(cs, Warnf(reinstall, "%s starts %q by PATH lookup; hosts started from a GUI or another shell may not find it", where, p(l.Command)))
	}
	cmdPath, _ := l.Resolve()
	fi, err := os.Stat(cmdPath)
	switch {
	case err != nil:
		return append(cs, Failf(reinstall, "%s runs %s, which does not exist (%s)", where, p(l.Command), p(errText(err))))
	case fi.IsDir() || fi.Mode().Perm()&0o111 == 0:
		return append(cs, Failf(reinstall, "%s runs %s, which is not an executable file", where, p(l.Command)))
	}
	cs = append(cs, Okf("%s: %s", where, p(QuoteArgs(append([]string{l.Command}, l.Args...)))))
	entryCfg := flagValue(l.Args, "--config")
	switch {
	case entryCfg == "":
		cs = append(cs, Warnf(reinstall, "%s starts cgcat without --config: it depends on the host's environment to find the config (Codex passes no XDG_* or CGCAT_CONFIG)", where))
	case !filepath.IsAbs(entryCfg):
		cs = append(cs, Failf(reinstall, "%s names a relative config path %q; the host's working directory decides what it means", where, p(entryCfg)))
	default:
		if _, err := config.Load(entryCfg); err != nil {
			cs = append(cs, Failf("fix that config file (cgcat config check --config "+p(entryCfg)+")", "%s uses config %s, which is not valid: %s", where, p(entryCfg), p(err.Error())))
		} else if in.CfgPath != "" && !pathid.Same(entryCfg, in.CfgPath) {
			cs = append(cs, Warnf("if that is not intended: "+reinstall, "%s uses config %s, not %s (checked above)", where, p(entryCfg), p(in.CfgPath)))
		}
	}
	hs, err := hostlaunch.Start(ctx, l, "cgcat-doctor", in.CgcatVersion)
	if err != nil {
		c := Failf(reinstall+"; or run the command above yourself to see its error", "started as %s starts it: %s", in.Title, p(err.Error()))
		if hs != nil && hs.Stderr != "" {
			for _, line := range hostlaunch.LastLines(hs.Stderr, 5) {
				c.Notes = append(c.Notes, "stderr: "+p(line))
			}
		}
		return append(cs, c)
	}
	started := Okf("started as %s starts it: %s %s answered initialize (protocol %s) and tools/list in %s", in.Title, p(hs.ServerName), p(hs.ServerVersion), p(hs.Protocol), hs.Elapsed.Round(time.Millisecond))
	if hs.ServerName != "cgcat" {
		started = Warnf(reinstall, "started as %s starts it, but it answered as %q %s, not cgcat", in.Title, p(hs.ServerName), p(hs.ServerVersion))
	}
	cs = append(cs, started)
	var missing, notRO []string
	for _, t := range []string{hostconfig.ToolProjects, hostconfig.ToolResolve} {
		tool, ok := hs.Tools[t]
		switch {
		case !ok:
			missing = append(missing, t)
		case tool.Annotations.ReadOnlyHint == nil || !*tool.Annotations.ReadOnlyHint:
			notRO = append(notRO, t)
		}
	}
	switch {
	case len(missing) > 0:
		cs = append(cs, Failf(reinstall, "tools/list lacks %s", strings.Join(missing, ", ")))
	case len(notRO) > 0:
		cs = append(cs, Warnf("upgrade cgcat; hosts may ask for approval on every call", "tools: %s, %s; not annotated readOnlyHint: %s", hostconfig.ToolProjects, hostconfig.ToolResolve, strings.Join(notRO, ", ")))
	default:
		cs = append(cs, Okf("tools: %s, %s (both readOnlyHint)", hostconfig.ToolProjects, hostconfig.ToolResolve))
	}
	return cs
}

func errText(err error) string {
	if u := errors.Unwrap(err); u != nil {
		return u.Error()
	}
	return err.Error()
}

// flagValue returns the value of --name in args ("--name V" or "--name=V").
func flagValue(args []string, name string) string {
	for i, a := range args {
		if a == name && i+1 < len(args) {
			return args[i+1]
		}
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v
		}
	}
	return ""
}

// QuoteArgs shows a command line, quoting the words that need it.
func QuoteArgs(parts []string) string {
	out := make([]string, len(parts))
	for i, s := range parts {
		out[i] = s
		if s == "" || strings.ContainsAny(s, " \t\n\"'\\$`;&|<>()*?") {
			out[i] = fmt.Sprintf("%q", s)
		}
	}
	return strings.Join(out, " ")
}
