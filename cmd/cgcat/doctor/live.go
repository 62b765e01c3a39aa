package doctor

import (
	"fmt"
	"time"

	"github.com/cgcat/cgcat/local"
	"github.com/cgcat/cgcat/local/config"
	"github.com/cgcat/cgcat/local/refresh"
)

// Following says how the catalog follows the disk: file events (and how
// many directories they watch), or the periodic refresh alone, and why
// (R42).
func Following(cfg *config.Config) []Check {
	s, running := refresh.ReadWatchState(cfg.DataDir)
	fl := refresh.Follows(cfg)
	switch {
	case s.Pid == 0 || !running && !fl.OK && s.Mode == "":
		return []Check{Infof("no cgcat serve follows the disk now: changes are found when a host starts one, or by `cgcat scan`; `cgcat projects` looks again before answering a miss")}
	case !running:
		return []Check{Warnf("a host starts a new cgcat serve, which takes over", "the process that followed the disk (pid %d) is gone or stopped: %s", s.Pid, fl.Why)}
	case s.Mode == refresh.ModeEvents && fl.OK:
		c := Okf("discovery follows the disk by file events (pid %d watches %d directories, live since %s); a refresh every %d s is the safety net",
			s.Pid, s.Watches, s.Since.Local().Format(time.RFC3339), s.IntervalSeconds)
		if s.Overflows > 0 {
			c.Notes = append(c.Notes, fmt.Sprintf("events were lost %d time(s), last at %s (each time everything was walked again)", s.Overflows, s.LastOverflow.Local().Format(time.RFC3339)))
		}
		return []Check{c}
	case s.Mode == refresh.ModeEvents:
		return []Check{Infof("discovery follows the disk by file events (pid %d, %d directories watched), but not completely right now: %s", s.Pid, s.Watches, fl.Why)}
	}
	return []Check{Warnf("see the reason; file events come back by themselves once it is fixed (the serve tries again every few minutes)",
		"file events are off, discovery relies on its refresh every %d s (pid %d): %s", s.IntervalSeconds, s.Pid, p(s.Why))}
}

// Rejected names the index files the last pass refused, with the reason:
// directories that look like projects and are not (R8), never skipped in
// silence.
func Rejected(st local.ScanState) []Check {
	if st.RejectedCount == 0 {
		return nil
	}
	c := Warnf("run `codegraph init` (or index again) in these projects, or remove the stray .codegraph",
		"%d index file(s) are not CodeGraph indexes, so their folders are not projects", st.RejectedCount)
	for i, g := range st.Rejected {
		if i == 10 {
			c.Notes = append(c.Notes, fmt.Sprintf("… and %d more (`cgcat scan` lists them)", st.RejectedCount-10))
			break
		}
		c.Notes = append(c.Notes, fmt.Sprintf("%s: %s", p(g.Path), p(g.Why)))
	}
	return []Check{c}
}
