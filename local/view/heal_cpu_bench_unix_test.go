//go:build unix

package view

import (
	"os"
	"syscall"
	"testing"
	"time"
)

func cpuNow() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkHealOpenCPU (CGCAT_BENCH_DATADIR as above): CPU (user+sys, every thread) and wall per open of
// the data dir's base.
func BenchmarkHealOpenCPU(b *testing.B) {
	dir := os.Getenv("CGCAT_BENCH_DATADIR")
	if dir == "" {
		b.Skip()
	}
	ptr, _ := ReadPointer(dir)
	if _, err := ReadBase(dir, ptr.Base); err != nil {
		b.Fatal(err)
	}
	c0, w0 := cpuNow(), time.Now()
	for range b.N {
		if _, err := ReadBase(dir, ptr.Base); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((cpuNow()-c0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(time.Since(w0).Microseconds())/1000/float64(b.N), "wall-ms/op")
}
