package main

import (
	"testing"

	"github.com/cgcat/cgcat/server"
)

// TestResolveExitStatus: every status resolve can answer maps to the
// README's exit status table, including another machine's project (a
// historical card), which is not here.
func TestResolveExitStatus(t *testing.T) {
	here := server.Project{ProjectID: "cg_a", Availability: "present"}
	browse := server.Project{ProjectID: "cg_b", Availability: "present"} // exposeAbsolutePaths false: no path, still here
	gone := server.Project{ProjectID: "cg_c", Availability: server.AvailabilityHistorical}
	for _, c := range []struct {
		status string
		p      []server.Project
		want   int
	}{
		{server.StatusOK, []server.Project{here}, exitOK},
		{server.StatusOK, []server.Project{browse}, exitOK},
		{server.StatusOK, []server.Project{gone}, exitNotFound},
		{server.StatusUnknownProject, nil, exitNotFound},
		{server.StatusMissing, []server.Project{{ProjectID: "cg_d", MovedTo: "cg_e"}}, exitNotFound},
		{server.StatusNotAvailable, nil, exitNotFound},
		{server.StatusRecordChanged, []server.Project{here}, exitNotFound},
		{server.StatusSetupRequired, nil, exitFailure},
	} {
		if got := resolveExit(&server.Envelope{Status: c.status, Projects: c.p}); got != c.want {
			t.Errorf("%s %+v: exit %d, want %d", c.status, c.p, got, c.want)
		}
	}
}
