//go:build darwin

package store

import (
	"context"
	"errors"
	"os/exec"
	"regexp"
	"time"
)

var platformUUIDRE = regexp.MustCompile(`"IOPlatformUUID" = "([0-9A-Fa-f-]+)"`)

// osMachineID is the Mac's IOPlatformUUID, as ioreg prints it (no cgo:
// IOKit is not reachable without it). Read once per process.
func osMachineID() (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "/usr/sbin/ioreg", "-rd1", "-c", "IOPlatformExpertDevice").Output()
	if err != nil {
		return "", err
	}
	m := platformUUIDRE.FindSubmatch(out)
	if m == nil {
		return "", errors.New("ioreg shows no IOPlatformUUID")
	}
	return string(m[1]), nil
}
