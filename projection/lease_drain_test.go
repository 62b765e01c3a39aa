package projection

import (
	"errors"
	"os"
	"testing"
)

// A projector whose lease is stolen between two rows of a drain (a newer
// holder replaced the lease file) stops there: it sends GBrain nothing
// more, not even a read, leaves the other rows in the outbox and says that
// it lost the lease. Fencing would refuse its late batch anyway; the check
// keeps it from touching cards another process now owns.
func TestDrainStopsWhenTheLeaseIsStolenMidway(t *testing.T) {
	e := newEnv(t, 4)
	p := e.projector()
	p.InFlight = 1 // "between two rows": one card at a time (8 in flight would all be sent)
	stolen := false
	p.Progress = func(Progress) {
		if stolen {
			return
		}
		stolen = true
		steal(t, LeasePath(e.cfg.DataDir))
		e.fake.ResetCalls(t)
	}
	rep, err := p.Drain(e.ctx)
	if !errors.Is(err, ErrNoLease) {
		t.Fatalf("drain after the lease was stolen: %v (report %+v), want ErrNoLease", err, rep)
	}
	for tool, n := range e.fake.Calls(t) {
		if n > 0 {
			t.Errorf("%d %s call(s) after the lease was stolen", n, tool)
		}
	}
	if rep.Rows != 1 || rep.Remaining != 3 {
		t.Errorf("report %+v: want 1 row projected and 3 left in the outbox", rep)
	}
}

// steal replaces the lease file as a newer holder does when it takes a
// lease from a frozen one.
func steal(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path+".new", []byte("stolen\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
}
