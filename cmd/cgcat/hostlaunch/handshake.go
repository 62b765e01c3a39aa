package hostlaunch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// Handshake is what a started server answered.
type Handshake struct {
	ServerName, ServerVersion, Protocol string
	// Instructions is the server's usage text from initialize; hosts hand
	// it to the model.
	Instructions string
	Tools        map[string]mcp.Tool
	Elapsed      time.Duration
	// Stderr is the tail of what the server wrote to stderr.
	Stderr string
}

// Start starts l as an MCP stdio server (stdin and stdout are pipes, as a
// host makes them), runs initialize and tools/list within l.Timeout, and
// closes it (stdin first, then a signal). clientName names the caller in
// initialize. On error the Handshake, when not nil, holds the stderr tail;
// a process that ended before answering gives an *EndedError.
func Start(ctx context.Context, l Launch, clientName, clientVersion string) (*Handshake, error) {
	tail := &TailBuffer{Max: 8 << 10}
	hs := &Handshake{}
	start := time.Now()
	procCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch, err := startChild(procCtx, l, tail)
	if err != nil {
		return hs, fmt.Errorf("cannot start it: %w", err)
	}
	defer func() {
		ch.stop()
		hs.Stderr = tail.String()
	}()
	if err := handshake(ctx, ch, l.Timeout, hs, clientName, clientVersion); err != nil {
		return hs, err
	}
	hs.Elapsed = time.Since(start)
	return hs, nil
}

// handshake runs initialize and tools/list over the child's pipes within
// timeout and fills hs.
func handshake(ctx context.Context, ch *child, timeout time.Duration, hs *Handshake, clientName, clientVersion string) error {
	c := client.NewClient(ch.transport())
	if err := c.Start(ctx); err != nil {
		return fmt.Errorf("cannot start it: %w", err)
	}
	defer c.Close()
	callCtx, callCancel := context.WithTimeout(ctx, timeout)
	defer callCancel()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: clientName, Version: clientVersion}
	res, err := c.Initialize(callCtx, init)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err() // the caller gave up (its own kill is no answer)
		}
		return ch.explain(callCtx, "initialize", err, timeout)
	}
	hs.ServerName, hs.ServerVersion, hs.Protocol = res.ServerInfo.Name, res.ServerInfo.Version, res.ProtocolVersion
	hs.Instructions = res.Instructions
	list, err := c.ListTools(callCtx, mcp.ListToolsRequest{})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return ch.explain(callCtx, "tools/list", err, timeout)
	}
	hs.Tools = map[string]mcp.Tool{}
	for _, t := range list.Tools {
		hs.Tools[t.Name] = t
	}
	return nil
}

// ExploreTool is CodeGraph's tool that cgcat hands a projectPath to.
const ExploreTool = "codegraph_explore"

// ErrBackendIncompatible: the CodeGraph server does not list
// codegraph_explore with a projectPath parameter (R41:
// backend_incompatible).
var ErrBackendIncompatible = errors.New("backend_incompatible")

// CheckExplore checks that a CodeGraph server's tools/list has
// codegraph_explore taking projectPath; the error wraps
// ErrBackendIncompatible and says what is missing.
func CheckExplore(hs *Handshake) error {
	t, ok := hs.Tools[ExploreTool]
	if !ok {
		names := make([]string, 0, len(hs.Tools))
		for n := range hs.Tools {
			names = append(names, n)
		}
		return fmt.Errorf("%w: %s %s lists no %s (its tools: %s)", ErrBackendIncompatible, hs.ServerName, hs.ServerVersion, ExploreTool, strings.Join(sortStrings(names), ", "))
	}
	if !hasProperty(t, "projectPath") {
		return fmt.Errorf("%w: %s %s lists %s without a projectPath parameter, so it cannot be pointed at another project", ErrBackendIncompatible, hs.ServerName, hs.ServerVersion, ExploreTool)
	}
	return nil
}

func hasProperty(t mcp.Tool, name string) bool {
	if _, ok := t.InputSchema.Properties[name]; ok {
		return true
	}
	var raw struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if len(t.RawInputSchema) > 0 && json.Unmarshal(t.RawInputSchema, &raw) == nil {
		_, ok := raw.Properties[name]
		return ok
	}
	return false
}

func sortStrings(s []string) []string {
	slices.Sort(s)
	return s
}

// TailBuffer keeps the last Max bytes written to it.
type TailBuffer struct {
	mu  sync.Mutex
	Max int
	b   []byte
}

func (t *TailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.Max {
		t.b = append([]byte(nil), t.b[len(t.b)-t.Max:]...)
	}
	return len(p), nil
}

func (t *TailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

// LastLines returns the last n lines of s.
func LastLines(s string, n int) []string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}
