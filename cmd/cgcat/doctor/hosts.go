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
	Host *hostconfig.Host
	// Env is where the host's files are looked up (home, variables).
	Env hostconfig.Env
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
	// AllowFile is where the host's allow rule lives ("" for none).
	AllowFile string
	// Version of this cgcat, sent in initialize.
	CgcatVersion string
	// SkipStart: report CodeGraph's entry without starting it (install
	// --dry-run).
	SkipStart bool
}

// Host checks one host: cgcat's entry (started as the host starts it),
// CodeGraph's own entry (started, codegraph_explore with projectPath),
// and whether calls to both will ask for approval.
func Host(ctx context.Context, in HostInput) []Check {
	title := in.Host.Title
	switch {
	case errors.Is(in.FileErr, hostconfig.ErrUnsafe):
		return []Check{Failf("merge the two files into one ("+title+" reads both)", "%s", p(in.FileErr.Error()))}
	case in.FileErr != nil && in.Dir != "":
		return []Check{Failf("name an existing project directory", "%s", p(in.FileErr.Error()))}
	case in.FileErr != nil:
		return []Check{Infof("%s config not checked: %s", title, p(in.FileErr.Error()))}
	}
	src, err := os.ReadFile(in.File)
	if errors.Is(err, fs.ErrNotExist) {
		return []Check{Infof("no %s config at %s (to use cgcat from %s: %s)", title, p(in.File), title, in.Install)}
	}
	if err != nil {
		return []Check{Failf("make it readable by this user", "cannot read %s: %s", p(in.File), p(err.Error()))}
	}
	var cs []Check
	if in.Version != "" {
		cs = append(cs, Infof("%s", p(in.Version)))
	}
	servers, err := in.Host.ReadServers(src)
	if err != nil {
		return append(cs, Failf(fmt.Sprintf("fix the syntax (%s cannot read the file either)", title), "%s does not parse: %s", p(in.File), p(err.Error())))
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
	at := hostconfig.EntryAt{
		Where:     fmt.Sprintf("%s.%s in %s", in.Host.ServersKey, p(in.Name), p(in.File)),
		Reinstall: in.Install + " --force (from the cgcat binary you want " + title + " to run)",
	}
	entry, ok := entryChecks(in, *ours, at)
	cs = append(cs, entry...)
	readOnly := false
	if ok {
		var launched []Check
		launched, readOnly = launchChecks(ctx, in, *ours, at.Where, at.Reinstall)
		cs = append(cs, launched...)
	}
	cs = append(cs, CodeGraph(ctx, in, servers, *ours)...)
	return append(cs, promptChecks(in, src, servers, *ours, readOnly)...)
}

// entryChecks reads what the host does with cgcat's entry before starting
// it; ok is false when it cannot be started at all.
func entryChecks(in HostInput, s hostconfig.Server, at hostconfig.EntryAt) (cs []Check, ok bool) {
	where, reinstall := at.Where, at.Reinstall
	if s.Problem != "" {
		return []Check{Failf(reinstall, "%s: %s", where, s.Problem)}, false
	}
	if s.URL != "" {
		return []Check{Failf(reinstall, "%s is an HTTP server (%s), not cgcat's stdio server", where, p(s.URL))}, false
	}
	if s.Disabled != "" {
		cs = append(cs, Failf("enable it, or: "+reinstall, "%s is disabled (%s)", where, s.Disabled))
	}
	host, ok := in.Host.EntryChecks(s, at)
	cs = append(cs, fromFindings(host)...)
	if !ok {
		return cs, false
	}
	if s.Command == "" {
		return append(cs, Failf(reinstall, "%s has no command", where)), false
	}
	return cs, true
}

// launchChecks checks the entry's command and config, then starts it as
// the host would and speaks MCP to it; readOnly says that both tools were
// listed with readOnlyHint.
func launchChecks(ctx context.Context, in HostInput, s hostconfig.Server, where, reinstall string) (cs []Check, readOnly bool) {
	title := in.Host.Title
	l := hostlaunch.For(in.Host, s, in.Environ, in.Dir)
	if !filepath.IsAbs(l.Command) {
		cs = append(cs, Warnf(reinstall, "%s starts %q by PATH lookup; hosts started from a GUI or another shell may not find it", where, p(l.Command)))
	}
	cmdPath, _ := l.Resolve()
	fi, err := os.Stat(cmdPath)
	switch {
	case err != nil:
		return append(cs, Failf(reinstall, "%s runs %s, which does not exist (%s)", where, p(l.Command), p(errText(err)))), false
	case fi.IsDir() || fi.Mode().Perm()&0o111 == 0:
		return append(cs, Failf(reinstall, "%s runs %s, which is not an executable file", where, p(l.Command))), false
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
		c := Failf(reinstall+"; or run the command above yourself to see its error", "started as %s starts it: %s", title, p(err.Error()))
		if hs != nil && hs.Stderr != "" {
			for _, line := range hostlaunch.LastLines(hs.Stderr, 5) {
				c.Notes = append(c.Notes, "stderr: "+p(line))
			}
		}
		return append(cs, c), false
	}
	started := Okf("started as %s starts it: %s %s answered initialize (protocol %s) and tools/list in %s", title, p(hs.ServerName), p(hs.ServerVersion), p(hs.Protocol), hs.Elapsed.Round(time.Millisecond))
	if hs.ServerName != "cgcat" {
		started = Warnf(reinstall, "started as %s starts it, but it answered as %q %s, not cgcat", title, p(hs.ServerName), p(hs.ServerVersion))
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
		readOnly = hs.ServerName == "cgcat"
	}
	return cs, readOnly
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
