package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cgcat/cgcat/gbrain/gbraintest"
)

// TestGBrainSyncJSONStopped: a sync that stops part way with --json prints
// one JSON object — the report so far and the error — and exits 1.
func TestGBrainSyncJSONStopped(t *testing.T) {
	e := newGBEnv(t, 2)
	e.fake.SetControl(t, gbraintest.Control{DropBeforeApply: []string{"put_page"}})
	out, errOut, code := e.sync(gbrainSyncOptions{json: true})
	var res struct {
		Report *struct {
			Remaining int `json:"remaining"`
		} `json:"report"`
		Error    string `json:"error"`
		ExitCode int    `json:"exitCode"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s\nstderr: %s", err, out, errOut)
	}
	if code != exitFailure || res.ExitCode != exitFailure || res.Report == nil || res.Report.Remaining != 2 ||
		!strings.Contains(res.Error, "GBrain sync stopped") || !strings.Contains(res.Error, "2 cards wait in the outbox") {
		t.Fatalf("exit %d, %+v\n%s\nstderr: %s", code, res, out, errOut)
	}
}
