package doctor

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"time"

	"github.com/cgcat/cgcat/cmd/cgcat/hostconfig"
	"github.com/cgcat/cgcat/cmd/cgcat/hostlaunch"
)

// codegraphTimeout bounds CodeGraph's start (it loads a runtime).
const codegraphTimeout = 30 * time.Second

// CodeGraph finds CodeGraph's own entry in the host, checks that cgcat's
// entry (ours) names it, and starts it: codegraph_explore must take
// projectPath (backend_incompatible, R41). install reports the same
// checks, so both give a missing entry the same severity: a warning, since
// cgcat works and the agent reports the gap (seed section 7).
func CodeGraph(ctx context.Context, in HostInput, servers []hostconfig.Server, ours hostconfig.Server) []Check {
	cs, _ := CodeGraphStarted(ctx, in, servers, ours)
	return cs
}

// CodeGraphStarted is CodeGraph, and also what the started server
// answered (nil when it was not started or did not answer).
func CodeGraphStarted(ctx context.Context, in HostInput, servers []hostconfig.Server, ours hostconfig.Server) ([]Check, *hostlaunch.Handshake) {
	title := in.Host.Title
	s, ok := hostconfig.FindCodeGraph(servers)
	if !ok {
		return []Check{{Status: Warn, Code: "codegraph_missing",
			What: fmt.Sprintf("%s has no CodeGraph MCP server (codegraph serve --mcp): agents can find projects with cgcat but cannot read their code", p(in.File)),
			Fix:  fmt.Sprintf("%s (npm install -g %s first if needed), then %s again so cgcat names it", in.Host.CodeGraphAdd, hostconfig.CodeGraphPackage, in.Install)}}, nil
	}
	desc := fmt.Sprintf("CodeGraph's MCP server %q", p(s.Name))
	var cs []Check
	if named := hostconfig.CodeGraphServerOf(ours.Args); named != s.Name {
		cs = append(cs, Warnf(in.Install+" --force (it passes the name CodeGraph has in "+title+")",
			"cgcat's entry names the CodeGraph server %q but %s calls it %q: handoffs point the agent at a server it does not have", p(named), title, p(s.Name)))
	}
	if s.Disabled != "" {
		return append(cs, Check{Status: Warn, Code: "codegraph_missing", What: fmt.Sprintf("%s is disabled (%s): agents cannot read code", desc, s.Disabled),
			Fix: "enable it in " + p(in.File)}), nil
	}
	if s.URL != "" {
		return append(cs, pathSpace(ctx, desc, s.URL)), nil
	}
	if in.SkipStart {
		return append(cs, Infof("%s was not started (dry run)", desc)), nil
	}
	l := hostlaunch.For(in.Host, s, in.Environ, in.Dir)
	l.Timeout = max(l.Timeout, codegraphTimeout)
	hs, err := hostlaunch.Start(ctx, l, "cgcat-doctor", in.CgcatVersion)
	if err == nil {
		err = hostlaunch.CheckExplore(hs)
	}
	switch {
	case errors.Is(err, hostlaunch.ErrBackendIncompatible):
		return append(cs, Check{Status: Fail, Code: "backend_incompatible", What: fmt.Sprintf("%s: %s", desc, p(err.Error())),
			Fix: fmt.Sprintf("upgrade CodeGraph (npm install -g %s@latest); cgcat hands agents a projectPath for codegraph_explore", hostconfig.CodeGraphPackage)}), nil
	case err != nil:
		c := Failf("run `"+p(QuoteArgs(append([]string{s.Command}, s.Args...)))+"` yourself to see why", "%s does not start as %s starts it: %s", desc, title, p(err.Error()))
		if hs != nil && hs.Stderr != "" {
			for _, line := range hostlaunch.LastLines(hs.Stderr, 5) {
				c.Notes = append(c.Notes, "stderr: "+p(line))
			}
		}
		return append(cs, c), nil
	}
	return append(cs, Okf("%s: %s %s starts and offers %s with projectPath", desc, p(hs.ServerName), p(hs.ServerVersion), hostlaunch.ExploreTool)), hs
}

// pathSpace checks what can be checked of seed section 10's first rule for
// a CodeGraph entry reached over HTTP: cgcat hands the agent this
// machine's paths, so CodeGraph must open them in the same file system. A
// server on another machine cannot; one on this machine may still run in a
// container or VM that sees other files, which a URL does not tell.
func pathSpace(ctx context.Context, desc, raw string) Check {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return Check{Status: Warn, Code: "path_space_unchecked", What: fmt.Sprintf("%s is an HTTP server at %s, a URL cgcat cannot read: not checked whether it sees this machine's paths", desc, p(raw)),
			Fix: "fix the URL, or register CodeGraph as a stdio entry (codegraph serve --mcp)"}
	}
	local, err := isLocalHost(ctx, u.Hostname())
	switch {
	case err != nil:
		return Check{Status: Warn, Code: "path_space_unchecked", What: fmt.Sprintf("%s is an HTTP server at %s; its host name does not resolve here (%s), so cgcat cannot tell whether it sees this machine's paths", desc, p(raw), p(err.Error())),
			Fix: "register CodeGraph as a stdio entry (codegraph serve --mcp) so it runs beside cgcat"}
	case !local:
		return Check{Status: Fail, Code: "path_space", What: fmt.Sprintf("%s is an HTTP server on another machine (%s): it cannot open the paths cgcat hands out, which are this machine's", desc, p(raw)),
			Fix: "run CodeGraph on this machine (codegraph serve --mcp as a stdio entry); a remote CodeGraph needs its own cgcat there"}
	}
	return Check{Status: Warn, Code: "path_space_unchecked", What: fmt.Sprintf("%s is an HTTP server on this machine (%s), not started by doctor: cgcat cannot tell whether it sees the same paths (a container or VM behind a local port has its own file system)", desc, p(raw)),
		Fix: "make sure it runs outside any container with this machine's files, or register CodeGraph as a stdio entry (codegraph serve --mcp)"}
}

// isLocalHost reports whether host names this machine: a loopback name or
// address, or an address of one of its interfaces.
func isLocalHost(ctx context.Context, host string) (bool, error) {
	if host == "localhost" {
		return true, nil
	}
	var ips []net.IP
	if ip := net.ParseIP(host); ip != nil {
		ips = []net.IP{ip}
	} else {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
		if err != nil {
			return false, err
		}
		for _, a := range addrs {
			ips = append(ips, a.IP)
		}
	}
	own, _ := net.InterfaceAddrs()
	for _, ip := range ips {
		if ip.IsLoopback() || ip.IsUnspecified() {
			return true, nil
		}
		if slices.ContainsFunc(own, func(a net.Addr) bool {
			n, ok := a.(*net.IPNet)
			return ok && n.IP.Equal(ip)
		}) {
			return true, nil
		}
	}
	return false, nil
}
