package main

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/cgcat/cgcat/gbrain/gbraintest"
	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/config"
	"github.com/cgcat/cgcat/local/store"
)

// A serve follows its config file for GBrain too (R37): turned on while the
// serve runs, GBrain is checked by that serve's own rounds, so gbrainState
// says what GBrain answers now. (The lifecycle test, seed 4242: the only
// serve had started with GBrain off, never ran a round after the file
// turned it on, and every answer said "ok" — the last check, made before
// GBrain was turned off — while GBrain was down.)
func TestServeFollowsGBrainTurnedOnInTheFile(t *testing.T) {
	e := newGBEnv(t, 2)
	setGBrain := func(on bool) { e.setGBrain(t, on) }
	setGBrain(false)
	// The last check, made while GBrain was on, said ok; GBrain is down now.
	st := e.store()
	if err := st.Update(context.Background(), func(tx *store.Tx) error {
		tx.PutGBrainContact(local.GBrainContact{OK: true, At: time.Now().UTC()})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	e.fake.SetControl(t, gbraintest.Control{ExitAtStart: "crash"})

	cg := startMCP(t, e.base, os.Environ(), cgcatBin(t), "serve", "--config", e.cfgPath)
	state := func() string {
		return envelopeOf(t, cg.call(t, "local_codegraph_projects", map[string]any{"limit": 5}).StructuredContent).GBrainState
	}
	if got := state(); got != "disabled" {
		t.Fatalf("GBrain off in the file: gbrainState %q", got)
	}
	setGBrain(true)
	deadline := time.Now().Add(20 * time.Second)
	got := state()
	for got != "degraded" && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		got = state()
	}
	if got != "degraded" {
		t.Fatalf("GBrain turned on in the file while it is down: gbrainState still %q after 20 s (no round checked it)\nstderr:\n%s", got, cg.stderr.String())
	}
	// And back up: the serve's own rounds say so.
	e.fake.SetControl(t, gbraintest.Control{})
	deadline = time.Now().Add(30 * time.Second)
	for got != "ok" && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		got = state()
	}
	if got != "ok" {
		t.Fatalf("GBrain up again: gbrainState still %q after 30 s\nstderr:\n%s", got, cg.stderr.String())
	}
}

// setGBrain turns GBrain on or off in the env's config file (checks every
// 2 s), as a person editing it while hosts run.
func (e *gbEnv) setGBrain(t *testing.T, on bool) {
	t.Helper()
	cfg, err := config.Load(e.cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	cfg.GBrain.Enabled = on
	cfg.GBrain.CheckSeconds = 2
	b, err := config.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // a new mtime for the serve's stat
	writeTestFile(t, e.cfgPath, string(b))
}
