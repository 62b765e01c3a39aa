// Package ids issues and checks the opaque ids cgcat hands out: project ids
// ("cg_…"), machine ids ("m_…") and store ids ("s_…"). It is apart from the
// store so that the answering layer (package server) can check an id's
// shape without linking LevelDB. It never derives an id from a path.
package ids

import (
	"crypto/rand"
	"encoding/base32"
	"strings"
)

var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

func randomToken(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	return idEncoding.EncodeToString(b)
}

// NewProjectID returns a fresh opaque id: "cg_" and 16 lowercase base32
// characters (80 random bits). Never derived from the path.
func NewProjectID() string { return "cg_" + randomToken(10) }

// NewMachineID returns a fresh machine id: "m_" and 16 base32 characters.
func NewMachineID() string { return "m_" + randomToken(10) }

// NewStoreID returns a fresh store id: "s_" and 16 base32 characters.
func NewStoreID() string { return "s_" + randomToken(10) }

// ValidProjectID reports whether s has the shape of an id we issue.
func ValidProjectID(s string) bool {
	if len(s) != 19 || !strings.HasPrefix(s, "cg_") {
		return false
	}
	for _, r := range s[3:] {
		if !(r >= 'a' && r <= 'z' || r >= '2' && r <= '7') {
			return false
		}
	}
	return true
}

// ValidMachineID reports whether s has the shape of a machine id we issue.
func ValidMachineID(s string) bool {
	if len(s) != 18 || !strings.HasPrefix(s, "m_") {
		return false
	}
	for _, r := range s[2:] {
		if !(r >= 'a' && r <= 'z' || r >= '2' && r <= '7') {
			return false
		}
	}
	return true
}
