package doctor

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cgcat/cgcat/cmd/cgcat/hostconfig"
	"github.com/cgcat/cgcat/cmd/cgcat/hostlaunch"
)

// codegraphTimeout bounds CodeGraph's start (it loads a runtime).
const codegraphTimeout = 30 * time.Second

// codegraphChecks finds CodeGraph's own entry in the host, checks that
// cgcat's entry names it, and starts it: codegraph_explore must take
// projectPath (backend_incompatible, R41).
func codegraphChecks(ctx context.Context, in HostInput, servers []hostconfig.Server, ours hostconfig.Server) []Check {
	add := hostconfig.CodeGraphAddCommand(in.Host)
	s, ok := hostconfig.FindCodeGraph(servers)
	if !ok {
		return []Check{{Status: Fail, Code: "codegraph_missing",
			What: fmt.Sprintf("no CodeGraph MCP server (codegraph serve --mcp) in %s: agents find projects with cgcat but cannot read their code", p(in.File)),
			Fix:  fmt.Sprintf("%s (npm install -g %s first if needed), then %s again so cgcat names it", add, hostconfig.CodeGraphPackage, in.Install)}}
	}
	desc := fmt.Sprintf("CodeGraph's MCP server %q", p(s.Name))
	var cs []Check
	if named := hostconfig.CodeGraphServerOf(ours.Args); named != s.Name {
		cs = append(cs, Warnf(in.Install+" --force (it passes the name CodeGraph has in "+in.Title+")",
			"cgcat's entry names the CodeGraph server %q but %s calls it %q: handoffs point the agent at a server it does not have", p(named), in.Title, p(s.Name)))
	}
	if s.Disabled != "" {
		return append(cs, Failf("enable it in "+p(in.File), "%s is disabled (%s): agents cannot read code", desc, s.Disabled))
	}
	if s.URL != "" {
		return append(cs, Infof("%s is an HTTP server at %s (not started by doctor)", desc, p(s.URL)))
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
			Fix: fmt.Sprintf("upgrade CodeGraph (npm install -g %s@latest); cgcat hands agents a projectPath for codegraph_explore", hostconfig.CodeGraphPackage)})
	case err != nil:
		c := Failf("run `"+p(QuoteArgs(append([]string{s.Command}, s.Args...)))+"` yourself to see why", "%s does not start as %s starts it: %s", desc, in.Title, p(err.Error()))
		if hs != nil && hs.Stderr != "" {
			for _, line := range hostlaunch.LastLines(hs.Stderr, 5) {
				c.Notes = append(c.Notes, "stderr: "+p(line))
			}
		}
		return append(cs, c)
	}
	return append(cs, Okf("%s: %s %s starts and offers %s with projectPath", desc, p(hs.ServerName), p(hs.ServerVersion), hostlaunch.ExploreTool))
}
