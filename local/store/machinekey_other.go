//go:build !unix && !windows

package store

import "errors"

// osMachineID: no OS machine id is known here.
func osMachineID() (string, error) { return "", errors.New("no OS machine id on this system") }
