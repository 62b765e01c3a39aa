//go:build !windows

package hostlaunch

// lostPipeOS: on Unix the portable errors in lostPipe cover every case.
func lostPipeOS(error) bool { return false }
