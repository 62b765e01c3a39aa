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

	"github.com/cgcat/cgcat/local/ids"
	"github.com/cgcat/cgcat/local/nofollow"
)

// Identity is who this data dir is: a machine id and a secret, written once
// to their own small file so that they outlive the database. A lost or
// rebuilt catalog keeps its machine id, and the secret lets it recognise
// its own GBrain cards (RootKey) to give their ids back.
//
// The file is bound to the machine and the user (Binding: a keyed hash
// under a key derived from the OS machine id and the user, see
// machinekey.go), and a bound copy is kept outside the data dir (identity
// home, see identityhome.go): a data dir lost whole takes its identity back
// from that copy, while a copy of either on another machine (a copied home
// directory, a cloned disk) does not verify there and is never used.
type Identity struct {
	MachineID string    `json:"machineId"`
	Secret    []byte    `json:"secret"`
	Created   time.Time `json:"created"`
	// Binding ties the identity to this machine and user ("" on a machine
	// without an OS machine id, and in files of older releases until they
	// are opened here).
	Binding string `json:"binding,omitempty"`

	// How this process came by it (not stored).
	New      bool   `json:"-"` // made now: no GBrain card can name its machine id yet
	Restored bool   `json:"-"` // taken back from the copy kept outside the data dir
	Replaced string `json:"-"` // why the data dir's identity file was not used
	KeptAt   string `json:"-"` // the copy outside the data dir ("" if none)
}

// IdentityFile is the identity's file in a data dir.
func IdentityFile(dataDir string) string { return filepath.Join(dataDir, "identity.json") }

// IdentityError says the data dir's identity file is damaged.
type IdentityError struct{ Path string }

func (e *IdentityError) Error() string { return fmt.Sprintf("identity file %s is damaged", e.Path) }

func errDamaged(path string) error { return &IdentityError{Path: path} }

// ReadIdentity reads the identity file without creating it.
func ReadIdentity(dataDir string) (Identity, error) {
	return readIdentityFile(IdentityFile(dataDir))
}

func readIdentityFile(path string) (Identity, error) {
	var id Identity
	// Read without waiting on a FIFO put in its place, bounded.
	r, err := nofollow.ReadRegular(path, 64<<10, true)
	if err != nil {
		return id, err
	}
	b := r.Data
	if err := json.Unmarshal(b, &id); err != nil || !ids.ValidMachineID(id.MachineID) || len(id.Secret) < 16 {
		return Identity{}, errDamaged(path)
	}
	return id, nil
}

// bind is the binding of id under key (the machine key).
func (id Identity) bind(key []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("cgcat identity binding\x00" + id.MachineID + "\x00"))
	m.Write(id.Secret)
	return hex.EncodeToString(m.Sum(nil))
}

// boundHere reports whether id's binding is this machine's and user's.
func (id Identity) boundHere(key []byte) bool {
	return key != nil && id.Binding != "" && hmac.Equal([]byte(id.Binding), []byte(id.bind(key)))
}

