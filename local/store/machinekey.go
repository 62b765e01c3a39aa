package store

import (
	"crypto/hmac"
	"crypto/sha256"
	"os"
	"os/user"
	"strconv"
	"strings"
	"sync"
)

// OSMachineIDEnv replaces the OS machine id (containers made from one image
// share /etc/machine-id: give each its own; tests play other machines).
const OSMachineIDEnv = "CGCAT_OS_MACHINE_ID"

// machineKey is the key an identity is bound with: derived from the OS
// machine id (/etc/machine-id, IOPlatformUUID, MachineGuid) and the user,
// never stored. nil when the OS has no machine id: identities then live in
// their data dir only, unbound.
//
// The OS machine id is not put in any card or file: systemd's advice, an
// application-specific keyed hash of it (HMAC keyed by the machine id) and
// only as a key.
func machineKey() []byte {
	id := os.Getenv(OSMachineIDEnv)
	if id == "" {
		id = cachedOSMachineID()
	}
	id = strings.TrimSpace(id)
	if id == "" || strings.EqualFold(id, "uninitialized") {
		return nil
	}
	m := hmac.New(sha256.New, []byte(id))
	m.Write([]byte("cgcat identity key v1\x00" + userIdentity()))
	return m.Sum(nil)
}

var (
	osIDOnce sync.Once
	osID     string
)

func cachedOSMachineID() string {
	osIDOnce.Do(func() { osID, _ = osMachineID() })
	return osID
}

// userIdentity names the user: uid (a SID on Windows) and name.
func userIdentity() string {
	if u, err := user.Current(); err == nil {
		return u.Uid + "\x00" + u.Username
	}
	return strconv.Itoa(os.Getuid())
}

// MachineBound reports whether identities here are bound to the machine
// (the OS has a machine id) — what doctor says.
func MachineBound() bool { return machineKey() != nil }
