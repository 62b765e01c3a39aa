package store

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// IdentityDirEnv names a directory that replaces the user's state directory
// as the place identities are kept outside their data dirs.
const IdentityDirEnv = "CGCAT_IDENTITY_DIR"

// identityHome is the file outside dataDir that keeps its identity:
// <identity dir>/<32 hex digits of sha256(canonical data dir)>.json, where
// the identity dir is $CGCAT_IDENTITY_DIR or the user's state directory
// (Linux and BSD: $XDG_STATE_HOME or ~/.local/state; macOS:
// ~/Library/Application Support; Windows: %LocalAppData%) + cgcat/identities.
// None ("") is kept for a data dir inside the system's temporary directory
// (tests and throwaway catalogs) unless $CGCAT_IDENTITY_DIR names a place,
// nor where the identity dir lies inside the data dir (lost with it).
func identityHome(dataDir string) string {
	canon, err := filepath.Abs(dataDir)
	if err != nil {
		return ""
	}
	if c, err := filepath.EvalSymlinks(canon); err == nil {
		canon = c
	}
	dir := os.Getenv(IdentityDirEnv)
	if dir == "" {
		if within(canon, os.TempDir()) {
			return ""
		}
		state := userStateDir()
		if state == "" {
			return ""
		}
		dir = filepath.Join(state, "cgcat", "identities")
	}
	if !filepath.IsAbs(dir) || within(dir, canon) {
		return ""
	}
	sum := sha256.Sum256([]byte(canon))
	return filepath.Join(dir, hex.EncodeToString(sum[:16])+".json")
}

// IdentityHome is where the identity of dataDir is kept outside it ("" when
// none is: see identityHome).
func IdentityHome(dataDir string) string { return identityHome(dataDir) }

// userStateDir is the user's directory for state that should survive
// ("" when there is none).
func userStateDir() string {
	switch runtime.GOOS {
	case "windows":
		return os.Getenv("LocalAppData")
	case "darwin":
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, "Library", "Application Support")
		}
		return ""
	}
	if s := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(s) {
		return s
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "state")
	}
	return ""
}

// within reports whether p is dir or below it (lexically, after cleaning;
// dir's symlinks resolved when it exists).
func within(p, dir string) bool {
	if dir == "" {
		return false
	}
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		dir = d
	}
	p, dir = filepath.Clean(p), filepath.Clean(dir)
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
}
