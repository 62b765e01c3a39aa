//go:build !linux && !darwin

package meta

import "os"

// changeTime is fi's status-change time where the platform gives one; here
// it does not (Windows has no status-change time in os.FileInfo): 0.
func changeTime(os.FileInfo) int64 { return 0 }
