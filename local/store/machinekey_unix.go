//go:build unix && !darwin

package store

import (
	"os"
	"strings"
)

// osMachineID reads the OS machine id: systemd's /etc/machine-id, D-Bus's
// copy, or a BSD host id.
func osMachineID() (string, error) {
	var last error
	for _, f := range []string{"/etc/machine-id", "/var/lib/dbus/machine-id", "/etc/hostid"} {
		b, err := os.ReadFile(f)
		if err == nil && strings.TrimSpace(string(b)) != "" {
			return strings.TrimSpace(string(b)), nil
		}
		last = err
	}
	return "", last
}
