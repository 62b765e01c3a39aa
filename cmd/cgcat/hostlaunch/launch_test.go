package hostlaunch

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/cgcat/cgcat/cmd/cgcat/hostconfig"
	"github.com/mark3labs/mcp-go/mcp"
)

func host(t *testing.T, name string) *hostconfig.Host {
	t.Helper()
	h, ok := hostconfig.ByName(name)
	if !ok {
		t.Fatalf("no host %q", name)
	}
	return h
}

func TestForEnvironmentAndTimeout(t *testing.T) {
	environ := []string{"HOME=/h", "PATH=/bin", "XDG_CONFIG_HOME=/x", "SECRET=s", "MY_VAR=v"}
	s := hostconfig.Server{Command: "cgcat", Env: map[string]string{"E": "1"}, EnvVars: []string{"MY_VAR"}}
	codex := For(host(t, hostconfig.Codex), s, environ, "/tmp")
	// Codex passes a fixed list plus env_vars and env: no XDG_*, no SECRET.
	if !slices.Equal(codex.Env, []string{"E=1", "HOME=/h", "MY_VAR=v", "PATH=/bin"}) || codex.Timeout != 10*time.Second || codex.Dir != "/tmp" {
		t.Fatalf("codex launch %+v", codex)
	}
	s.Timeout = 3 * time.Second
	oc := For(host(t, hostconfig.OpenCode), s, environ, "")
	if len(oc.Env) != 6 || oc.Timeout != 3*time.Second {
		t.Fatalf("opencode launch %+v", oc)
	}
	if For(host(t, hostconfig.Claude), hostconfig.Server{}, nil, "").Timeout != 30*time.Second {
		t.Fatal("claude default timeout")
	}
	// Cursor starts servers with its own whole environment, like the
	// others but Codex.
	if cur := For(host(t, hostconfig.Cursor), hostconfig.Server{}, environ, ""); len(cur.Env) != 5 || cur.Timeout != 30*time.Second {
		t.Fatalf("cursor launch %+v", cur)
	}
}

func TestCheckExplore(t *testing.T) {
	withPath := mcp.Tool{Name: ExploreTool, RawInputSchema: json.RawMessage(`{"type":"object","properties":{"query":{},"projectPath":{}}}`)}
	without := mcp.Tool{Name: ExploreTool, RawInputSchema: json.RawMessage(`{"type":"object","properties":{"query":{}}}`)}
	if err := CheckExplore(&Handshake{Tools: map[string]mcp.Tool{ExploreTool: withPath}}); err != nil {
		t.Fatal(err)
	}
	for _, tools := range []map[string]mcp.Tool{{ExploreTool: without}, {"codegraph_search": withPath}} {
		if err := CheckExplore(&Handshake{ServerName: "codegraph", Tools: tools}); !errors.Is(err, ErrBackendIncompatible) {
			t.Fatalf("%v: %v", tools, err)
		}
	}
}
