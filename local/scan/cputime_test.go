//go:build unix

package scan

import (
	"syscall"
	"testing"
	"time"
)

// processCPU is the CPU time (user + system) this process has used so far:
// unlike wall time it does not count time the scheduler gave to other
// processes, so a benchmark's figure stays meaningful on a busy machine.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the process's CPU time per iteration since start, in ms.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(processCPU()-start)/float64(b.N)/1e6, "cpu-ms/op")
}
