package main

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/cgcat/cgcat/local/lease"
	"github.com/cgcat/cgcat/projection"
	"github.com/cgcat/cgcat/server"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// TestServeFollowsGBrainSwitch: a host keeps its serve for days; turning
// GBrain on in the config must start projection in that serve (cards
// written, gbrainState ok) and turning it off must stop it (the projector
// lease given up, no card written after), without a restart. A serve used
// to wire GBrain once at start: on stayed "degraded" until every host was
// restarted, and off kept writing cards.
func TestServeFollowsGBrainSwitch(t *testing.T) {
	e := newGBEnv(t, 3)
	setGBrain := func(on bool) { e.setGBrain(t, on) }
	setGBrain(false)

	c, err := client.NewStdioMCPClient(cgcatBin(t), os.Environ(), "serve", "--config", e.cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ini := mcp.InitializeRequest{}
	ini.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	if _, err := c.Initialize(ctx, ini); err != nil {
		t.Fatal(err)
	}
	state := func() string {
		t.Helper()
		req := mcp.CallToolRequest{}
		// A search: with gbrain.semanticSearch off it must not ask GBrain
		// (nor say degraded because nothing answered).
		req.Params.Name, req.Params.Arguments = "local_codegraph_projects", map[string]any{"query": "pkg-001"}
		res, err := c.CallTool(ctx, req)
		if err != nil || res.IsError {
			t.Fatalf("projects: %v %+v", err, res)
		}
		var env server.Envelope
		raw, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(raw, &env); err != nil {
			t.Fatal(err)
		}
		return env.GBrainState
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(100 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("30 s after the config changed: %s never happened", what)
			}
		}
	}
	if s := state(); s != server.GBrainDisabled {
		t.Fatalf("gbrainState with GBrain off: %q", s)
	}
	if n := len(e.cards()); n != 0 {
		t.Fatalf("%d cards before GBrain was turned on", n)
	}

	setGBrain(true)
	waitFor("gbrainState ok", func() bool { return state() == server.GBrainOK })
	waitFor("3 cards in GBrain", func() bool { return len(e.cards()) == 3 })

	setGBrain(false)
	waitFor("gbrainState disabled", func() bool { return state() == server.GBrainDisabled })
	// The serve gives the projector lease up: nothing of it talks to GBrain.
	waitFor("the projector lease free", func() bool {
		l, err := lease.TryAcquire(projection.LeasePath(e.dataDir))
		if err != nil {
			return false
		}
		l.Release()
		return true
	})
}
