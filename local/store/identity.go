package store

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/cgcat/cgcat/local/nofollow"
)

// Identity is who this data dir is: a machine id and a secret, written once
// to their own small file so that they outlive the database. A lost or
// rebuilt catalog keeps its machine id, and the secret lets it recognise
// its own GBrain cards (RootKey) to give their ids back.
type Identity struct {
	MachineID string    `json:"machineId"`
	Secret    []byte    `json:"secret"`
	Created   time.Time `json:"created"`
}

// IdentityFile is the identity's file in a data dir.
func IdentityFile(dataDir string) string { return filepath.Join(dataDir, "identity.json") }

// ReadIdentity reads the identity file without creating it.
func ReadIdentity(dataDir string) (Identity, error) {
	var id Identity
	// Read without waiting on a FIFO put in its place, bounded.
	r, err := nofollow.ReadRegular(IdentityFile(dataDir), 64<<10, true)
	if err != nil {
		return id, err
	}
	b := r.Data
	if err := json.Unmarshal(b, &id); err != nil || !ValidMachineID(id.MachineID) || len(id.Secret) < 16 {
		return Identity{}, fmt.Errorf("identity file %s is damaged; move it aside and run any cgcat command to make a new one (this machine's GBrain cards will then count as another machine's)", IdentityFile(dataDir))
	}
	return id, nil
}

// ensureIdentity returns the data dir's identity, creating it once. A store
// of an older release carries its machine id and secret inside the
// database: adopt gives them (or ok=false), so an upgrade keeps them.
func ensureIdentity(dataDir string, adopt func() (Identity, bool)) (Identity, error) {
	id, err := ReadIdentity(dataDir)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return id, err
	}
	if a, ok := adopt(); ok {
		id = a
	} else {
		secret := make([]byte, 32)
		if _, err := rand.Read(secret); err != nil {
			return Identity{}, err
		}
		id = Identity{MachineID: "m_" + randomToken(10), Secret: secret}
	}
	id.Created = time.Now().UTC()
	b, _ := json.MarshalIndent(id, "", "  ")
	// Written once: a temporary file linked into place fails if another
	// process won the race, and then theirs is the identity.
	tmp, err := os.CreateTemp(dataDir, ".identity.tmp-*")
	if err != nil {
		return Identity{}, writeErr(dataDir, fmt.Errorf("create identity file: %w", err))
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.Write(append(b, '\n'))
	if werr == nil {
		werr = tmp.Sync()
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return Identity{}, writeErr(dataDir, fmt.Errorf("write identity file: %w", werr))
	}
	if err := os.Link(tmp.Name(), IdentityFile(dataDir)); err != nil && !errors.Is(err, fs.ErrExist) {
		// No hard links here (some network or FAT volumes): a rename is
		// atomic too, and two first starts at the same instant are rare.
		if rerr := os.Rename(tmp.Name(), IdentityFile(dataDir)); rerr != nil {
			return Identity{}, writeErr(dataDir, fmt.Errorf("write identity file: %w", rerr))
		}
	}
	syncDir(dataDir)
	return ReadIdentity(dataDir)
}

// Key derives a purpose-bound key from the secret, so that cursors and
// card root keys never share one.
func (id Identity) Key(purpose string) []byte {
	m := hmac.New(sha256.New, id.Secret)
	m.Write([]byte("cgcat:" + purpose))
	return m.Sum(nil)
}

// RootKey is a keyed hash of a canonical root's identity key (pathid.Key):
// the same root on this machine always gives the same value, and nobody
// without the secret can tell which root it names. GBrain cards carry it
// instead of the path.
func (id Identity) RootKey(rootKey string) string {
	m := hmac.New(sha256.New, id.Key("root"))
	m.Write([]byte(rootKey))
	return hex.EncodeToString(m.Sum(nil)[:16])
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}
