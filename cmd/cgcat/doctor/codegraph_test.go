package doctor

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/cgcat/cgcat/cmd/cgcat/hostconfig"
)

// TestPathSpace: a CodeGraph entry over HTTP on another machine cannot see
// this machine's paths (✗ path_space); one on this machine may run in a
// container, which a URL does not tell (! path_space_unchecked, saying so);
// a URL doctor cannot resolve is not called fine either.
func TestPathSpace(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		url    string
		status Status
		code   string
		in     string
	}{
		{"http://192.0.2.10:8080/mcp", Fail, "path_space", "another machine"}, // TEST-NET-1: never this machine
		{"http://127.0.0.1:9100/mcp", Warn, "path_space_unchecked", "cannot tell whether it sees the same paths"},
		{"http://localhost:9100/mcp", Warn, "path_space_unchecked", "on this machine"},
		{"http://[::1]:9100/mcp", Warn, "path_space_unchecked", "on this machine"},
		{"http://no-such-host.invalid/mcp", Warn, "path_space_unchecked", "does not resolve"},
		{"not a url", Warn, "path_space_unchecked", "cannot read"},
	}
	// An address of one of this machine's own interfaces is this machine.
	if addrs, _ := net.InterfaceAddrs(); len(addrs) > 0 {
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
				cases = append(cases, struct {
					url    string
					status Status
					code   string
					in     string
				}{"http://" + n.IP.String() + ":9100/mcp", Warn, "path_space_unchecked", "on this machine"})
				break
			}
		}
	}
	for _, c := range cases {
		got := pathSpace(ctx, `CodeGraph's MCP server "cg"`, c.url)
		if got.Status != c.status || got.Code != c.code || !strings.Contains(got.What, c.in) || got.Fix == "" {
			t.Errorf("%s: %+v", c.url, got)
		}
	}
}

// TestCodeGraphOverHTTP: doctor finds CodeGraph's entry over HTTP and
// checks its path space, instead of calling it missing or fine.
func TestCodeGraphOverHTTP(t *testing.T) {
	h, _ := hostconfig.ByName(hostconfig.Cursor)
	in := HostInput{Host: h, File: "/h/.cursor/mcp.json", Name: hostconfig.DefaultName, Install: "cgcat install cursor"}
	ours := hostconfig.Server{Name: hostconfig.DefaultName, Command: "/bin/cgcat", Args: []string{"serve"}}
	remote := hostconfig.Server{Name: "codegraph", URL: "https://192.0.2.10/mcp"}
	cs := CodeGraph(context.Background(), in, []hostconfig.Server{ours, remote}, ours)
	if len(cs) != 1 || cs[0].Status != Fail || cs[0].Code != "path_space" {
		t.Fatalf("%+v", cs)
	}
}