// ensureIdentity returns the data dir's identity, creating it once:
//   - the data dir's file, when it is bound to this machine and user (or
//     unbound: a file of an older release, or a machine without an OS
//     machine id; it is bound now);
//   - else the copy kept outside the data dir for this data dir, when it
//     is bound here (the data dir was lost whole);
//   - else the identity an older release kept inside the database (adopt);
//   - else a new one.
//
// A data dir file bound to another machine (copied with a home directory,
// a cloned disk) is moved aside, never used: this data dir gets an
// identity of its own (Identity.Replaced says why).
func ensureIdentity(dataDir string, adopt func() (Identity, bool)) (Identity, error) {
	key := machineKey()
	home := identityHome(dataDir)
	id, err := ReadIdentity(dataDir)
	replaced := ""
	switch {
	case err == nil && id.Binding != "" && key != nil && !id.boundHere(key):
		aside := fmt.Sprintf("%s.other-machine-%d", IdentityFile(dataDir), time.Now().Unix())
		if rerr := os.Rename(IdentityFile(dataDir), aside); rerr != nil {
			return Identity{}, writeErr(dataDir, fmt.Errorf("move aside an identity file of another machine: %w", rerr))
		}
		replaced = fmt.Sprintf("the identity file was made on another machine or by another user (machine %s; moved to %s): this data dir got a machine id of its own", id.MachineID, filepath.Base(aside))
	case err == nil:
		if key != nil && id.Binding == "" {
			// A file of an older release: bind it to this machine now.
			id.Binding = id.bind(key)
			if werr := writeIdentity(IdentityFile(dataDir), id, true); werr != nil {
				return Identity{}, writeErr(dataDir, fmt.Errorf("bind the identity file to this machine: %w", werr))
			}
		}
		id.KeptAt = keepOutside(home, dataDir, id)
		return id, nil
	case !errors.Is(err, fs.ErrNotExist):
		return id, err
	}
	id, restored, made := Identity{}, false, false
	if home != "" {
		if k, err := readIdentityFile(home); err == nil && k.boundHere(key) {
			id, restored = k, true
		}
	}
	if !restored {
		if a, ok := adopt(); ok {
			id = a
		} else {
			secret := make([]byte, 32)
			if _, err := rand.Read(secret); err != nil {
				return Identity{}, err
			}
			id, made = Identity{MachineID: ids.NewMachineID(), Secret: secret}, true
		}
		id.Created = time.Now().UTC()
	}
	id.Binding = ""
	if key != nil {
		id.Binding = id.bind(key)
	}
	if err := createIdentity(dataDir, id); err != nil {
		return Identity{}, err
	}
	got, err := ReadIdentity(dataDir)
	if err != nil {
		return got, err
	}
	got.Restored = restored && got.MachineID == id.MachineID
	got.New = made && got.MachineID == id.MachineID
	got.Replaced = replaced
	got.KeptAt = keepOutside(home, dataDir, got)
	return got, nil
}

// createIdentity writes the data dir's identity file once: a temporary file
// linked into place fails if another process won the race, and then theirs
// is the identity.
func createIdentity(dataDir string, id Identity) error {
	b, _ := json.MarshalIndent(id, "", "  ")
	tmp, err := os.CreateTemp(dataDir, ".identity.tmp-*")
	if err != nil {
		return writeErr(dataDir, fmt.Errorf("create identity file: %w", err))
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
		return writeErr(dataDir, fmt.Errorf("write identity file: %w", werr))
	}
	if err := os.Link(tmp.Name(), IdentityFile(dataDir)); err != nil && !errors.Is(err, fs.ErrExist) {
		// No hard links here (some network or FAT volumes): a rename is
		// atomic too, and two first starts at the same instant are rare.
		if rerr := os.Rename(tmp.Name(), IdentityFile(dataDir)); rerr != nil {
			return writeErr(dataDir, fmt.Errorf("write identity file: %w", rerr))
		}
	}
	syncDir(dataDir)
	return nil
}

// writeIdentity replaces an identity file atomically (private: it holds the
// secret).
func writeIdentity(path string, id Identity, sync bool) error {
	b, _ := json.MarshalIndent(id, "", "  ")
	tmp, err := os.CreateTemp(filepath.Dir(path), ".identity.tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.Write(append(b, '\n'))
	if werr == nil && sync {
		werr = tmp.Sync()
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return werr
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	if sync {
		syncDir(filepath.Dir(path))
	}
	return nil
}

// keepOutside makes sure the copy outside the data dir holds id (bound
// identities only: an unbound copy could be taken over elsewhere). It
// returns the copy's path, or "" when none is kept. Failing to keep it
// costs only the survival of a lost data dir: it is not an error.
func keepOutside(home, dataDir string, id Identity) string {
	if home == "" || id.Binding == "" {
		return ""
	}
	if k, err := readIdentityFile(home); err == nil && k.MachineID == id.MachineID && k.Binding == id.Binding {
		return home
	}
	if err := os.MkdirAll(filepath.Dir(home), 0o700); err != nil {
		return ""
	}
	if err := writeIdentity(home, id, true); err != nil {
		return ""
	}
	return home
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
