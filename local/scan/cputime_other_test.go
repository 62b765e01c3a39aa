//go:build !unix

package scan

import (
	"testing"
	"time"
)

// processCPU is not measured here (no getrusage): benchmarks report 0.
func processCPU() time.Duration { return 0 }

func reportCPU(b *testing.B, start time.Duration) {}
